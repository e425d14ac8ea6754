"""A map from keys to counters (DGS Fig. 1): increments ``i(k)`` and read-resets ``r(k)``.

An event is its own tag: ``("i", k)`` or ``("r", k)`` for a key ``k`` in ``KEYS``.
``r(k)`` depends on every event of key ``k``; increments are independent of each other (even
of the same key), and events of different keys are independent.

State: ``{key: count}``. Equality (``state_eq``): equal as maps where a missing key means 0,
because a fork gives a key's count to one side and 0 to the other.
"""

from __future__ import annotations

from typing import Hashable

from hypothesis import strategies as st

KEYS = (0, 1, 2)
Event = tuple[str, int]
State = dict[int, int]


def _nonzero(state: State) -> State:
    return {k: v for k, v in state.items() if v != 0}


class KeyCounter:
    """The key counter of DGS Fig. 1."""

    tags = frozenset((kind, k) for kind in ("i", "r") for k in KEYS)

    @staticmethod
    def tag(event: Event) -> Hashable:
        return event

    @staticmethod
    def depends(t1: Event, t2: Event) -> bool:
        return t1[1] == t2[1] and "r" in (t1[0], t2[0])

    @staticmethod
    def init() -> State:
        return {}

    @staticmethod
    def update(state: State, event: Event) -> State:
        kind, key = event
        new = dict(state)
        new[key] = state.get(key, 0) + 1 if kind == "i" else 0
        return new

    @staticmethod
    def out(state: State, event: Event) -> list[tuple[int, int]]:
        kind, key = event
        return [(key, state.get(key, 0))] if kind == "r" else []

    @staticmethod
    def fork(state: State, left: frozenset[Event], right: frozenset[Event]) -> tuple[State, State]:
        # A key's count goes to the side responsible for its read-resets (left if neither).
        s1: State = {}
        s2: State = {}
        for key, count in state.items():
            (s2 if ("r", key) in right else s1)[key] = count
        return s1, s2

    @staticmethod
    def join(left: State, right: State) -> State:
        return {k: left.get(k, 0) + right.get(k, 0) for k in set(left) | set(right)}

    @staticmethod
    def state_eq(a: State, b: State) -> bool:
        return _nonzero(a) == _nonzero(b)

    @staticmethod
    def events() -> st.SearchStrategy[Event]:
        return st.tuples(st.sampled_from(("i", "i", "r")), st.sampled_from(KEYS))


class DuplicatingCounter(KeyCounter):
    """INCONSISTENT: fork copies every count to both sides, so a join double-counts (C2; and
    C1, since a read-reset on the left misses nothing but the join sees twice the count)."""

    @staticmethod
    def fork(state: State, left: frozenset[Event], right: frozenset[Event]) -> tuple[State, State]:
        return dict(state), dict(state)


class IndependentResetCounter(KeyCounter):
    """INCONSISTENT: declares a read-reset independent of increments of its key, but they do
    not commute (C3), and a reset on one wire misses the other wire's increments (C1)."""

    @staticmethod
    def depends(t1: Event, t2: Event) -> bool:
        return t1[1] == t2[1] and t1[0] == "r" and t2[0] == "r"
