"""Event-based windowing (DGS §4.1): the sum of the values between consecutive barriers.

Events: ``("value", v)`` and ``("barrier", 0)``; tags ``"value"`` and ``"barrier"``. Values
are independent of each other; a barrier depends on everything. On a barrier the program
outputs the sum since the previous barrier and resets it. Join adds (§4.4). Fork splits the
sum in half (§4.4) *only when neither side processes barriers*; a side responsible for
barriers gets the whole sum. (The literal "split in half" is inconsistent: in a plan where a
forked child handles barriers, that child would output half the window - ``check-dgs`` finds
this C1 violation; see docs/dgs.md.) States are ints, compared with ``==``.
"""

from __future__ import annotations

from hypothesis import strategies as st

Event = tuple[str, int]


class EventWindow:
    """Event-based windowing with sum aggregation."""

    tags = frozenset({"value", "barrier"})

    @staticmethod
    def tag(event: Event) -> str:
        return event[0]

    @staticmethod
    def depends(t1: str, t2: str) -> bool:
        return "barrier" in (t1, t2)

    @staticmethod
    def init() -> int:
        return 0

    @staticmethod
    def update(state: int, event: Event) -> int:
        return state + event[1] if event[0] == "value" else 0

    @staticmethod
    def out(state: int, event: Event) -> list[int]:
        return [state] if event[0] == "barrier" else []

    @staticmethod
    def fork(state: int, left: frozenset[str], right: frozenset[str]) -> tuple[int, int]:
        if "barrier" in left:
            return state, 0
        if "barrier" in right:
            return 0, state
        return state // 2, state - state // 2

    @staticmethod
    def join(left: int, right: int) -> int:
        return left + right

    @staticmethod
    def events() -> st.SearchStrategy[Event]:
        return st.one_of(
            st.tuples(st.just("value"), st.integers(-5, 20)),
            st.just(("barrier", 0)),
        )


class MaxWindow(EventWindow):
    """INCONSISTENT: join takes the max of the two partial sums instead of adding them (C1, C2)."""

    @staticmethod
    def join(left: int, right: int) -> int:
        return max(left, right)


class HalvingWindow(EventWindow):
    """INCONSISTENT: the literal §4.4 fork, which always splits the sum in half - wrong when a
    forked wire processes a barrier (C1)."""

    @staticmethod
    def fork(state: int, left: frozenset[str], right: frozenset[str]) -> tuple[int, int]:
        return state // 2, state - state // 2
