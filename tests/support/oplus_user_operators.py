"""User-defined O+ operators for the live front end's tests, loaded as ``file.py:NAME``
(``spark_impl.oplus.user_operator.load_operator``), as a user's own module would be.

* ``KEY_MAX``: the largest value per key over tumbling windows (WA = WS = 10, WT multi);
* ``DISTINCT``: the number of distinct items per key over sliding windows (WA = 2, WS = 6,
  WT single: one chain per key, shifted by f_S);
* ``FIRST``: the first value per key and window in event-time order (WA = 5, WS = 10, WT
  multi): order-sensitive, so it equals the sorted input's answer only if every key sees its
  tuples in event-time order.

* ``PAIRS``: two inputs (sources 0 and 1), the pairs per key and tumbling window.

Payloads are ``(key, value)`` (the stream's ``key`` and ``value`` columns); every output is
``(key, result)``.
"""

from __future__ import annotations

from typing import Any

from spec.oplus.model import OPlus, StreamTuple, WindowSet, WindowType
from spec.oplus.windows import WindowSpec


def key_of(t: StreamTuple) -> frozenset[Any]:
    return frozenset({t.payload[0]})


def max_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    acc = ws.states[0]
    return ((t.payload[1] if acc is None else max(acc, t.payload[1])),), ()


def max_output(ws: WindowSet) -> tuple[Any, ...]:
    return () if ws.states[0] is None else ((ws.key, ws.states[0]),)


KEY_MAX = OPlus(name="key-max", windows=WindowSpec(10, 10), inputs=1, keys=key_of, window_type=WindowType.MULTI,
                update=max_update, output=max_output, empty=lambda: None, is_empty=lambda s: s is None)


def distinct_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return (ws.states[0] + ((t.ts, t.payload[1]),),), ()


def distinct_output(ws: WindowSet) -> tuple[Any, ...]:
    inside = {item for ts, item in ws.states[0] if ws.left <= ts < ws.left + 6}
    return ((ws.key, len(inside)),) if inside else ()


def distinct_slide(ws: WindowSet, new_left: int) -> tuple[Any, ...]:
    return (tuple(e for e in ws.states[0] if e[0] >= new_left),)


DISTINCT = OPlus(name="distinct", windows=WindowSpec(2, 6), inputs=1, keys=key_of, window_type=WindowType.SINGLE,
                 update=distinct_update, output=distinct_output, slide=distinct_slide)


def first_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return ((t.payload[1] if ws.states[0] is None else ws.states[0]),), ()


FIRST = OPlus(name="first", windows=WindowSpec(5, 10), inputs=1, keys=key_of, window_type=WindowType.MULTI,
              update=first_update, output=max_output, empty=lambda: None, is_empty=lambda s: s is None)


def pairs_output(ws: WindowSet) -> tuple[Any, ...]:
    left, right = ws.states
    return ((ws.key, len(left) * len(right), sum(t.payload[1] for t in left)),) if left and right else ()


PAIRS = OPlus(name="pairs", windows=WindowSpec(4, 4), inputs=2, keys=key_of, window_type=WindowType.MULTI,
              output=pairs_output)
"""Two inputs: per key and tumbling window [4l, 4l + 4), the number of (input 0, input 1)
pairs and the sum of input 0's values (f_U is Table I's default: store the tuple in the
window of its input)."""
