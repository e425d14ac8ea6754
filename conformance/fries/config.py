"""How one run of the Fries suite is configured (:class:`FriesConfig`).

Shared by the case sections (:mod:`conformance.fries.cases.sections`), the further checks and
the suite, so none of them imports the suite for it.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FriesConfig:
    """How to run the suite. ``engine`` is ``"spark"`` or ``"reference"``; ``faults`` are
    injected into it; ``save_dir`` receives the shrunk failing case (None: not saved)."""

    cases: int = 200
    seed: int = 0
    engine: str = "spark"
    scheduler: str = "fries"
    faults: frozenset[str] = frozenset()
    batch_size: int = 200
    race_fraction: float = 0.2
    race_batch_size: int = 8
    save_dir: str | None = None
    shrink_evaluations: int = 2000
    shrink_deadline_s: float = 240.0
    fail_fast: bool = False  # stop after the first batch with a failure, no shrinking (mutation runs)
