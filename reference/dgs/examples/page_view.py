"""Page-view join (DGS §4.1): join page views with the latest metadata of their page.

Events: ``("view", page, user)`` and ``("update", page, metadata)``; the tag is
``(kind, page)``. Events of different pages are independent, and so are two views of the same
page; an update depends on every event of its page. A view outputs
``(page, user, metadata)``; an update outputs ``("old", page, previous metadata)``.

State: ``{page: metadata}`` (a missing page has metadata ``None``). Fork: a page's metadata
goes to the side responsible for its updates; if neither side updates it, both sides get a
copy (views only read it). Join: the union; on a page present on both sides the copies are
equal in every reachable state and the left one is kept. States compare with ``==``.
"""

from __future__ import annotations

from typing import Any, Hashable

from hypothesis import strategies as st

PAGES = (0, 1)
Event = tuple[str, int, Any]
State = dict[int, Any]


class PageViewJoin:
    """The page-view join of DGS §4.1."""

    tags = frozenset((kind, p) for kind in ("view", "update") for p in PAGES)

    @staticmethod
    def tag(event: Event) -> Hashable:
        return (event[0], event[1])

    @staticmethod
    def depends(t1: tuple[str, int], t2: tuple[str, int]) -> bool:
        return t1[1] == t2[1] and "update" in (t1[0], t2[0])

    @staticmethod
    def init() -> State:
        return {}

    @staticmethod
    def update(state: State, event: Event) -> State:
        if event[0] != "update":
            return state
        new = dict(state)
        new[event[1]] = event[2]
        return new

    @staticmethod
    def out(state: State, event: Event) -> list[tuple[Any, ...]]:
        kind, page, value = event
        if kind == "view":
            return [(page, value, state.get(page))]
        return [("old", page, state.get(page))]

    @staticmethod
    def fork(state: State, left: frozenset[Any], right: frozenset[Any]) -> tuple[State, State]:
        s1: State = {}
        s2: State = {}
        for page, meta in state.items():
            if ("update", page) in left:
                s1[page] = meta
            elif ("update", page) in right:
                s2[page] = meta
            else:
                s1[page] = meta
                s2[page] = meta
        return s1, s2

    @staticmethod
    def join(left: State, right: State) -> State:
        return {**right, **left}

    @staticmethod
    def events() -> st.SearchStrategy[Event]:
        return st.one_of(
            st.tuples(st.just("view"), st.sampled_from(PAGES), st.sampled_from(("ann", "bob"))),
            st.tuples(st.just("update"), st.sampled_from(PAGES), st.integers(10000, 10003)),
        )
