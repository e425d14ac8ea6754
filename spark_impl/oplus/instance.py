"""One O+ instance's work in one round (runs inside a Spark task; no Spark, no reference).

Partition ``j`` of the state RDD holds instance ``j`` of every scenario of the batch whose
parallelism is above ``j``: a :data:`PartitionState` ``{scenario: {key: key state}}``. A
round hands the instance (1) the tuples routed to it (SN style, STRETCH Alg. 1: one copy per
responsible instance) and (2) the round's watermark; the instance

* processes its tuples in TB order ``(ts, source, position)``, updating only the keys it owns
  under the scenario's current key -> instance mapping ``crc32(key) % parallelism``
  (``spec.oplus.scenario.instance_of``);
* then expires every window instance with ``L + WS <= W`` (the project's expiry rule,
  spec.oplus.windows), emitting ``(ts = L + WS, key, value)``.

Key states: WT multi keeps one accumulator per window instance ``{L: acc}``; WT single keeps
one chain per key ``[L, [(ts, lifted), ...]]`` shifted by f_S at expiry (Alg. 2
forwardAndShift: entries before the new left boundary are purged, the chain is dropped when
empty); ScaleJoin keeps the tuples stored under the key, purged when ``ts + WS <= W``;
forward keeps nothing.

Tuples of a later round may have smaller timestamps than tuples of an earlier round (they come
from another source), never below the previous round's watermark; both aggregate folds are
commutative and a ScaleJoin pair is matched by whichever tuple is processed second, so the
outputs do not depend on the cut into rounds (checked by the differential tests).

Seeded fault ``drop-near-watermark``: a tuple whose ts *equals* the previous round's watermark
is dropped as late (the correct test is ``ts < W``, which never fires: a watermark promises
``ts >= W``); for a catalogue and a user-defined operator alike, as is ``window-off-by-one``
(``OperatorConfig.off_by_one``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

from spec.oplus.scenario import instance_of

from spark_impl.oplus.operators import (
    AGGREGATES, Item, OperatorConfig, band_match, earliest_left, in_window, keys_of, lefts_of,
    lift, match_value, merge, storage_key,
)
from spark_impl.oplus.user_operator import UserOperator, run_user

PartitionState = dict[int, dict[str, Any]]
"""``{scenario index: {key: key state}}`` of one partition (= one instance per scenario)."""

Output = tuple[int, int, str, Any]
"""``(scenario index, ts, key, value)``."""


@dataclass(frozen=True)
class ScenarioRound:
    """What the driver tells every instance of one scenario for one round."""

    op: OperatorConfig
    parallelism: int
    previous: float  # the watermark of the previous round (-inf at the start)
    watermark: float  # the watermark after this round (+inf at the end of the stream)
    drop_near_watermark: bool = False  # seeded fault
    route: Callable[[Any, int], int] = instance_of  # f_mu (the live front end: spark_impl.keys.route)
    user: UserOperator | None = None  # a user-defined O+ (the live front end; ``op`` then only names its windows)


def process(index: int, state: PartitionState, items: list[tuple[int, Item]],
            plans: dict[int, ScenarioRound]) -> tuple[PartitionState, list[Output]]:
    """Run one round of instance ``index`` for every scenario in ``plans``."""
    by_scenario: dict[int, list[Item]] = {}
    for scenario, item in items:
        by_scenario.setdefault(scenario, []).append(item)
    outputs: list[Output] = []
    for scenario, plan in plans.items():
        keys = state.setdefault(scenario, {})
        emitted: list[tuple[int, str, Any]] = []
        if plan.user is not None:  # a user-defined O+: spark_impl.oplus.user_operator
            mine = by_scenario.get(scenario, [])
            if plan.drop_near_watermark:  # the seeded bug, as for the catalogue below
                mine = [item for item in mine if not item[0] <= plan.previous]
            run_user(index, keys, mine, plan.user, plan.parallelism, plan.watermark, plan.route, emitted,
                     plan.op.off_by_one)
        else:
            for item in sorted(by_scenario.get(scenario, []), key=lambda it: it[:3]):
                if plan.drop_near_watermark and item[0] <= plan.previous:
                    continue  # the seeded bug: "<=" where a late tuple is "<"
                _update(index, keys, item, plan, emitted)
            _expire(keys, plan.op, plan.watermark, emitted)
        outputs.extend((scenario, ts, key, value) for ts, key, value in emitted)
        if not keys:
            del state[scenario]
    return state, outputs


def owners(item_fields: Any, op: OperatorConfig, parallelism: int,
           route: Callable[[Any, int], int] = instance_of) -> set[int]:
    """The instances responsible for a tuple (Alg. 1 forwardSN: one copy each)."""
    return {route(key, parallelism) for key in keys_of(op, item_fields)}


def _update(index: int, keys: dict[str, Any], item: Item, plan: ScenarioRound,
            emitted: list[tuple[int, str, Any]]) -> None:
    op = plan.op
    ts, source, _, fields = item
    owned = [k for k in keys_of(op, fields) if plan.route(k, plan.parallelism) == index]
    if op.name in AGGREGATES:
        value = lift(op, fields)
        for key in owned:
            if op.single:
                _chain_add(keys, key, op, ts, value)
            else:
                windows = keys.setdefault(key, {})
                for left in lefts_of(op, ts):
                    windows[left] = value if left not in windows else merge(op, windows[left], value)
    elif op.name == "scalejoin":
        home = storage_key(source, ts, fields, op.keys)
        for key in owned:
            for other_source, other_ts, other_fields in keys.get(key, ()):
                if other_source != source and abs(other_ts - ts) < op.ws:
                    pair = ((ts, fields), (other_ts, other_fields))
                    lhs, rhs = pair if source == 0 else (pair[1], pair[0])
                    if band_match(op, lhs[1], rhs[1]):
                        emitted.append((max(ts, other_ts) + 1, "match", match_value(lhs, rhs)))
            if key == home:
                keys.setdefault(key, []).append((source, ts, fields))
    else:  # forward (Operator 15): once per key, at ts + 1
        emitted.extend((ts + 1, key, fields["value"]) for key in owned)


def _chain_add(keys: dict[str, Any], key: str, op: OperatorConfig, ts: int, value: int) -> None:
    """WT single: add a tuple to the key's one chain (created at its earliest instance)."""
    start = earliest_left(op, ts)
    chain = keys.get(key)
    if chain is None:
        keys[key] = [start, [(ts, value)]]
    else:
        chain[0] = min(chain[0], start)
        chain[1].append((ts, value))


def _expire(keys: dict[str, Any], op: OperatorConfig, watermark: float,
            emitted: list[tuple[int, str, Any]]) -> None:
    """Emit and drop every window instance with ``L + WS <= watermark``."""
    for key in sorted(keys, key=str):  # str: keys of any type (the same order for strings)
        state = keys[key]
        if op.name == "scalejoin":
            kept = [t for t in state if t[1] + op.ws > watermark]
            if kept:
                keys[key] = kept
            else:
                del keys[key]
        elif op.name in AGGREGATES and op.single:
            if not _drain_chain(key, state, op, watermark, emitted):
                del keys[key]
        elif op.name in AGGREGATES:
            for left in sorted(state):
                if left + op.ws <= watermark:
                    emitted.append((left + op.ws, key, state.pop(left)))
            if not state:
                del keys[key]


def _drain_chain(key: str, chain: list[Any], op: OperatorConfig, watermark: float,
                 emitted: list[tuple[int, str, Any]]) -> bool:
    """Output and shift (f_S) the chain while its instance is expired; False once empty."""
    left, entries = chain
    while left + op.ws <= watermark:
        inside = [v for ts, v in entries if in_window(op, left, ts)]
        if inside:
            acc = inside[0]
            for v in inside[1:]:
                acc = merge(op, acc, v)
            emitted.append((left + op.ws, key, acc))
        entries = [(ts, v) for ts, v in entries if ts >= left + op.wa]  # f_S: purge
        if not entries:
            return False
        left = max(left + op.wa, earliest_left(op, min(ts for ts, _ in entries)))
    chain[0], chain[1] = left, entries
    return True


def finite(watermark: float) -> bool:
    """True for a real event time (not -inf / +inf)."""
    return not math.isinf(watermark)
