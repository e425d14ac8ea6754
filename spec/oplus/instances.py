"""A, J, A+ and J+ as instances of O+, and their direct definitions (STRETCH §2.1, Def. 5,
Corollary 1, Theorem 2).

Theorem 2 says O+ guarantees A+ and J+ semantics: A is O+ with I = 1 and f_A as f_O; J is O+
with I = 2 matching pairs in f_U. Here each of A, A+, J, J+ is given twice:

* as an :class:`~spec.oplus.model.OPlus` (the constructors :func:`aggregate_plus`,
  :func:`join_plus`, and the single-key :func:`aggregate`, :func:`join`);
* *directly*, without O+ (:func:`direct_aggregate_plus`, :func:`direct_join_plus`): A+
  emits f_A over the tuples of each (key, window instance) with at least one tuple; J+ emits
  f_J for each pair (left from input 0, right from input 1) falling in the same window
  instance and sharing the key - once per shared instance.

tests/reference/oplus/test_oplus_instances.py checks the two agree (Theorem 2) on random inputs. A and J are
A+ and J+ whose key function returns exactly one key (Def. 5: f_MK replaces f_SK).
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterable, Iterator, Sequence

from spec.oplus.model import (
    Key,
    OPlus,
    OutputTuple,
    Payload,
    State,
    StreamTuple,
    WindowSet,
    WindowType,
)
from spec.oplus.windows import WindowSpec

AggregateFn = Callable[[Key, Sequence[StreamTuple]], tuple[Payload, ...]]
"""f_A: the payloads for one window instance of a key, from its tuples in TB order."""
MatchFn = Callable[[Key, StreamTuple, StreamTuple], Payload | None]
"""f_J: the payload for a (left, right) pair, or None when they do not match."""


def aggregate_plus(
    name: str,
    windows: WindowSpec,
    keys: Callable[[StreamTuple], frozenset[Key]],
    f_a: AggregateFn,
    window_type: WindowType = WindowType.MULTI,
) -> OPlus:
    """A+ as O+(WA, WS, 1, f_MK, WT, S, f_mu, default f_U, f_O = f_A, default f_S): the
    window keeps its tuples (Table I default), f_A runs at expiry."""

    def output(ws: WindowSet) -> tuple[Payload, ...]:
        tuples: tuple[StreamTuple, ...] = ws.states[0]
        return f_a(ws.key, tuples) if tuples else ()

    return OPlus(name=name, windows=windows, inputs=1, keys=keys, window_type=window_type,
                 output=output)


def aggregate(
    name: str,
    windows: WindowSpec,
    key: Callable[[StreamTuple], Key],
    f_a: AggregateFn,
    window_type: WindowType = WindowType.MULTI,
) -> OPlus:
    """A: A+ with a single key-by function f_SK (Def. 5)."""
    return aggregate_plus(name, windows, lambda t: frozenset({key(t)}), f_a, window_type)


def join_plus(
    name: str,
    windows: WindowSpec,
    keys: Callable[[StreamTuple], frozenset[Key]],
    f_j: MatchFn,
) -> OPlus:
    """J+ as O+(WA, WS, 2, f_MK, multi, S, f_mu, f_U, -, default f_S): f_U matches t
    against the tuples stored in the opposite window of the same instance, then stores t
    (Theorem 2: "matching tuples via f_J incrementally with f_U")."""

    def update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[State, ...], tuple[Payload, ...]]:
        opposite: tuple[StreamTuple, ...] = ws.states[1 - t.input]
        matches = []
        for other in opposite:
            left, right = (t, other) if t.input == 0 else (other, t)
            payload = f_j(ws.key, left, right)
            if payload is not None:
                matches.append(payload)
        states = list(ws.states)
        states[t.input] = tuple(states[t.input]) + (t,)
        return tuple(states), tuple(matches)

    return OPlus(name=name, windows=windows, inputs=2, keys=keys,
                 window_type=WindowType.MULTI, update=update, emits_on_update=True)


def join(name: str, windows: WindowSpec, key: Callable[[StreamTuple], Key], f_j: MatchFn) -> OPlus:
    """J: J+ with a single key-by function f_SK (Def. 5)."""
    return join_plus(name, windows, lambda t: frozenset({key(t)}), f_j)


def direct_aggregate_plus(
    windows: WindowSpec,
    keys: Callable[[StreamTuple], frozenset[Key]],
    f_a: AggregateFn,
    tuples: Iterable[StreamTuple],
) -> Counter[OutputTuple]:
    """A+ without O+: f_A over each (key, instance) with at least one tuple."""
    result: Counter[OutputTuple] = Counter()
    for key, left, inside in window_groups(windows, keys, tuples):
        result.update(OutputTuple(windows.right_boundary(left), p) for p in f_a(key, inside))
    return result


def direct_join_plus(
    windows: WindowSpec,
    keys: Callable[[StreamTuple], frozenset[Key]],
    f_j: MatchFn,
    tuples: Iterable[StreamTuple],
) -> Counter[OutputTuple]:
    """J+ without O+: every (left, right) pair sharing a key and a window instance."""
    result: Counter[OutputTuple] = Counter()
    for key, left, inside in window_groups(windows, keys, tuples):
        for a in (t for t in inside if t.input == 0):
            for b in (t for t in inside if t.input == 1):
                payload = f_j(key, a, b)
                if payload is not None:
                    result[OutputTuple(windows.right_boundary(left), payload)] += 1
    return result


def window_groups(
    windows: WindowSpec, keys: Callable[[StreamTuple], frozenset[Key]], tuples: Iterable[StreamTuple]
) -> Iterator[tuple[Key, int, list[StreamTuple]]]:
    """Every (key, window instance's left boundary, its tuples in TB order) with at least one
    tuple - by brute force, without O+ (a tuple belongs to every key of ``keys(t)``, Def. 4,
    and to every instance containing its timestamp)."""
    groups: dict[Key, list[StreamTuple]] = {}
    for t in sorted(tuples, key=StreamTuple.order_key):
        for k in keys(t):
            groups.setdefault(k, []).append(t)
    for key, group in groups.items():
        for left in sorted({left for t in group for left in windows.lefts_of(t.ts)}):
            yield key, left, [t for t in group if windows.contains(left, t.ts)]


def direct_sliding_join(
    window_size: int,
    f_j: Callable[[StreamTuple, StreamTuple], Payload | None],
    tuples: Iterable[StreamTuple],
) -> Counter[OutputTuple]:
    """The sliding-window join ScaleJoin computes (J+ with WA = 1, each pair once): every
    (left from input 0, right from input 1) pair with ``|left.ts - right.ts| < WS`` - i.e.
    sharing a window instance - and ``f_j`` not None, output at ``max(ts) + 1``, the right
    boundary of the earliest instance the later tuple falls in."""
    items = list(tuples)
    result: Counter[OutputTuple] = Counter()
    for a in (t for t in items if t.input == 0):
        for b in (t for t in items if t.input == 1):
            if abs(a.ts - b.ts) < window_size:
                payload = f_j(a, b)
                if payload is not None:
                    result[OutputTuple(max(a.ts, b.ts) + 1, payload)] += 1
    return result
