"""Incremental aggregates as O+ (the A / A+ of Operators 9, 12, 14).

With WT = multi the state of a window instance is the running aggregate (Operator 14's
``count``): f_U folds each tuple in, f_O emits ``(key, finish(acc))``. With WT = single one
instance per key must be able to *remove* the tuples that leave it when it shifts, so the
state keeps the (timestamp, lifted value) pairs and f_S purges those before the new left
boundary (Table I's default f_S), f_O folds what remains. Both give A+'s semantics (checked
against :func:`spec.oplus.instances.direct_aggregate_plus`).
"""

from __future__ import annotations

from typing import Any, Callable

from spec.oplus.model import Key, OPlus, Payload, State, StreamTuple, WindowSet, WindowType
from spec.oplus.windows import WindowSpec

Lift = Callable[[Key, StreamTuple], Any]
Merge = Callable[[Any, Any], Any]


def incremental_aggregate(name: str, windows: WindowSpec,
                          keys: Callable[[StreamTuple], frozenset[Key]],
                          lift: Lift, merge: Merge, window_type: WindowType) -> OPlus:
    """A+ whose f_A is ``fold(merge, lift(k, t) for t in window)``; outputs
    ``(str(key), value)`` with the window's right boundary as timestamp."""
    if window_type is WindowType.MULTI:
        def update_multi(ws: WindowSet, t: StreamTuple) -> tuple[tuple[State, ...], tuple[Payload, ...]]:
            acc = ws.states[0]
            value = lift(ws.key, t)
            return ((value if acc is None else merge(acc, value)),), ()

        def output_multi(ws: WindowSet) -> tuple[Payload, ...]:
            acc = ws.states[0]
            return () if acc is None else ((str(ws.key), acc),)

        return OPlus(name=name, windows=windows, inputs=1, keys=keys, window_type=window_type,
                     update=update_multi, output=output_multi, empty=lambda: None,
                     is_empty=lambda state: state is None)

    def update_single(ws: WindowSet, t: StreamTuple) -> tuple[tuple[State, ...], tuple[Payload, ...]]:
        return (ws.states[0] + ((t.ts, lift(ws.key, t)),),), ()

    def output_single(ws: WindowSet) -> tuple[Payload, ...]:
        entries = ws.states[0]
        if not entries:
            return ()
        acc = entries[0][1]
        for _, value in entries[1:]:
            acc = merge(acc, value)
        return ((str(ws.key), acc),)

    def slide_single(ws: WindowSet, new_left: int) -> tuple[State, ...]:
        return (tuple(e for e in ws.states[0] if e[0] >= new_left),)

    return OPlus(name=name, windows=windows, inputs=1, keys=keys, window_type=window_type,
                 update=update_single, output=output_single, slide=slide_single)
