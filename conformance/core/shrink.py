"""Greedy delta debugging over a JSON value, with candidates evaluated in batches.

hypothesis shrinks inside its own test loop, one example at a time; a Spark engine runs a whole
batch of scenarios per job, so the suite shrinks a failing case itself: from the current
failing value, generate simpler candidates (largest simplifications first), run them in
batches, and move to the first candidate that still fails. Repeat until no candidate fails
(a 1-minimal value with respect to the candidate moves) or the budget is spent.

The moves are domain knowledge and live next to each domain (e.g.
:mod:`conformance.fries.cases.moves`); this module only knows the search.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Sequence, TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class ShrinkResult:
    """How shrinking went: the number of successful steps, of candidates run, and whether
    the budget stopped it before a minimum was reached."""

    steps: int
    evaluated: int
    exhausted_budget: bool


DEFAULT_BUDGET = 2000
"""``--shrink-budget``'s default: at most this many candidates run while shrinking one failure
(each suite may cap it lower)."""


def shrink(
    value: T,
    candidates: Callable[[T], Iterable[T]],
    still_fails: Callable[[Sequence[T]], Sequence[bool]],
    *,
    batch: int = 16,
    max_evaluations: int = 400,
    deadline_s: float | None = None,
) -> tuple[T, ShrinkResult]:
    """Shrink ``value`` (which fails) to a value no candidate of which fails.

    ``candidates(v)`` yields simpler variants of ``v``, most aggressive first;
    ``still_fails(batch)`` runs a batch and says which still fail."""
    start = time.monotonic()
    evaluated = steps = 0
    current = value
    seen: set[str] = set()
    while True:
        pending = [c for c in candidates(current) if _key(c) not in seen]
        moved = False
        for offset in range(0, len(pending), batch):
            if evaluated >= max_evaluations or (deadline_s is not None and time.monotonic() - start > deadline_s):
                return current, ShrinkResult(steps, evaluated, True)
            chunk = pending[offset: offset + batch]
            seen.update(_key(c) for c in chunk)
            verdicts = still_fails(chunk)
            evaluated += len(chunk)
            failing = [c for c, bad in zip(chunk, verdicts) if bad]
            if failing:
                current = failing[0]
                steps += 1
                moved = True
                break
        if not moved:
            return current, ShrinkResult(steps, evaluated, False)


def _key(value: object) -> str:
    """A canonical text of a candidate: a candidate already run is never run again."""
    return json.dumps(value, sort_keys=True, default=repr)
