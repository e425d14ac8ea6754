"""Watermarks (Def. 2), ready tuples and implicit watermarks (Def. 3), explicit watermarks
(§2.3) and the delivery contract of the tuple buffer TB (Def. 6).

A *source* is one physical input stream: a list of items, each a tuple or an explicit
watermark :class:`Mark`, where tuples are sorted by timestamp and a mark ``w`` promises that
the later tuples of that source have ``ts >= w``. After its last item every source ends with
the mark +infinity.

**Bound of a source.** After some prefix of source s has been added, every later tuple of s
has ``ts >= bound_s``, where ``bound_s`` = the largest timestamp or mark added so far (-inf
before anything). Def. 3 uses only timestamps (implicit); marks add the explicit kind; both
are the same promise, so we merge them into one bound.

**Ready tuples (Def. 3, made total).** Def. 3 calls t ready when ``t.tau <= min_s bound_s``.
Two sources may hold tuples with equal timestamps; to make the merged order one *total*
order that every execution agrees on, ties are broken by source index, then position:
the TB order is ``(ts, source, seq)`` (:meth:`StreamTuple.order_key`), and t from source i is
ready iff for every other source s, ``bound_s > t.ts`` or (``bound_s == t.ts`` and ``s > i``)
- no tuple that sorts before t can still be added.

**Watermarks delivered.** After the ready tuples, TB delivers the merged watermark
``min_s bound_s`` when it grew (explicit watermarks, §2.3: "the minimum of the latest
watermarks received from each input stream"). An instance's watermark W is the largest
watermark or tuple timestamp it has been delivered: a delivered tuple's timestamp is a valid
watermark because tuples arrive in timestamp order (the implicit watermark of Def. 3).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence, Union

from spec.oplus.model import StreamTuple
from spec.oplus.windows import NO_WATERMARK, Watermark


@dataclass(frozen=True)
class Mark:
    """An explicit watermark in a source stream: later tuples of the source have
    ``ts >= value`` (§2.3)."""

    value: Watermark


SourceItem = Union[StreamTuple, Mark]
"""One item of a source stream."""


@dataclass(frozen=True)
class Delivered:
    """One item delivered by TB to a reader: a tuple, or (``tuple is None``) a watermark."""

    watermark: Watermark
    tuple: StreamTuple | None = None

    @property
    def is_tuple(self) -> bool:
        """True for a tuple, False for a watermark."""
        return self.tuple is not None


def item_bound(item: SourceItem) -> Watermark:
    """The bound an item sets on its source (its timestamp or mark value)."""
    return item.value if isinstance(item, Mark) else item.ts


def source_bound(prefix: Sequence[SourceItem]) -> Watermark:
    """bound_s after ``prefix`` was added: later tuples of the source have ``ts >=`` it."""
    return max((item_bound(item) for item in prefix), default=NO_WATERMARK)


def is_ready(t: StreamTuple, bounds: Sequence[Watermark]) -> bool:
    """Def. 3 with the total tie-break (module docstring): ``bounds[s]`` is bound_s."""
    for s, bound in enumerate(bounds):
        if s == t.source:
            continue
        if bound < t.ts or (bound == t.ts and s < t.source):
            return False
    return True


def merged_watermark(bounds: Sequence[Watermark]) -> Watermark:
    """The watermark TB may deliver: the minimum bound over its sources (§2.3)."""
    return min(bounds, default=math.inf)


def contract_violations(
    sources: Sequence[Sequence[SourceItem]], delivered: Sequence[Delivered]
) -> list[str]:
    """What a complete delivery to one reader breaks of the TB contract (Def. 6 and Def. 3),
    in words; empty when it holds. ``sources`` are complete (each implicitly ends with mark
    +inf), ``delivered`` is everything the reader got:

    1. every tuple exactly once, and nothing else;
    2. tuples in the total order ``(ts, source, seq)``;
    3. watermarks non-decreasing, ending at +inf;
    4. no tuple delivered after a watermark w has ``ts < w`` (watermarks are safe, Def. 2).
    """
    problems: list[str] = []
    expected = sorted(
        (item for source in sources for item in source if isinstance(item, StreamTuple)),
        key=StreamTuple.order_key,
    )
    got = [d.tuple for d in delivered if d.tuple is not None]
    if got != expected:
        missing = [t for t in expected if t not in got]
        if missing or len(got) != len(expected):
            problems.append(
                f"delivered {len(got)} tuples, expected each of the {len(expected)} exactly "
                f"once (first missing: {missing[0] if missing else None})"
            )
        else:
            problems.append("tuples not delivered in (timestamp, source, position) order")
    last = NO_WATERMARK
    for index, item in enumerate(delivered):
        if item.tuple is None:
            if item.watermark < last:
                problems.append(f"watermark decreased from {last} to {item.watermark} "
                                f"at delivery {index}")
            last = max(last, item.watermark)
        elif item.tuple.ts < last:
            problems.append(f"tuple at ts {item.tuple.ts} delivered after watermark {last}")
    if last != math.inf:
        problems.append(f"the last watermark delivered is {last}, expected +inf")
    return problems
