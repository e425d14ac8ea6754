"""Every configuration up to a bound, per scheduler: the rows of ``streamproof modelcheck``.

Domains: ``fries`` (Alg. 4), ``fries-alg3``, ``epoch`` and ``naive`` run on every
configuration of :func:`proofs.fries.modelcheck.configs.configurations`; ``fries-alg2`` on
the one-to-one ones (no one-to-many or replicate operator: Theorem 5.8's domain; on the
others Alg. 2 fails by design, Fries §6.1, which the Z3 row "Alg. 2 on one-to-many dataflows"
shows). Expected: no violation for the Fries variants and epoch (Theorems 5.8, 6.4; Lemma
4.10), a violation for naive (§4.1, Fig. 2).

The reported counterexample of a row is the one with the fewest objects, then the shortest
trace (each configuration's search is breadth first).
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Callable, Iterable

from proofs.fries.modelcheck.configs import Config, configurations
from proofs.fries.modelcheck.control import SCHEDULERS, build_objects, control_for
from proofs.fries.modelcheck.search import Counterexample, explore

#: Schedulers expected to have a violation.
EXPECTED_VIOLATION = frozenset({"naive"})


@dataclass(frozen=True)
class Row:
    """One scheduler's result (the ``--json`` row plus the counterexample's dataflow)."""

    scheduler: str
    max_operators: int
    dags: int
    states: int
    violations: int
    seconds: float
    counterexample: Counterexample | None
    config: Config | None

    @property
    def as_expected(self) -> bool:
        """A violation exactly for the schedulers expected to fail."""
        return (self.violations > 0) == (self.scheduler in EXPECTED_VIOLATION)

    def to_json(self) -> dict[str, Any]:
        """``{"scheduler", "max_operators", "dags", "states", "violations", "seconds",
        "counterexample"}``; the counterexample (or null) holds ``dataflow`` (with
        ``workers`` and ``reconfigured``), ``trace``, ``schedule``, ``cycle``,
        ``explanation``."""
        cex = None
        if self.counterexample is not None and self.config is not None:
            cex = {"dataflow": self.config.to_json(), **self.counterexample.to_json()}
        return {"scheduler": self.scheduler, "max_operators": self.max_operators,
                "dags": self.dags, "states": self.states, "violations": self.violations,
                "seconds": round(self.seconds, 3), "counterexample": cex}


def in_domain(scheduler: str, config: Config) -> bool:
    """Does ``scheduler``'s claim cover ``config`` (module docstring)?"""
    return scheduler != "fries-alg2" or config.one_to_one()


def check(scheduler: str, max_operators: int, *, tuples: int = 1, align_on_any: bool = False,
          configs: Iterable[Config] | None = None,
          progress: Callable[[int], None] | None = None) -> Row:
    """Explore every configuration with at most ``max_operators`` objects under
    ``scheduler`` (``align_on_any``: the planted alignment bug, for the tests)."""
    if scheduler not in SCHEDULERS:
        raise ValueError(f"unknown scheduler {scheduler!r}")
    start = time.perf_counter()
    dags = states = violations = 0
    best: tuple[int, int, Counterexample, Config] | None = None
    for config in (configurations(max_operators) if configs is None else configs):
        if not in_domain(scheduler, config):
            continue
        objects = build_objects(config)
        outcome = explore(objects, control_for(scheduler, objects, align_on_any=align_on_any),
                          tuples)
        dags += 1
        states += outcome.states
        if progress is not None:
            progress(dags)
        cex = outcome.counterexample
        if cex is None:
            continue
        violations += 1
        rank = (len(objects.names), len(cex.steps))
        if best is None or rank < best[:2]:
            best = (rank[0], rank[1], cex, config)
    return Row(scheduler, max_operators, dags, states, violations,
               time.perf_counter() - start, best[2] if best else None,
               best[3] if best else None)
