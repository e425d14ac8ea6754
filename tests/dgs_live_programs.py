"""User programs for the live DGS tests (plain Python files as a user writes them; loaded by
target ``tests/dgs_live_programs.py:NAME``, never imported by the tests)."""

from __future__ import annotations

from hypothesis import strategies as st

KEYS = ("alice", "bob", "carol", "dave", "eve")


class WordCounter:
    """DGS Fig. 1's key counter with string keys: ``("i", key)`` counts, ``("r", key)`` outputs
    ``(key, count)`` and resets; ``r(k)`` depends on every event of key ``k``."""

    tags = frozenset((kind, key) for kind in ("i", "r") for key in KEYS)

    @staticmethod
    def tag(event):
        return tuple(event)

    @staticmethod
    def depends(a, b):
        return a[1] == b[1] and "r" in (a[0], b[0])

    @staticmethod
    def init():
        return {}

    @staticmethod
    def update(state, event):
        kind, key = event
        new = dict(state)
        new[key] = state.get(key, 0) + 1 if kind == "i" else 0
        return new

    @staticmethod
    def out(state, event):
        kind, key = event
        return [(key, state.get(key, 0))] if kind == "r" else []

    @staticmethod
    def fork(state, left, right):
        a, b = {}, {}
        for key, count in state.items():
            (b if ("r", key) in right else a)[key] = count
        return a, b

    @staticmethod
    def join(left, right):
        return {k: left.get(k, 0) + right.get(k, 0) for k in set(left) | set(right)}

    @staticmethod
    def state_eq(a, b):
        return {k: v for k, v in a.items() if v} == {k: v for k, v in b.items() if v}

    @staticmethod
    def events():
        return st.tuples(st.sampled_from(("i", "r")), st.sampled_from(KEYS))


class FailingCounter(WordCounter):
    """Raises in ``update`` on an increment of ``"eve"`` (a bug in the user's code)."""

    @staticmethod
    def update(state, event):
        if tuple(event) == ("i", "eve"):
            raise ZeroDivisionError("eve cannot be counted")
        return WordCounter.update(state, event)
