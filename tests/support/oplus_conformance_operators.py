"""User-defined O+ operators for ``streamproof conformance --operator`` tests, loaded as
``file.py:NAME`` as a user's module would be. Payloads are ``(key, value)`` (``TYPED``: five fields).

* ``KEY_SUM``: the sum of values per key over sliding windows (WA 2, WS 6, WT multi): correct;
* ``DISTINCT``: distinct values per key (WA 3, WS 6, WT single: a chain shifted by f_S): correct;
* ``WHERE_IT_RUNS``: ``KEY_SUM`` whose f_O adds 1 when it runs inside a Spark task: its output
  depends on where it runs, which O+ forbids (f_O is a function of the window's state); the
  reference runs it on the driver, the live front end on the workers;
* ``RAISES_ON_SEVEN``: ``KEY_SUM`` whose f_U raises on a tuple of value 7;
* ``TYPED``: with ``TYPED_FIELDS`` (a field of each type ``--fields`` takes), sums per key whose
  f_U raises TypeError on a field not in its documented Python type (float, bool, int or None,
  str or None);
* ``NOT_AN_OPERATOR``: an integer.
"""

from __future__ import annotations

from typing import Any

from spec.oplus.model import OPlus, StreamTuple, WindowSet, WindowType
from spec.oplus.windows import WindowSpec
from pyspark import TaskContext


def key_of(t: StreamTuple) -> frozenset[Any]:
    return frozenset({t.payload[0]})


def sum_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    acc = ws.states[0]
    return ((t.payload[1] if acc is None else acc + t.payload[1]),), ()


def sum_output(ws: WindowSet) -> tuple[Any, ...]:
    return () if ws.states[0] is None else ((ws.key, ws.states[0]),)


def _empty() -> Any:
    return None


def _is_empty(state: Any) -> bool:
    return state is None


KEY_SUM = OPlus(name="key-sum", windows=WindowSpec(2, 6), inputs=1, keys=key_of, window_type=WindowType.MULTI,
                update=sum_update, output=sum_output, empty=_empty, is_empty=_is_empty)


def distinct_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return (ws.states[0] + ((t.ts, t.payload[1]),),), ()


def distinct_output(ws: WindowSet) -> tuple[Any, ...]:
    inside = {v for ts, v in ws.states[0] if ws.left <= ts < ws.left + 6}
    return ((ws.key, len(inside)),) if inside else ()


def distinct_slide(ws: WindowSet, new_left: int) -> tuple[Any, ...]:
    return (tuple(e for e in ws.states[0] if e[0] >= new_left),)


DISTINCT = OPlus(name="distinct", windows=WindowSpec(3, 6), inputs=1, keys=key_of, window_type=WindowType.SINGLE,
                 update=distinct_update, output=distinct_output, slide=distinct_slide)


def where_output(ws: WindowSet) -> tuple[Any, ...]:
    bump = 0 if TaskContext.get() is None else 1
    return () if ws.states[0] is None else ((ws.key, ws.states[0] + bump),)


WHERE_IT_RUNS = OPlus(name="where-it-runs", windows=WindowSpec(2, 6), inputs=1, keys=key_of,
                      window_type=WindowType.MULTI, update=sum_update, output=where_output, empty=_empty,
                      is_empty=_is_empty)


def raising_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    if t.payload[1] == 7:
        raise ZeroDivisionError(f"value 7 at {t.ts}")
    return sum_update(ws, t)


RAISES_ON_SEVEN = OPlus(name="raises-on-seven", windows=WindowSpec(2, 6), inputs=1, keys=key_of,
                        window_type=WindowType.MULTI, update=raising_update, output=sum_output, empty=_empty,
                        is_empty=_is_empty)

NOT_AN_OPERATOR = 5


TYPED_FIELDS = "key:str,price:float,ok:bool,count:int?,label:str?"
"""``--fields`` of ``TYPED``: one field of every type ``--fields`` takes, two of them nullable."""


def typed_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    """Refuses (TypeError) a field that is not in its documented Python type; keeps per window
    the sum of prices, the number of ``ok``, of null counts, the sum of counts, of null labels."""
    key, price, ok, count, label = t.payload
    for name, value, wanted in (("key", key, str), ("price", price, float), ("ok", ok, bool)):
        if type(value) is not wanted:
            raise TypeError(f"{name} arrived as {type(value).__name__} {value!r}, not {wanted.__name__}")
    if not (count is None or type(count) is int) or not (label is None or type(label) is str):
        raise TypeError(f"count/label arrived as {count!r}/{label!r}")
    sums = ws.states[0] or (0.0, 0, 0, 0, 0)
    return ((sums[0] + price, sums[1] + ok, sums[2] + (count is None), sums[3] + (count or 0),
             sums[4] + (label is None)),), ()


TYPED = OPlus(name="typed", windows=WindowSpec(2, 6), inputs=1, keys=key_of, window_type=WindowType.MULTI,
              update=typed_update, output=sum_output, empty=_empty, is_empty=_is_empty)
