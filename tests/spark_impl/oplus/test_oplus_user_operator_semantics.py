"""spark_impl.oplus.user_operator.process_key against O+'s meaning (spec.oplus.semantics), as a
hypothesis property: tuples in any order whose disorder is within the lateness, cut into any
micro-batches with the watermark ``(largest ts so far) - lateness`` and +inf at the end, give
exactly ``expected_outputs`` of the input - for a multi-type and a single-type operator with an
order-sensitive f_U (the module docstring: "the outputs equal O+'s outputs on the sorted input
for any f_U")."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from spec.oplus.model import OPlus, OutputTuple, StreamTuple, WindowSet, WindowType
from spec.oplus.semantics import expected_outputs
from spec.oplus.windows import WindowSpec
from spark_impl.oplus.user_operator import process_key


def _append(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    return (ws.states[0] + ((t.ts, t.payload[1]),),), ()


def _sequence(ws: WindowSet) -> tuple[Any, ...]:
    inside = tuple(v for ts, v in ws.states[0] if ws.left <= ts < ws.left + 5)  # WS = 5
    return ((ws.key, inside),) if inside else ()


def _slide(ws: WindowSet, new_left: int) -> tuple[Any, ...]:
    return (tuple(e for e in ws.states[0] if e[0] >= new_left),)


def _operator(single: bool) -> OPlus:
    """The sequence of values per key and window (order-sensitive), WA 2, WS 5."""
    return OPlus(name="sequence", windows=WindowSpec(2, 5), inputs=1, keys=lambda t: frozenset({t.payload[0]}),
                 window_type=WindowType.SINGLE if single else WindowType.MULTI, update=_append, output=_sequence,
                 slide=_slide)


@st.composite
def _runs(draw: Any) -> tuple[int, list[StreamTuple], list[int]]:
    lateness = draw(st.integers(0, 6))
    count = draw(st.integers(0, 30))
    steps = draw(st.lists(st.integers(0, 3), min_size=count, max_size=count))
    keys = draw(st.lists(st.sampled_from("ab"), min_size=count, max_size=count))
    jitter = draw(st.lists(st.integers(0, lateness), min_size=count, max_size=count))
    tuples, ts = [], 0
    for seq in range(count):
        ts += steps[seq]
        tuples.append(StreamTuple(ts, 0, seq, (keys[seq], seq)))
    arrival = sorted(range(count), key=lambda i: (tuples[i].ts + jitter[i], i))
    cuts = draw(st.lists(st.integers(1, 6), min_size=count, max_size=count))
    return lateness, [tuples[i] for i in arrival], cuts


@given(_runs(), st.booleans())
def test_bounded_disorder_in_any_batches_gives_o_plus_outputs(run: tuple[int, list[StreamTuple], list[int]],
                                                              single: bool) -> None:
    lateness, arrived, cuts = run
    op = _operator(single)
    states: dict[Any, Any] = {}
    emitted: list[tuple[int, Any, Any]] = []
    newest, previous, at = -math.inf, -math.inf, 0
    batches = []
    for size in cuts:
        if at >= len(arrived):
            break
        batches.append(arrived[at:at + size])
        at += size
    for batch in [*batches, []]:
        assert all(t.ts >= previous for t in batch), "the drawn disorder stays within the lateness"
        newest = max([newest, *(t.ts for t in batch)])
        watermark = newest - lateness if batch else math.inf
        by_key: dict[Any, list[Any]] = {}
        for t in batch:
            by_key.setdefault(t.payload[0], []).append((t.ts, t.source, t.seq, t.payload, t.input))
        for key in sorted(set(states) | set(by_key)):
            new = process_key(op, key, states.get(key), by_key.get(key, []), watermark, emitted)
            if new is None:
                states.pop(key, None)
            else:
                states[key] = new
        previous = watermark
    assert not states
    assert Counter(OutputTuple(ts, payload) for ts, _, payload in emitted) == expected_outputs(op, arrived)
