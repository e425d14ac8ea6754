"""A user program for the live real-types DGS tests (loaded by target
``tests/support/dgs_typed_program.py:TypedCounter``, as a user's file is; never imported by the tests).

Events are ``(kind, key, amount, at)``: ``kind`` ``"i"`` adds ``amount`` (a Decimal) to the
key's total and keeps the latest ``at`` (a UTC datetime), ``"r"`` outputs
``(key, count, total, latest)`` and resets; ``key`` is a struct ``(region, id)``. Every
function checks the types docs/production/types.md promises and raises otherwise."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any, Hashable

from hypothesis import strategies as st

KEYS = tuple((region, ident) for region in ("eu", "us") for ident in range(3))
State = dict[Any, tuple[int, Decimal, Any]]


def _checked(event: Any) -> Any:
    _, key, amount, at = event
    if not (isinstance(key, tuple) and isinstance(amount, Decimal) and isinstance(at, dt.datetime)
            and at.utcoffset() == dt.timedelta(0)):
        raise TypeError(f"event not in the documented form: {event!r}")
    return event


class TypedCounter:
    """A key counter (DGS Fig. 1) over events with real types."""

    tags = frozenset((kind, key) for kind in ("i", "r") for key in KEYS)

    @staticmethod
    def tag(event: Any) -> Hashable:
        kind, key, _, _ = _checked(event)
        return (kind, key)

    @staticmethod
    def depends(t1: Any, t2: Any) -> bool:
        return bool(t1[1] == t2[1] and "r" in (t1[0], t2[0]))

    @staticmethod
    def init() -> State:
        return {}

    @staticmethod
    def update(state: State, event: Any) -> State:
        kind, key, amount, at = _checked(event)
        new = dict(state)
        if kind == "r":
            new.pop(key, None)
        else:
            count, total, latest = state.get(key, (0, Decimal("0.00"), None))
            new[key] = (count + 1, total + amount, at if latest is None else max(at, latest))
        return new

    @staticmethod
    def out(state: State, event: Any) -> list[Any]:
        kind, key, _, _ = _checked(event)
        return [(key, *state.get(key, (0, Decimal("0.00"), None)))] if kind == "r" else []

    @staticmethod
    def fork(state: State, left: frozenset[Any], right: frozenset[Any]) -> tuple[State, State]:
        s1: State = {}
        s2: State = {}
        for key, entry in state.items():
            (s2 if ("r", key) in right else s1)[key] = entry
        return s1, s2

    @staticmethod
    def join(left: State, right: State) -> State:
        out = dict(left)
        for key, (count, total, latest) in right.items():
            if key in out:
                c, t, l = out[key]
                out[key] = (c + count, t + total, latest if l is None else l if latest is None else max(l, latest))
            else:
                out[key] = (count, total, latest)
        return out

    @staticmethod
    def state_eq(a: State, b: State) -> bool:
        return {k: v for k, v in a.items() if v[0]} == {k: v for k, v in b.items() if v[0]}

    @staticmethod
    def events() -> st.SearchStrategy[Any]:
        return st.tuples(st.sampled_from(("i", "r")), st.sampled_from(KEYS),
                         st.decimals(min_value=0, max_value=100, places=2),
                         st.datetimes(timezones=st.just(dt.timezone.utc)))
