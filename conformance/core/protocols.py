"""The three roles of the harness, as the families (Fries, DGS, O+) already fill them.

* An :class:`Engine` runs a **batch** of cases and returns one observation per case, in
  order. One call is one batch (for Spark: one batch of jobs in one session), which is why
  the unit is a batch and not a case. A case the engine crashed or hung on is an observation
  too (a :class:`~conformance.core.crashes.Crash`, or the family's failed outcome), never an
  exception out of the call: the oracles judge it as an ``engine`` failure.
* An :class:`Oracle` judges **one** case and its observation and returns the
  :class:`~conformance.core.verdict.Verdict` of every oracle it judged, in order (a failed
  ``engine`` verdict alone when the observation is a crash).
* A :class:`Suite` is what each family's ``suite`` module provides to the one module that
  picks suites (:mod:`conformance.run`) and to replay (:mod:`conformance.replay`): run its
  checks on the batch engines, run them on the live front ends, and replay a saved case.

These are declarations of what exists, checked by mypy where the families meet them (the
engines' factories return :class:`Engine`, each ``oracles`` module names its :class:`Oracle`,
:mod:`conformance.run` keeps a registry typed :class:`Suite`); a family is free in how it
draws, shrinks and saves its cases.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, TypeVar

from conformance.core.results import Progress, SuiteResult
from conformance.core.run_config import RunConfig
from conformance.core.verdict import Verdict

CaseIn = TypeVar("CaseIn", contravariant=True)
SeenOut = TypeVar("SeenOut", covariant=True)
SeenIn = TypeVar("SeenIn", contravariant=True)


class Engine(Protocol[CaseIn, SeenOut]):
    """Runs a batch of cases: one observation per case, in order (module docstring)."""

    def __call__(self, cases: Sequence[CaseIn], /) -> Sequence[SeenOut]:
        """Run every case of the batch."""
        ...


class Oracle(Protocol[CaseIn, SeenIn]):
    """Judges one case's observation: the verdict of every oracle judged, in order."""

    def __call__(self, case: CaseIn, observed: SeenIn, /) -> tuple[Verdict, ...]:
        """The verdicts on ``observed``, the run of ``case``."""
        ...


class Suite(Protocol):
    """A family's suite (module docstring); each family's ``suite`` module satisfies it."""

    def run(self, request: RunConfig, progress: Progress | None, /) -> SuiteResult:
        """Every check of the suite with ``request.engine`` (``spark`` or ``reference``);
        ``request`` is the run narrowed to this suite (:meth:`RunConfig.for_suite`)."""
        ...

    def run_live(self, request: RunConfig, progress: Progress | None, /) -> SuiteResult:
        """The suite through the live front ends (``--engine spark-streaming``)."""
        ...

    def replay(self, record: dict[str, Any], faults: frozenset[str] | None, /) -> tuple[bool, str]:
        """Run a saved case again (``faults`` None: the recorded ones): (passes, explanation)."""
        ...
