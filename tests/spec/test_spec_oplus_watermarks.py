"""Bounds, ready tuples and the merged watermark (``spec.oplus.watermarks``: Def. 2, Def. 3 made
total, §2.3) deliver what the tuple buffer's contract (Def. 6) promises.

A small tuple buffer written here from the module docstring's words - after each item added,
deliver every ready tuple in ``(ts, source, seq)`` order, then the merged watermark when it
grew - must satisfy :func:`~spec.oplus.watermarks.contract_violations` for every interleaving
of every set of sources; and ``source_bound`` is a bound: no later tuple of its source has a
smaller timestamp.
"""

from __future__ import annotations

import math
from typing import Any

from hypothesis import given, strategies as st

from spec.oplus.model import StreamTuple
from spec.oplus.watermarks import (Delivered, Mark, SourceItem, contract_violations, is_ready,
                                   merged_watermark, source_bound)


@st.composite
def _sources(draw: Any) -> list[list[SourceItem]]:
    """One to three sources, tuples sorted by timestamp, marks only where they keep the
    promise that later tuples have ``ts >= mark``."""
    sources: list[list[SourceItem]] = []
    for s in range(draw(st.integers(1, 3))):
        stamps = sorted(draw(st.lists(st.integers(0, 6), max_size=5)))
        items: list[SourceItem] = []
        for seq, ts in enumerate(stamps):
            if draw(st.booleans()):
                items.append(Mark(draw(st.integers(0, ts))))
            items.append(StreamTuple(ts, s, seq, seq))
        sources.append(items)
    return sources


def _deliver(sources: list[list[SourceItem]], order: list[int]) -> list[Delivered]:
    """The tuple buffer of the module docstring, fed one item at a time from the source each
    entry of ``order`` names (then every source's end, the mark +inf)."""
    feeds = [list(items) + [Mark(math.inf)] for items in sources]
    added: list[list[SourceItem]] = [[] for _ in sources]
    pending: list[StreamTuple] = []
    delivered: list[Delivered] = []
    last = -math.inf
    for s in order + [s for s, feed in enumerate(feeds) for _ in feed]:
        if not feeds[s]:
            continue
        item = feeds[s].pop(0)
        added[s].append(item)
        if isinstance(item, StreamTuple):
            pending.append(item)
        bounds = [source_bound(prefix) for prefix in added]
        for t in sorted((t for t in pending if is_ready(t, bounds)), key=StreamTuple.order_key):
            pending.remove(t)
            delivered.append(Delivered(max(last, t.ts), t))
        if merged_watermark(bounds) > last:
            last = merged_watermark(bounds)
            delivered.append(Delivered(last))
    return delivered


@given(_sources(), st.lists(st.integers(0, 2), max_size=30))
def test_ready_tuples_and_merged_watermarks_keep_the_tuple_buffer_contract(
        sources: list[list[SourceItem]], order: list[int]) -> None:
    order = [s % len(sources) for s in order]
    assert contract_violations(sources, _deliver(sources, order)) == []


@given(_sources())
def test_a_source_bound_is_never_above_a_later_tuple_of_its_source(sources: list[list[SourceItem]]) -> None:
    for items in sources:
        for cut in range(len(items) + 1):
            bound = source_bound(items[:cut])
            assert all(t.ts >= bound for t in items[cut:] if isinstance(t, StreamTuple))


def test_a_tie_with_a_lower_source_waits_and_with_a_higher_one_does_not() -> None:
    """Def. 3 made total: at equal timestamps source 0 sorts first, so a tuple of source 1 at
    ts 5 waits while source 0's bound is 5 (it may still add ts 5), and a tuple of source 0
    does not wait for source 1 at bound 5."""
    assert not is_ready(StreamTuple(5, 1, 0, "x"), [5, 5])
    assert is_ready(StreamTuple(5, 0, 0, "x"), [5, 5])
    assert is_ready(StreamTuple(5, 1, 0, "x"), [6, 5])
    assert merged_watermark([3, 7, math.inf]) == 3 and merged_watermark([]) == math.inf


def test_the_contract_names_a_tuple_delivered_too_early() -> None:
    """The oracle of the property above is not vacuous: delivering source 1's tuple before
    source 0's equal-timestamp tuple, or a tuple behind a watermark, is named."""
    a, b = StreamTuple(5, 0, 0, "a"), StreamTuple(5, 1, 0, "b")
    sources: list[list[SourceItem]] = [[a], [b]]
    good = [Delivered(5, a), Delivered(5, b), Delivered(math.inf)]
    assert contract_violations(sources, good) == []
    assert contract_violations(sources, [good[1], good[0], good[2]]) == [
        "tuples not delivered in (timestamp, source, position) order"]
    late = [Delivered(6), Delivered(6, a), Delivered(6, b), Delivered(math.inf)]
    assert any("delivered after watermark 6" in p for p in contract_violations(sources, late))
