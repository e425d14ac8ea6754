"""Windows (STRETCH §2.1, Alg. 2 earliestWinL / latestWinL, the expiry rule) and the tuple
buffer TB (Def. 3, Def. 6, Table II) against spec.oplus.watermarks."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from spec.errors import InputError
from spec.oplus.model import StreamTuple
from spec.oplus.watermarks import Delivered, Mark, contract_violations
from spec.oplus.windows import WindowSpec
from reference.oplus.tuple_buffer import TupleBuffer, UnsortedSource

from support.oplus_gen import sources, windows


@given(windows(), st.integers(-50, 50))
def test_earliest_and_latest_window_by_brute_force(spec: WindowSpec, ts: int) -> None:
    containing = [left for left in range(-200, 200) if spec.contains(left, ts)]
    assert containing == list(spec.lefts_of(ts))
    assert spec.earliest_left(ts) == min(containing)
    assert spec.latest_left(ts) == max(containing)
    assert all(ts < spec.right_boundary(left) for left in containing)  # Observation 1


@given(windows(), st.integers(-50, 50), st.integers(-60, 60))
def test_expiry_rule_is_safe_and_tight(spec: WindowSpec, left: int, watermark: int) -> None:
    left = left * spec.WA
    # safe: once expired, no tuple with ts >= watermark falls in the instance
    if spec.expired(left, watermark):
        assert not any(spec.contains(left, ts) for ts in range(watermark, watermark + 100))
    # tight: not expired means a tuple at ts = watermark could still fall in it
    elif watermark >= left:
        assert spec.contains(left, watermark)
    assert spec.earliest_open_left(watermark) == spec.earliest_left(watermark)
    assert not spec.expired(spec.earliest_left(watermark), watermark)


def test_window_spec_rejects_bad_parameters() -> None:
    with pytest.raises(InputError, match="WA must be > 0"):
        WindowSpec(0, 5)
    with pytest.raises(InputError, match="WS must be >= WA"):
        WindowSpec(5, 4)


@settings(max_examples=200)
@given(st.integers(1, 3).flatmap(lambda n: sources("sliding-sum", n)), st.integers(0, 2**16),
       st.integers(1, 3))
def test_tb_delivers_the_def3_merge_to_every_reader(srcs, seed: int, readers: int) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(seed)
    tb = TupleBuffer(range(len(srcs)), readers=range(readers))
    got: dict[int, list[Delivered]] = {r: [] for r in range(readers)}
    cursors = [0] * len(srcs)
    ended = [False] * len(srcs)
    while True:
        moves = [("s", i) for i in range(len(srcs)) if not ended[i]]
        moves += [("r", r) for r in range(readers) if tb.backlog(r)]
        if not moves:
            break
        kind, which = rng.choice(moves)
        if kind == "r":
            item = tb.get(which)
            assert item is not None
            got[which].append(item)
        elif cursors[which] == len(srcs[which]):
            tb.add_watermark(math.inf, which)
            ended[which] = True
        else:
            item = srcs[which][cursors[which]]
            cursors[which] += 1
            if isinstance(item, Mark):
                tb.add_watermark(item.value, which)
            else:
                tb.add(item, which)
    for r in range(readers):
        assert contract_violations(srcs, got[r]) == []
        assert got[r] == got[0]  # every reader sees the same stream


def test_contract_checker_catches_broken_deliveries() -> None:
    a, b = StreamTuple(1, 0, 0, "a"), StreamTuple(2, 0, 1, "b")
    good = [Delivered(1, a), Delivered(2, b), Delivered(math.inf)]
    assert contract_violations([[a, b]], good) == []
    assert contract_violations([[a, b]], [Delivered(2, b), Delivered(1, a), Delivered(math.inf)])
    assert contract_violations([[a, b]], [Delivered(1, a), Delivered(math.inf)])
    assert contract_violations([[a, b]], [Delivered(5), Delivered(1, a), Delivered(2, b),
                                          Delivered(math.inf)])


def test_tb_rejects_unsorted_sources() -> None:
    tb = TupleBuffer([0], readers=["r"])
    tb.add(StreamTuple(5, 0, 0, "x"), 0)
    with pytest.raises(UnsortedSource):
        tb.add(StreamTuple(4, 0, 1, "y"), 0)
    tb.add_watermark(9, 0)
    with pytest.raises(UnsortedSource):
        tb.add(StreamTuple(8, 0, 2, "z"), 0)


def test_tb_ties_are_broken_by_source_then_position() -> None:
    tb = TupleBuffer([0, 1], readers=["r"])
    late = StreamTuple(3, 1, 0, "from 1")
    tb.add(late, 1)
    tb.add_watermark(3, 0)  # source 0 may still add a ts-3 tuple, which sorts first
    wm = tb.get("r")
    assert wm is not None and wm.tuple is None and wm.watermark == 3  # no tuple yet
    assert tb.get("r") is None
    early = StreamTuple(3, 0, 0, "from 0")
    tb.add(early, 0)
    tb.add_watermark(4, 0)
    delivered = [tb.get("r"), tb.get("r")]
    assert [d.tuple for d in delivered if d] == [early, late]


def test_tb_add_and_remove_readers() -> None:
    tb = TupleBuffer([0], readers=[0])
    for seq, ts in enumerate([1, 2, 3]):
        tb.add(StreamTuple(ts, 0, seq, ts), 0)
    tb.add_watermark(math.inf, 0)
    seen = []
    while not seen or seen[-1].tuple is None or seen[-1].tuple.ts != 2:
        item = tb.get(0)
        assert item is not None
        seen.append(item)
    assert tb.add_readers([1, 2], invoker=0)  # start at the item last returned to 0
    assert not tb.add_readers([2], invoker=0)  # only one concurrent call succeeds
    third = tb.get(1)
    assert third and third.tuple and third.tuple.ts == 2
    assert tb.backlog(1) == tb.backlog(0)  # 1 is now exactly where 0 is
    assert tb.remove_readers([1])
    assert not tb.remove_readers([1, 2])  # 1 is gone: nothing removed
    assert 2 in tb.readers


def test_tb_add_and_remove_sources() -> None:
    tb = TupleBuffer([0], readers=["r"])
    tb.add(StreamTuple(5, 0, 0, "a"), 0)
    assert tb.add_sources([1], bound=5)
    assert not tb.add_sources([1, 2], bound=5)
    tb.add(StreamTuple(7, 0, 1, "b"), 0)
    items = []
    while (item := tb.get("r")) is not None:
        items.append(item)
    assert [d.tuple.payload for d in items if d.tuple] == ["a"]  # b waits for source 1
    assert tb.remove_sources([1])  # the flush: b becomes ready
    assert not tb.remove_sources([1])
    rest = []
    while (item := tb.get("r")) is not None:
        rest.append(item)
    assert [d.tuple.payload for d in rest if d.tuple] == ["b"]
    assert tb.watermark == 7
