"""The ScaleJoin band join (J+, Operator 10, §8.3) and the forwarding Operator 15.

ScaleJoin: O+(1, WS, 2, f_MK = all K keys, single, ...). Every instance sees every tuple (f_MK
returns every key) and compares it with the opposite-stream tuples stored under its keys;
each tuple is stored under exactly one key, so every pair is compared exactly once. The §8.3
predicate: ``|L.x - R.a| <= band and |L.y - R.b| <= band``. Output: ``("match", ((L.ts, x, y),
(R.ts, a, b)))`` at the window's right boundary, i.e. (later ts) + 1.

**Deviation from Operator 10.** Operator 10 stores t under key ``c % K`` where c counts the
tuples a window set has seen. Alg. 2 L9-10 removes a single-type set whose states are empty,
after which its counter restarts at 0 while other keys' counters continue, so a tuple can be
stored under two keys or none (duplicated or lost matches). We store t under
``crc32(input, ts, payload) % K``: the same for every key, so still exactly one key.
The purge uses the project's expiry rule: opposite tuples with ``ts' + WS <= t.ts`` are
dropped (Operator 10: ``<``), so a pair joins iff it shares a window instance.

Operator 15: O+(1, 1, 2, f_MK = {0..K-1}, single, f_U = forward t's payload): every tuple is
output once per key, at ts + 1, as ``(str(k), value)``.
"""

from __future__ import annotations

import zlib

from spec.oplus.model import OPlus, Payload, State, StreamTuple, WindowSet, WindowType
from spec.oplus.windows import WindowSpec


def storage_key(t: StreamTuple, keys: int) -> int:
    """The one ScaleJoin key that stores ``t``."""
    return zlib.crc32(f"{t.input}|{t.ts}|{t.payload!r}".encode()) % keys


def band_match(left: StreamTuple, right: StreamTuple, band: int) -> bool:
    """The §8.3 predicate on L = (x, y), R = (a, b)."""
    (x, y), (a, b) = left.payload, right.payload
    return bool(abs(x - a) <= band and abs(y - b) <= band)


def scalejoin(window_size: int, keys: int, band: int) -> OPlus:
    """ScaleJoin (Operator 10, adapted: module docstring)."""
    windows = WindowSpec(1, window_size)

    def update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[State, ...], tuple[Payload, ...]]:
        this, opposite = t.input, 1 - t.input
        kept = tuple(o for o in ws.states[opposite] if o.ts + window_size > t.ts)
        matches = []
        for other in kept:
            left, right = (t, other) if this == 0 else (other, t)
            if band_match(left, right, band):
                matches.append(("match", ((left.ts, *left.payload), (right.ts, *right.payload))))
        states = list(ws.states)
        states[opposite] = kept
        if storage_key(t, keys) == ws.key:
            states[this] = ws.states[this] + (t,)
        return tuple(states), tuple(matches)

    return OPlus(name="scalejoin", windows=windows, inputs=2,
                 keys=lambda t: frozenset(range(keys)), window_type=WindowType.SINGLE,
                 schema="L ++ R", update=update, emits_on_update=True)


def forward(keys: int) -> OPlus:
    """Operator 15 with ``keys`` keys."""
    def update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[State, ...], tuple[Payload, ...]]:
        return ((), ()), ((str(ws.key), t.payload),)

    return OPlus(name="forward", windows=WindowSpec(1, 1), inputs=2,
                 keys=lambda t: frozenset(range(keys)), window_type=WindowType.SINGLE,
                 update=update, emits_on_update=True)
