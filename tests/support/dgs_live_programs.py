"""User programs for the live DGS tests (loaded by target ``tests/support/dgs_live_programs.py:NAME``,
as a user's file is; never imported by the tests)."""

from __future__ import annotations

from hypothesis import strategies as st

from reference.dgs.examples.key_counter import KeyCounter

KEYS = ("alice", "bob", "carol", "dave", "eve")


class WordCounter(KeyCounter):
    """DGS Fig. 1's key counter (reference/dgs/examples/key_counter.py) with string keys:
    ``("i", key)`` counts, ``("r", key)`` outputs ``(key, count)`` and resets; ``r(k)`` depends
    on every event of key ``k``."""

    tags = frozenset((kind, key) for kind in ("i", "r") for key in KEYS)

    @staticmethod
    def events() -> st.SearchStrategy[tuple[str, str]]:
        return st.tuples(st.sampled_from(("i", "r")), st.sampled_from(KEYS))


class FailingCounter(WordCounter):
    """Raises in ``update`` on an increment of ``"eve"`` (a bug in the user's code)."""

    @staticmethod
    def update(state: dict[str, int], event: tuple[str, str]) -> dict[str, int]:
        if tuple(event) == ("i", "eve"):
            raise ZeroDivisionError("eve cannot be counted")
        return KeyCounter.update(state, event)
