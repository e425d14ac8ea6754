"""Event-based windowing in the richer multi-state-type form (DGS Def. 2.1 items 4-7).

Two state types: ``Total`` (``State_0``, accepts every tag) and ``Partial``, whose predicate
is ``{"value"}``: a partial sum can never see a barrier. Fork ``split`` turns a ``Total`` into
two ``Partial`` halves, join ``add`` adds two ``Partial`` back into a ``Total``; ``split_partial`` /
``add_partial`` fork a ``Partial`` further. Every plan must therefore keep barriers at a
``Total`` worker (the root), which P-validity (V1) enforces.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

Event = tuple[str, int]


def _total_update(state: int, event: Event) -> int:
    return state + event[1] if event[0] == "value" else 0


def _total_out(state: int, event: Event) -> list[int]:
    return [state] if event[0] == "barrier" else []


def _partial_update(state: int, event: Event) -> int:
    return state + event[1]


def _partial_out(state: int, event: Event) -> list[int]:
    return []


def _split(state: int, left: frozenset[str], right: frozenset[str]) -> tuple[int, int]:
    return state // 2, state - state // 2


def _add(left: int, right: int) -> int:
    return left + right


class TypedWindow:
    """Event-based windowing with a ``Total`` and a ``Partial`` state type."""

    tags = frozenset({"value", "barrier"})
    initial = "Total"
    state_types: dict[str, dict[str, Any]] = {
        "Total": {"update": _total_update, "out": _total_out},
        "Partial": {"tags": frozenset({"value"}), "update": _partial_update, "out": _partial_out},
    }
    forks: dict[str, dict[str, Any]] = {
        "split": {"from": "Total", "to": ("Partial", "Partial"), "fn": _split},
        "split_partial": {"from": "Partial", "to": ("Partial", "Partial"), "fn": _split},
    }
    joins: dict[str, dict[str, Any]] = {
        "add": {"from": ("Partial", "Partial"), "to": "Total", "fn": _add},
        "add_partial": {"from": ("Partial", "Partial"), "to": "Partial", "fn": _add},
    }

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
    def events() -> st.SearchStrategy[Event]:
        return st.one_of(
            st.tuples(st.just("value"), st.integers(-5, 20)),
            st.just(("barrier", 0)),
        )
