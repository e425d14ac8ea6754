"""Enorm: partial-window (pane) results equal direct window computation, for any split of the
records over nodes, and in the streaming engine before and after instant migrations of key
groups (no state moved)."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings, strategies as st

from spec.enorm.migration import Migration, active_windows, expansion_ends, group_of, route
from spec.enorm.panes import Monoid, Record, compute, consolidate, direct_results, pane_size
from spec.oplus.windows import WindowSpec
from reference.enorm.engine import EnormJob, Modification, Punctuation

MONOIDS: dict[str, Monoid[Any]] = {
    "sum": Monoid(0, lambda r: r.value, lambda a, b: a + b, lambda s: s),
    "max": Monoid(None, lambda r: r.value,
                  lambda a, b: b if a is None else a if b is None else max(a, b), lambda s: s),
    "count": Monoid(0, lambda r: 1, lambda a, b: a + b, lambda s: s),
    "bag": Monoid((), lambda r: (r.value,), lambda a, b: tuple(sorted(a + b)), lambda s: s),
}


@st.composite
def specs(draw: Any) -> WindowSpec:
    wa = draw(st.integers(1, 6))
    return WindowSpec(wa, draw(st.integers(wa, 14)))


@st.composite
def record_lists(draw: Any) -> list[Record]:
    times = sorted(draw(st.lists(st.integers(0, 40), max_size=25)))
    return [Record(draw(st.sampled_from("abcde")), ts, draw(st.integers(-5, 9))) for ts in times]


@settings(max_examples=200)
@given(specs(), st.sampled_from(sorted(MONOIDS)), record_lists(), st.data())
def test_consolidated_partials_equal_direct_for_any_split(spec: WindowSpec, name: str,
                                                          records: list[Record], data: Any) -> None:
    monoid = MONOIDS[name]
    nodes = [data.draw(st.integers(0, 2)) for _ in records]
    partials = [p for n in range(3)
                for p in compute(spec, monoid, [r for r, m in zip(records, nodes) if m == n], n)]
    assert consolidate(spec, monoid, partials) == direct_results(spec, monoid, records)


def _stream(records: list[Record], data: Any, groups: int, nodes: int) -> tuple[list[Any], int]:
    items: list[Any] = []
    migrations = 0
    for index, record in enumerate(records):
        if data.draw(st.integers(0, 4)) == 0:
            previous = records[index - 1].ts if index else 0
            items.append(Punctuation(data.draw(st.integers(previous, record.ts))))
        if data.draw(st.integers(0, 5)) == 0:
            moves = {data.draw(st.integers(0, groups - 1)): data.draw(st.integers(0, nodes))}
            items.append(Modification(moves))
            migrations += 1
        items.append(record)
    return items, migrations


@settings(max_examples=200)
@given(specs(), st.sampled_from(sorted(MONOIDS)), record_lists(), st.integers(1, 6),
       st.integers(1, 3), st.data())
def test_engine_equals_direct_before_and_after_migrations(spec: WindowSpec, name: str,
                                                          records: list[Record], groups: int,
                                                          nodes: int, data: Any) -> None:
    monoid = MONOIDS[name]
    initial = {g: data.draw(st.integers(0, nodes - 1)) for g in range(groups)}
    expected = direct_results(spec, monoid, records)
    plain = EnormJob(spec, monoid, groups, dict(initial)).run(records)
    assert plain == expected
    items, _ = _stream(records, data, groups, nodes)
    job = EnormJob(spec, monoid, groups, dict(initial))
    assert job.run(items) == expected
    # the records are computed where the assignment in force routes them (spec.route)
    positions = [i for i, item in enumerate(items) if isinstance(item, Record)]
    migrations = []
    for i, item in enumerate(items):
        if isinstance(item, Modification):
            migrations.append(Migration(sum(1 for p in positions if p < i), item.moves))
    owners = route(records, groups, initial, migrations)
    partials = [p for node in set(owners)
                for p in compute(spec, monoid,
                                 [r for r, o in zip(records, owners) if o == node], node)]
    assert consolidate(spec, monoid, partials) == expected
    # §6.2: at each modification punctuation the completed windows are exactly those ready
    # at the last timestamp punctuation before it; all others are active
    last, seen = float("-inf"), 0
    for item in items:
        if isinstance(item, Punctuation):
            last = max(last, item.ts)
        elif isinstance(item, Modification):
            ready = {w for w in expected if spec.expired(w[1], last)}
            assert job.stats.completed_at_modification[seen] == ready
            assert not ready & active_windows(spec, sorted({w[0] for w in expected}), last, 80)
            seen += 1


def test_instant_migration_moves_no_state() -> None:
    spec, monoid = WindowSpec(2, 6), MONOIDS["sum"]
    job = EnormJob(spec, monoid, 2, {0: "A", 1: "A"})
    records = [Record(k, ts, 1) for ts in range(6) for k in "ab"]
    for r in records[:6]:
        job.feed(r)
    before = {n: dict(node.partials) for n, node in job.nodes.items()}
    group = group_of("a", 2)
    job.feed(Modification({group: "B"}))
    assert {n: dict(node.partials) for n, node in job.nodes.items() if n in before} == before
    assert job.nodes["B"].partials == {}
    for r in records[6:]:
        job.feed(r)
    assert any(k == "a" for k, _ in job.nodes["B"].partials)  # a's new tuples land on B
    assert any(k == "a" for k, _ in job.nodes["A"].partials)  # a's old partials stay on A
    assert job.stats.max_nodes_per_group == 2  # the temporary key expansion
    job.feed(Punctuation(float("inf")))
    assert job.consolidator.results == direct_results(spec, monoid, records)


@given(specs(), st.integers(-20, 40))
def test_expansion_ends_when_no_open_window_holds_an_old_pane(spec: WindowSpec, m: int) -> None:
    end = expansion_ends(spec, m)
    size = pane_size(spec)
    first = ((m - 3 * spec.WS) // size) * size
    old_panes = [p for p in range(first, m, size)]  # every pane starting before m
    holding = {left for p in old_panes for left in spec.lefts_of(p)}
    assert max(left + spec.WS for left in holding) == end


@given(specs(), st.integers(-5, 40))
def test_active_windows_are_the_unexpired_ones(spec: WindowSpec, punctuation: int) -> None:
    active = active_windows(spec, ["k"], punctuation, 60)
    for left in range(spec.earliest_left(0), 60, spec.WA):
        assert (("k", left) in active) == (left + spec.WS > punctuation)
