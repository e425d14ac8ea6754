"""What every suite (fries, dgs, oplus) reports: the common result types and their JSON.

A suite runs cases, judges them with its oracles, shrinks the first failure and returns a
:class:`SuiteResult`. ``status`` is honest about what ran: ``"ran"`` or ``"unavailable"`` (a
piece the suite needs does not exist yet - the reason is in ``note``). A suite may also run
several *checks* (e.g. DGS: plan executor vs spec, and Spark vs spec); each check has its own
counts and its own status, so "reference checked, spark engine not available" is visible.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Callable

Progress = Callable[[int, int], None]
"""``progress(done, total)``: called as cases complete (the CLI draws a bar on stderr)."""


@dataclass
class CheckResult:
    """One differential check of a suite (e.g. "spark vs reference")."""

    name: str
    status: str = "ran"
    note: str | None = None
    cases: int = 0
    failed: int = 0
    oracle_failures: Counter[str] = field(default_factory=Counter)
    elapsed_s: float = 0.0

    def to_json(self) -> dict[str, Any]:
        """The check as a JSON object."""
        return {
            "name": self.name, "status": self.status, "note": self.note, "cases": self.cases,
            "failed": self.failed, "oracle_failures": dict(self.oracle_failures),
            "elapsed_s": round(self.elapsed_s, 3),
            "cases_per_s": round(self.cases / self.elapsed_s, 2) if self.elapsed_s > 0 else None,
        }


@dataclass
class FailureReport:
    """The first failing case of a check, shrunk: what failed, in words, and where the
    replayable case and its pytest regression file were saved. ``reproduced`` is False when
    the saved case passed when run on its own (a timing-dependent failure seen only inside
    its batch)."""

    check: str
    case_index: int
    oracles: tuple[str, ...]
    explanation: str
    original_size: int
    shrunk_size: int
    shrink_steps: int
    shrunk_case: dict[str, Any]
    replay_file: str | None = None
    pytest_file: str | None = None
    reproduced: bool = True

    def to_json(self) -> dict[str, Any]:
        """The failure as a JSON object (the shrunk case included)."""
        return {
            "check": self.check, "case": self.case_index, "oracles": list(self.oracles),
            "explanation": self.explanation, "original_size": self.original_size,
            "shrunk_size": self.shrunk_size, "shrink_steps": self.shrink_steps,
            "shrunk_case": self.shrunk_case, "replay_file": self.replay_file, "pytest_file": self.pytest_file,
            "reproduced_alone": self.reproduced,
        }


@dataclass
class SuiteResult:
    """Everything a suite run reports (see the module docstring)."""

    suite: str
    engine: str
    seed: int
    checks: list[CheckResult] = field(default_factory=list)
    failures: list[FailureReport] = field(default_factory=list)
    delays: list[float] = field(default_factory=list)
    delay_unit: str = ""
    features: Counter[str] = field(default_factory=Counter)
    faults: tuple[str, ...] = ()
    seconds: dict[str, float] = field(default_factory=dict)
    """Wall-clock seconds by part of the run (e.g. the Fries suite's entry paths), so the
    time budget can be traced to its parts."""

    @property
    def cases(self) -> int:
        """Cases run, over every check that ran."""
        return sum(c.cases for c in self.checks)

    @property
    def failed(self) -> int:
        """Failed cases, over every check."""
        return sum(c.failed for c in self.checks)

    @property
    def ran(self) -> bool:
        """True when at least one check ran."""
        return any(c.status == "ran" for c in self.checks)

    def to_json(self) -> dict[str, Any]:
        """The suite as a JSON object."""
        return {
            "suite": self.suite, "engine": self.engine, "seed": self.seed, "faults": list(self.faults),
            "cases": self.cases, "failed": self.failed,
            "checks": [c.to_json() for c in self.checks],
            "failures": [f.to_json() for f in self.failures],
            "delays": {"unit": self.delay_unit, "count": len(self.delays),
                       "mean": round(sum(self.delays) / len(self.delays), 3) if self.delays else None,
                       "max": max(self.delays) if self.delays else None},
            "features": dict(self.features),
            "seconds": {k: round(v, 1) for k, v in self.seconds.items()},
        }
