"""Hypothesis generators shared by tests/test_oplus_*.py: operators, timestamp-sorted
sources with explicit watermarks, key-to-instance mappings and reconfiguration points."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from hypothesis import strategies as st

from spec.oplus.instances import join_plus
from spec.oplus.model import OPlus, StreamTuple, WindowType
from spec.oplus.watermarks import Mark, SourceItem
from spec.oplus.windows import WindowSpec
from reference.oplus.operators.joins import forward, scalejoin
from reference.oplus.operators.sliding_sum import sliding_sum
from reference.oplus.operators.text import longest_tweet, paircount, wordcount

WORDS = ["a", "b", "c", "#x", "#y", "dd"]
KINDS = ["sliding-sum", "wordcount", "paircount", "longest-tweet", "scalejoin", "forward",
         "join-plus"]


@dataclass(frozen=True)
class Case:
    """An operator with inputs: ``sources`` are the TB sources (tuples and marks)."""

    kind: str
    op: OPlus
    sources: tuple[tuple[SourceItem, ...], ...]


@st.composite
def windows(draw: Any) -> WindowSpec:
    wa = draw(st.integers(1, 4))
    return WindowSpec(wa, wa * draw(st.integers(1, 3)) + draw(st.integers(0, wa - 1)))


def _payload(draw: Any, kind: str, input_index: int) -> Any:
    if kind == "sliding-sum":
        return (draw(st.sampled_from(["k1", "k2", "k3"])), draw(st.integers(-3, 9)))
    if kind in ("wordcount", "paircount", "longest-tweet"):
        return " ".join(draw(st.lists(st.sampled_from(WORDS), max_size=4)))
    if kind in ("scalejoin", "join-plus"):
        return (draw(st.integers(0, 6)), draw(st.integers(0, 6)))
    return draw(st.integers(0, 5))


@st.composite
def sources(draw: Any, kind: str, count: int, max_len: int = 7) -> tuple[tuple[SourceItem, ...], ...]:
    """``count`` sources of sorted tuples (event times 0..30) with explicit watermarks."""
    result = []
    for index in range(count):
        times = sorted(draw(st.lists(st.integers(0, 30), max_size=max_len)))
        items: list[SourceItem] = []
        for position, ts in enumerate(times):
            if draw(st.booleans()) and draw(st.booleans()):
                previous = times[position - 1] if position else 0
                items.append(Mark(draw(st.integers(previous, ts))))
            items.append(StreamTuple(ts, index, len(items), _payload(draw, kind, index),
                                     input=index if kind in ("scalejoin", "forward", "join-plus")
                                     else 0))
        result.append(tuple(items))
    return tuple(result)


def _match(key: Any, left: StreamTuple, right: StreamTuple) -> Any:
    (x, y), (a, b) = left.payload, right.payload
    return (key, left.ts, right.ts) if abs(x - a) <= 2 and abs(y - b) <= 2 else None


@st.composite
def cases(draw: Any, kinds: list[str] = KINDS, max_len: int = 7) -> Case:
    """A random operator of a random kind and its sources."""
    kind = draw(st.sampled_from(kinds))
    wt = draw(st.sampled_from([WindowType.SINGLE, WindowType.MULTI]))
    spec = draw(windows())
    op: OPlus
    if kind == "sliding-sum":
        op = sliding_sum(spec, wt)
    elif kind == "wordcount":
        op = wordcount(spec, wt)
    elif kind == "paircount":
        op = paircount(spec, wt, draw(st.sampled_from([1, 2, None])))
    elif kind == "longest-tweet":
        op = longest_tweet(spec, wt)
    elif kind == "scalejoin":
        op = scalejoin(draw(st.integers(1, 8)), draw(st.integers(1, 4)), 2)
    elif kind == "forward":
        op = forward(draw(st.integers(1, 3)))
    else:
        op = join_plus("join-plus", spec, lambda t: frozenset({t.payload[0] % 2}), _match)
    two = kind in ("scalejoin", "forward", "join-plus")
    count = 2 if two else draw(st.integers(1, 3))
    return Case(kind, op, draw(sources(kind, count, max_len)))


@st.composite
def mapping_factories(draw: Any) -> Callable[[int, int], Callable[[Any], int]]:
    """(epoch, parallelism) -> f_mu: a random table per epoch, keys hashed into it."""
    salt = draw(st.integers(0, 10_000))

    def factory(epoch: int, parallelism: int) -> Callable[[Any], int]:
        return lambda key: hash((salt, epoch, repr(key))) % parallelism

    return factory


@st.composite
def requests(draw: Any) -> list[tuple[int, int]]:
    """Reconfiguration points: strictly increasing watermarks with new parallelism."""
    marks = sorted(set(draw(st.lists(st.integers(-1, 30), max_size=3))))
    return [(m, draw(st.integers(1, 4))) for m in marks]
