"""What one ``streamproof conformance`` run is asked to do, and what each suite of it is asked.

:class:`RunConfig` holds the command's options. :mod:`conformance.run` hands every suite the
same type, narrowed to that suite (:meth:`RunConfig.for_suite`: its name alone in ``suites``,
its number of cases, the resolved engine and the seeded faults meant for it), so the options a
suite reads have one definition.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from conformance.core.shrink import DEFAULT_BUDGET

SUITES = ("fries", "dgs", "oplus")
"""The catalogue suites a run can select (``--suite``), in the order they run."""


@dataclass(frozen=True)
class RunConfig:
    """One ``streamproof conformance`` run (``cases`` None: each suite's default number)."""

    suites: tuple[str, ...] = SUITES
    cases: int | None = None
    seed: int = 0
    engine: str = "auto"
    faults: frozenset[str] = frozenset()
    batch_size: int = 200
    save_dir: str | None = None
    shrink_budget: int = DEFAULT_BUDGET
    scheduler: str = "fries"
    spark: Any = field(default=None, compare=False)

    def for_suite(self, suite: str, cases: int, engine: str, faults: frozenset[str]) -> "RunConfig":
        """This run as the one suite ``suite`` is asked to do: ``cases`` cases on ``engine``
        (resolved, never ``auto``) with ``faults`` (the ones seeded where that suite runs)."""
        return replace(self, suites=(suite,), cases=cases, engine=engine, faults=faults)

    @property
    def case_count(self) -> int:
        """The number of cases of a run narrowed by :meth:`for_suite` (ValueError before)."""
        if self.cases is None:
            raise ValueError("a suite is asked for a number of cases: narrow the run with for_suite first")
        return self.cases
