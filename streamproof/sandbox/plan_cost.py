"""What a plan costs on the Spark DGS executor, modelled without Spark, and the choice of
``inline_below`` (``dgs-plan``; docs/dgs.md "How dgs-plan chooses").

The model is the Spark driver's own cutting of the input (``spark_impl.dgs.driver``): with the
default tick every event is released in one tick, in key order; :func:`steps_of` cuts it into
steps (a leaf segment, then a synchronizing group of one worker) and
:func:`inline_short_segments` applies ``inline_below``. A plan's cost in *event units* is

* ``rounds``: the synchronizing groups - each one gather and one scatter (the joins and forks
  of the group's subtree), costing ``sync_cost`` events each;
* ``critical``: per step, the largest leaf's segment (leaves run in parallel) plus the events
  of the synchronizing group (processed at one worker),

``cost = sync_cost * rounds + critical``. :func:`choose_inline_below` tries ``0`` and every
value that inlines one more of the plan's leaf segments (its size + 1) and keeps the cheapest
(the smallest value on ties).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from spark_impl.dgs.driver import Pair, inline_short_segments, steps_of
from spark_impl.dgs.release import Released
from spark_impl.dgs.topology import Topology
from spec.dgs.program import Program
from spec.dgs.streams import StreamEvent, Streams, merged

MAX_CANDIDATES = 64


@dataclass(frozen=True)
class PlanCost:
    """One ``inline_below`` value's cost (module docstring)."""

    inline_below: int
    rounds: int
    critical: int
    cost: float

    def to_json(self) -> dict[str, Any]:
        """The JSON form."""
        return {"inline_below": self.inline_below, "rounds": self.rounds, "critical_events": self.critical,
                "cost": self.cost}


def released_in_order(program: Program, topo: Topology, streams: Streams) -> list[Released]:
    """Every event in key order with its responsible worker (one tick releases them all)."""
    result = []
    for key, stream, item in merged(streams):
        if isinstance(item, StreamEvent):
            tag = program.tag(item.payload)
            result.append(Released(key, tag, stream, item.payload, topo.worker_of(tag, stream)))
    return result


def plan_cost(topo: Topology, released: list[Released], below: int, sync_cost: float) -> PlanCost:
    """The cost of running ``released`` under ``topo`` with ``inline_below = below``."""
    steps = inline_short_segments(topo, steps_of(topo, released), below)
    rounds = sum(sync is not None for _, sync in steps)
    critical = sum(_step_events(step) for step in steps)
    return PlanCost(below, rounds, critical, sync_cost * rounds + critical)


def _step_events(step: Pair) -> int:
    segment, sync = step
    return max((len(events) for events in segment), default=0) + (len(sync[1]) if sync is not None else 0)


def choose_inline_below(topo: Topology, released: list[Released], sync_cost: float) -> tuple[PlanCost, list[PlanCost]]:
    """The cheapest ``inline_below`` and every candidate's cost (module docstring)."""
    sizes = sorted({sum(len(events) for events in segment) + 1 for segment, _ in steps_of(topo, released)[1:]})
    candidates = [plan_cost(topo, released, below, sync_cost) for below in [0, *sizes[:MAX_CANDIDATES]]]
    best = min(candidates, key=lambda c: (c.cost, c.inline_below))
    return best, candidates
