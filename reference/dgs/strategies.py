"""Hypothesis strategies for DGS: valid synchronization plans, arbitrary plans, and valid
input instances (Def. 3.1-3.3). Used by the tests and by the conformance suite.

:func:`valid_plans` builds P-valid plans by construction, top-down: at each worker it keeps a
random subset of the implementation tags (and every tag neither child type accepts), splits
the rest along the connected components of the dependence graph (different components are
independent, so V2 holds between the two sides) and gives each component to a side whose
state type accepts it (V1), keeping it when neither does.
"""

from __future__ import annotations

from itertools import count
from typing import Any, Callable, Sequence

from hypothesis import strategies as st

from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program
from spec.dgs.streams import Heartbeat, ImplTag, Item, StreamEvent

Draw = Callable[[st.SearchStrategy[Any]], Any]


def impl_universe(program: Program, streams: Sequence[str]) -> list[ImplTag]:
    """Every ``(tag, stream)`` pair, in a deterministic order."""
    return [(tag, s) for s in streams for tag in program.sorted_tags]


def components(program: Program, impls: Sequence[ImplTag]) -> list[list[ImplTag]]:
    """Connected components of the dependence graph on ``impls`` (deterministic order)."""
    remaining = list(impls)
    result: list[list[ImplTag]] = []
    while remaining:
        component = [remaining.pop(0)]
        frontier = list(component)
        while frontier:
            current = frontier.pop()
            linked = [o for o in remaining if program.depends(current[0], o[0])]
            for other in linked:
                remaining.remove(other)
            component += linked
            frontier += linked
        result.append(component)
    return result


@st.composite
def valid_plans(draw: Draw, program: Program, streams: Sequence[str], max_depth: int = 3) -> Plan:
    """A P-valid plan handling every implementation tag of ``streams``."""
    ids = count()

    def build(impls: list[ImplTag], state_type: str, depth: int) -> Worker:
        worker_id = f"w{next(ids)}"
        pairs = program.fork_join_pairs(state_type)
        if depth == 0 or not pairs or not draw(st.booleans()):
            return Worker(worker_id, state_type, frozenset(impls))
        fork, join = draw(st.sampled_from(pairs))
        left_pred = program.state_types[fork.left].pred
        right_pred = program.state_types[fork.right].pred
        flags = draw(st.lists(st.booleans(), min_size=len(impls), max_size=len(impls)))
        keep = [t for t, k in zip(impls, flags) if k or t[0] not in left_pred | right_pred]
        rest = [t for t in impls if t not in keep]
        left: list[ImplTag] = []
        right: list[ImplTag] = []
        for part in components(program, rest):
            tags = {t for t, _ in part}
            fits = [side for side, pred in ((left, left_pred), (right, right_pred)) if tags <= pred]
            if not fits:
                keep += part
            else:
                fits[draw(st.integers(0, len(fits) - 1))].extend(part)
        children = (build(left, fork.left, depth - 1), build(right, fork.right, depth - 1))
        return Worker(worker_id, state_type, frozenset(keep), fork.name, join.name, children)

    return Plan(build(impl_universe(program, streams), program.initial, max_depth))


@st.composite
def arbitrary_plans(draw: Draw, program: Program, streams: Sequence[str], max_depth: int = 2) -> Plan:
    """A plan that may violate V1 or V2 (random tags, types, forks and joins)."""
    universe = impl_universe(program, streams)
    types = sorted(program.state_types) + ["NoSuchType"]
    forks = sorted(program.forks) + ["no_fork"]
    joins = sorted(program.joins) + ["no_join"]
    ids = count()

    def build(depth: int, root: bool) -> Worker:
        impls = draw(st.sets(st.sampled_from(universe), max_size=4))
        state_type = program.initial if root and draw(st.booleans()) else draw(st.sampled_from(types))
        worker_id = f"w{next(ids)}"
        if depth == 0 or draw(st.booleans()):
            return Worker(worker_id, state_type, frozenset(impls))
        children = (build(depth - 1, False), build(depth - 1, False))
        return Worker(worker_id, state_type, frozenset(impls), draw(st.sampled_from(forks)), draw(st.sampled_from(joins)), children)

    return Plan(build(max_depth, True))


@st.composite
def input_instances(
    draw: Draw, program: Program, streams: Sequence[str], max_events: int = 12
) -> dict[str, list[Item]]:
    """A valid input instance (Def. 3.3) on ``streams``: events from the program's
    ``events()`` and heartbeats, timestamps strictly increasing per stream, and a final
    heartbeat on every stream after the last item (progress)."""
    items: dict[str, list[Item]] = {s: [] for s in streams}
    ts = 0
    for _ in range(draw(st.integers(0, max_events))):
        ts += draw(st.integers(1, 3))
        stream = draw(st.sampled_from(list(streams)))
        if draw(st.integers(0, 4)) == 0:
            items[stream].append(Heartbeat(ts))
        else:
            items[stream].append(StreamEvent(ts, draw(program.event_strategy)))
    for stream in streams:
        items[stream].append(Heartbeat(ts + 1))
    return items
