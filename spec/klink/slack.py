"""The cost of queued events and the slack of a query (Klink Eq. 1, §3, §3.3).

A query's pipeline is a chain of operators, each with a mean *selectivity* ``S_i`` (output
events per input event) and a mean per-event processing *cost* ``c_i`` (seconds), as Klink
collects them at runtime (§3, "cost is estimated by considering both selectivity and
operator processing time", after [33]).

Interpretation choice (the paper gives no formula for ``cost^q(t)``): an event queued in
front of operator ``k`` costs ``sum_{i >= k} c_i * prod_{k <= j < i} S_j`` to push to the end
of the pipeline (each downstream operator sees, in expectation, the selected fraction of it),
and ``cost^q(t)`` sums that over every queued event.

Slack (Eq. 1): ``sl^q(t) = (w^q_{n+1} - t) - cost^q(t)``, where ``w^q_{n+1}`` is the ingestion
time of the next SWM: the idle time the query can still afford before its queued work makes
it miss the SWM. Joins (§3.3): one slack per input stream, and the query's slack is the
minimum over its inputs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

from spec.errors import InputError


@dataclass(frozen=True)
class Stage:
    """One operator of a query pipeline: mean ``selectivity`` and per-event ``cost`` (s)."""

    selectivity: float
    cost: float

    def __post_init__(self) -> None:
        if self.selectivity < 0:
            raise InputError(f"selectivity must be >= 0, got {self.selectivity}", "stage")
        if self.cost < 0:
            raise InputError(f"cost must be >= 0, got {self.cost}", "stage")


def event_cost(stages: Sequence[Stage], start: int = 0) -> float:
    """Expected time to push one event queued in front of ``stages[start]`` through the rest of
    the pipeline: ``sum_{i >= start} c_i * prod_{start <= j < i} S_j``."""
    total = 0.0
    reach = 1.0
    for stage in stages[start:]:
        total += reach * stage.cost
        reach *= stage.selectivity
    return total


def queued_cost(stages: Sequence[Stage], queued: Sequence[float]) -> float:
    """``cost^q(t)``: the cost of every queued event, ``queued[k]`` events waiting in front of
    ``stages[k]`` (Klink §3)."""
    if len(queued) != len(stages):
        raise InputError(f"{len(queued)} queue sizes for {len(stages)} stages", "queued")
    return sum(n * event_cost(stages, k) for k, n in enumerate(queued))


def slack(next_swm: float, now: float, cost: float) -> float:
    """Klink Eq. 1: ``(w_{n+1} - t) - cost^q(t)``."""
    return (next_swm - now) - cost


def join_slack(per_input: Sequence[float]) -> float:
    """Klink §3.3: a windowed join's slack is the minimum of its inputs' slacks."""
    if not per_input:
        raise InputError("a query has at least one input stream", "inputs")
    return min(per_input)


def least_slack(slacks: Sequence[float]) -> int:
    """Klink Alg. 1 KlinkEvaluator: the index of the query with the least slack (the first
    such index on ties). Interpretation choice: Alg. 1 starts from ``min_sl = 0`` and so
    would return no query when every slack is positive; we always return the minimum, which
    is what §3 describes ("the query with least slack is then selected")."""
    if not slacks:
        raise InputError("no query to choose from", "queries")
    best = 0
    for index, value in enumerate(slacks):
        if value < slacks[best]:
            best = index
    return best
