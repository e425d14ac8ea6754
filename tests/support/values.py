"""Hypothesis strategies over the documented Python forms of user values
(docs/production/types.md) and an equality that checks types too (a NaN equals a NaN)."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

from hypothesis import strategies as st

from spark_impl.values import normalize

UTC = dt.timezone.utc

scalars = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70), st.floats(),
    st.decimals(allow_nan=False, allow_infinity=False, places=None), st.text(max_size=6),
    st.binary(max_size=6), st.dates(),
    st.datetimes(timezones=st.just(UTC)), st.datetimes(), st.times(), st.timedeltas(),
)


def _maps(children: Any) -> Any:
    return st.dictionaries(st.one_of(st.text(max_size=4), st.integers(), st.tuples(st.integers(), st.text(max_size=2))),
                           children, max_size=3).map(normalize)


documented = st.recursive(scalars, lambda children: st.one_of(
    st.lists(children, max_size=3).map(tuple), _maps(children)), max_leaves=12)
"""Every documented form, nested: tuples (structs, arrays) and sorted pairs (maps) of scalars."""


def same(a: Any, b: Any) -> bool:
    """Equal with the same types throughout (a NaN equals a NaN)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, tuple):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and math.isnan(a):
        return bool(math.isnan(b))
    if isinstance(a, dt.datetime) and a.tzinfo is not None:
        return bool(a == b and a.utcoffset() == b.utcoffset())
    return bool(a == b)
