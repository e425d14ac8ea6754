"""The DGS program of the DGS soak (``streamproof soak --front-end dgs``), loaded as a user's
program file is (``soak_dgs_program.py:SoakCounter``, :func:`spec.dgs.loader.load_program`).

A per-key counter whose every event is an output: event ``("n", key, value)`` (tag
``("n", key)``) counts the key and emits ``[key, value, count]``, the key's count *after* the
event. Events of a key depend on each other (their counts must be in key order); events of
different keys are independent, so a keyed plan (:func:`spark_impl.dgs.streaming_plan.keyed_plan`)
puts every key on one leaf and no event synchronizes. Each output names its input event and
its position in the key's sequence, so the soak can tell a lost event from a duplicated or
re-ordered one (:func:`spark_impl.workloads.soak_dgs.check_outputs`).

State: ``{key: count}``; a fork gives each key's count to the side whose tags hold the key
(left if neither), a join adds the counts.
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Hashable

MAX_KEYS = 256
KEYS = tuple(f"k{i}" for i in range(MAX_KEYS))
State = dict[str, int]


class SoakCounter:
    """See the module docstring."""

    tags = frozenset(("n", key) for key in KEYS)

    @staticmethod
    def tag(event: Any) -> Hashable:
        return ("n", event[1])

    @staticmethod
    def depends(t1: Any, t2: Any) -> bool:
        return bool(t1[1] == t2[1])

    @staticmethod
    def init() -> State:
        return {}

    @staticmethod
    def update(state: State, event: Any) -> State:
        new = dict(state)
        new[event[1]] = state.get(event[1], 0) + 1
        return new

    @staticmethod
    def out(state: State, event: Any) -> list[tuple[str, int, int]]:
        return [(event[1], event[2], state.get(event[1], 0) + 1)]

    @staticmethod
    def fork(state: State, left: frozenset[Any], right: frozenset[Any]) -> tuple[State, State]:
        moved = {key: count for key, count in state.items() if ("n", key) in right}
        return {key: count for key, count in state.items() if key not in moved}, moved

    @staticmethod
    def join(left: State, right: State) -> State:
        return dict(Counter(left) + Counter(right))  # counts are positive: none dropped

    @staticmethod
    def state_eq(a: State, b: State) -> bool:
        return +Counter(a) == +Counter(b)  # a missing key means 0

    @staticmethod
    def events() -> Any:
        """Random events (``streamproof check-dgs`` checks the program's consistency with them)."""
        from hypothesis import strategies as st

        return st.tuples(st.just("n"), st.sampled_from(KEYS[:8]), st.integers(0, 10**6))
