"""One O+ instance's round (``spark_impl.oplus.instance``), without Spark: the promises of its
module docstring that no run's outputs show.

* "WT multi keeps one accumulator per window instance ``{L: acc}``; WT single keeps one chain
  per key ``[L, [(ts, lifted), ...]]`` shifted by f_S at expiry" (the key states are what the
  live front end checkpoints and hands over: a durable layout; both WTs emit the same outputs
  for the commutative aggregates, so only the state tells them apart);
* bounded state: every window instance with ``L + WS <= W`` is emitted and dropped, a WT single
  chain "is dropped when empty", ScaleJoin's tuples are "purged when ``ts + WS <= W``", forward
  "keeps nothing" (an empty entry left per key changes no output, only the state's size);
* WT single shift (``_drain_chain``: "Output and shift (f_S) the chain while its instance is
  expired", STRETCH Alg. 2 forwardAndShift: the next instance is the earliest one holding a
  remaining tuple), on epoch-millisecond gaps;
* an instance "updates only the keys it owns under the scenario's current key -> instance
  mapping ``crc32(key) % parallelism``", at every parallelism a scenario allows
  (``spec.oplus.budget.MAX_PARALLELISM``);
* typed keys (``OperatorConfig.typed_keys``: "sliding-sum: the key field as is (any type)"; the
  live path routes them by ``route_key``);
* the seeded fault ``drop-near-watermark``: "a tuple whose ts *equals* the previous round's
  watermark is dropped as late"; without the fault nothing at or above it is dropped.
"""

from __future__ import annotations

import math
from typing import Any

import pytest

from spec.oplus.budget import MAX_PARALLELISM
from spec.oplus.scenario import parse_scenario

from spark_impl.oplus.instance import ScenarioRound, owners, process
from spark_impl.oplus.operators import Item, OperatorConfig
from spark_impl.oplus.streaming_jobs import route_key

from support.oplus_keys import key_of_instance

WA, WS, WATERMARK = 2, 4, 3
TUPLES = [(ts, ts + 1) for ts in range(6)]  # (ts, value) of one key "k"


def _one_key_scenario(wt: str) -> dict[str, Any]:
    return {"operator": "sliding-sum", "WA": WA, "WS": WS, "WT": wt, "parallelism": 1,
            "inputs": [[{"ts": ts, "key": "k", "value": value} for ts, value in TUPLES]]}


def _documented_state(wt: str) -> Any:
    """The key state of ``"k"`` after one round to :data:`WATERMARK`, from Def. 1: instances
    ``L`` on the WA grid with ``L <= ts < L + WS``, expired when ``L + WS <= W``."""
    lefts = {left for ts, _ in TUPLES for left in range(ts - WS + 1, ts + 1) if left % WA == 0}
    open_lefts = sorted(left for left in lefts if left + WS > WATERMARK)
    if wt == "multi":
        return {left: sum(v for ts, v in TUPLES if left <= ts < left + WS) for left in open_lefts}
    start = open_lefts[0]  # the chain shifted past the expired instances, entries before it purged
    return [start, [(ts, v) for ts, v in TUPLES if ts >= start]]


@pytest.mark.parametrize("wt", ["multi", "single"])
def test_a_key_state_has_the_documented_layout_of_its_window_type(wt: str) -> None:
    op = OperatorConfig.of(parse_scenario(_one_key_scenario(wt)))
    assert op.single == (wt == "single")
    items: list[tuple[int, Item]] = [(0, (ts, 0, i, {"key": "k", "value": value}))
                                     for i, (ts, value) in enumerate(TUPLES)]
    state, _ = process(0, {}, items, {0: ScenarioRound(op, 1, previous=-math.inf, watermark=WATERMARK)})
    assert state[0]["k"] == _documented_state(wt)


def _operators() -> list[tuple[OperatorConfig, list[dict[str, Any]]]]:
    """Every operator and WT with the fields of a tuple of each source."""
    text = [{"text": "a #b c"}, {"text": "#b d"}]
    found: list[tuple[OperatorConfig, list[dict[str, Any]]]] = []
    for single in (False, True):
        found += [(OperatorConfig("sliding-sum", 2, 4, single), [{"key": "k", "value": 1}, {"key": "j", "value": 2}]),
                  (OperatorConfig("wordcount", 2, 4, single), text),
                  (OperatorConfig("paircount", 2, 4, single), text),
                  (OperatorConfig("longest-tweet", 2, 4, single), text)]
    return found + [(OperatorConfig("scalejoin", 1, 3, False, keys=2, band=1), [{"x": 1, "y": 1}, {"a": 1, "b": 2}]),
                    (OperatorConfig("forward", 1, 1, False, keys=2), [{"value": 1}, {"value": 2}])]


@pytest.mark.parametrize("op, fields", _operators(),
                         ids=[f"{op.name}-{'single' if op.single else 'multi'}" for op, _ in _operators()])
@pytest.mark.parametrize("watermark", ["end of stream", "past every window"])
def test_the_state_is_empty_once_every_window_closed(op: OperatorConfig, fields: list[dict[str, Any]],
                                                     watermark: str) -> None:
    items: list[tuple[int, Item]] = [(0, (ts, source, ts, fields[source])) for ts in (3, 5, 10) for source in (0, 1)]
    w = math.inf if watermark == "end of stream" else 10 + op.ws + op.wa
    state, outputs = process(0, {}, items, {0: ScenarioRound(op, 1, -math.inf, w)})
    assert state == {}
    assert outputs  # the windows were emitted, not lost


def test_a_wt_single_chain_shifts_to_the_next_tuples_instance_in_one_step() -> None:
    """Tuples at 0 and 10**12 (an epoch-millisecond gap), WA 1, WS 2, one round to the
    watermark 10**12: instances -1 and 0 hold ts 0 and close; the chain moves to 10**12 - 1,
    the earliest instance of ts 10**12 (shifting WA by WA would take 10**12 steps)."""
    gap = 10**12
    op = OperatorConfig("sliding-sum", 1, 2, single=True)
    items: list[tuple[int, Item]] = [(0, (0, 0, 0, {"key": "k", "value": 1})),
                                     (0, (gap, 0, 1, {"key": "k", "value": 2}))]
    state, outputs = process(0, {}, items, {0: ScenarioRound(op, 1, -math.inf, gap)})
    assert state == {0: {"k": [gap - 1, [(gap, 2)]]}}
    assert sorted(outputs) == [(0, 1, "k", 1), (0, 2, "k", 1)]


@pytest.mark.parametrize("size", [1, 5, MAX_PARALLELISM])
def test_an_instance_updates_exactly_the_keys_it_owns(size: int) -> None:
    key, home = key_of_instance(size // 2, size, size)
    op = OperatorConfig("sliding-sum", 1, 1, single=False)
    plans = {0: ScenarioRound(op, size, -math.inf, math.inf)}
    item: list[tuple[int, Item]] = [(0, (5, 0, 0, {"key": key, "value": 3}))]
    _, mine = process(home, {}, list(item), plans)
    assert mine == [(0, 6, key, 3)]
    if size > 1:
        state, other = process((home + 1) % size, {}, list(item), plans)
        assert other == [] and state == {}


TYPED_KEYS: tuple[Any, ...] = (7, -3, (1, "a"), (1, None), (1, 2), True)


@pytest.mark.parametrize("size", [1, 4])
def test_typed_sliding_sum_keys_are_owned_by_route_key_and_keep_their_type(size: int) -> None:
    op = OperatorConfig("sliding-sum", 2, 2, single=False, typed_keys=True)
    items: list[tuple[int, Item]] = [(0, (1, 0, i, {"key": key, "value": i + 1})) for i, key in enumerate(TYPED_KEYS)]
    plans = {0: ScenarioRound(op, size, -math.inf, math.inf, route=route_key)}
    emitted = {index: [key for _, _, key, _ in process(index, {}, list(items), plans)[1]] for index in range(size)}
    for key in TYPED_KEYS:
        home = route_key(key, size)
        assert owners({"key": key, "value": 1}, op, size, route_key) == {home}
        holders = [j for j, keys in emitted.items() for k in keys if k == key and type(k) is type(key)]
        assert holders == [home], (key, emitted)


@pytest.mark.parametrize("faulty", [False, True])
@pytest.mark.parametrize("ts", [10, 11])
def test_drop_near_watermark_drops_exactly_the_tuples_at_the_previous_watermark(faulty: bool, ts: int) -> None:
    """A watermark promises ``ts >= W``: a tuple at 10 or 11 after the watermark 10 is on time;
    the seeded fault drops the one at exactly 10, nothing else, and only when switched on."""
    op = OperatorConfig("sliding-sum", 2, 4, False)
    plan = ScenarioRound(op, 1, previous=10, watermark=12, drop_near_watermark=faulty)
    state, outputs = process(0, {}, [(0, (ts, 0, 0, {"key": "k", "value": 1}))], {0: plan})
    dropped = not state and not outputs
    assert dropped == (faulty and ts == 10)
