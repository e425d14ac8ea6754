"""The linear 2-cycle search (reference/fries/two_cycles.py) finds a 2-cycle exactly when the
exact BFS search (reference/fries/cycles.py, itself checked against the spec's brute force in
test_fries_serializability.py) says the shortest cycle has length 2, on schedules too large
for brute force; its edges are real conflicts in the cited order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reference.fries.compact import CompactSchedule, compact_from_schedule
from reference.fries.serializability import compressed_graph, longer_cycle, check_compact
from reference.fries.two_cycles import shortest_two_cycle
from spec.fries.schedule import Operation, Schedule


@st.composite
def medium_schedules(draw: st.DrawFn) -> Schedule:
    """Up to 30 data transactions and 6 updates over up to 6 objects, updates placed at
    random positions (so cycles of every length and many 2-cycles occur)."""
    data = [f"t{i}" for i in range(draw(st.integers(1, 30)))]
    updates = [f"R{i}" for i in range(draw(st.integers(1, 6)))]
    logs = {}
    for k in range(draw(st.integers(1, 6))):
        ops = [Operation(t) for t in draw(st.lists(st.sampled_from(data), max_size=12))]
        for u in draw(st.sets(st.sampled_from(updates))):
            ops.insert(draw(st.integers(0, len(ops))), Operation(u, True))
        logs[f"O{k}"] = tuple(ops)
    return Schedule(logs)


@settings(max_examples=400)
@given(medium_schedules())
def test_two_cycle_found_iff_shortest_is_two(schedule: Schedule) -> None:
    compact = compact_from_schedule(schedule)
    graph = compressed_graph(compact)
    found = shortest_two_cycle(compact, graph.before & graph.after)
    if found is not None:
        assert len(found) == 2
        (a, b, *_), (c, d, *_) = found
        assert (a, b) == (d, c) and a != b
        for before, after, obj, p, q in found:
            log = schedule.logs[obj]
            assert p < q and log[p].txn == compact.names[before]
            assert log[q].txn == compact.names[after] and (log[p].update or log[q].update)
    if graph.nodes.size and (found is not None or _has_cycle(compact)):
        exact = longer_cycle(compact, graph)
        assert (len(exact) == 2) == (found is not None)


def _has_cycle(compact: CompactSchedule) -> bool:
    return not check_compact(compact).serializable
