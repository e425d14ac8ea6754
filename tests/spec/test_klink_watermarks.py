"""Klink §2.2/§3 in spec.klink.watermarks: the SWM definition, epochs, SWM generation."""

from __future__ import annotations

import math

import pytest
from hypothesis import given, strategies as st

from spec.errors import InputError
from spec.klink.watermarks import (
    Watermark,
    WindowSpec,
    epoch_of,
    epochs,
    is_sweeping,
    sweeping_indices,
    sweeping_watermark,
    swept_deadlines,
    swm_generation_time,
)

timestamps = st.lists(st.integers(min_value=0, max_value=30), min_size=0, max_size=12)


def ingest(stamps: list[int]) -> list[Watermark]:
    return [Watermark(float(ts), float(i)) for i, ts in enumerate(stamps)]


def test_figure_2() -> None:
    # omega(3, 3) from time 0; watermarks 1, 3, 5, 7: 3 sweeps [0, 3), 7 sweeps [3, 6).
    marks = ingest([1, 3, 5, 7])
    window = WindowSpec(3, 3)
    deadlines = window.deadlines_until(7)
    assert deadlines == [3.0, 6.0]
    assert sweeping_watermark(3.0, marks) == 1
    assert sweeping_watermark(6.0, marks) == 3
    assert not is_sweeping(2, deadlines, marks)
    assert epochs(deadlines, marks) == [(0.0, 1.0), (1.0, 3.0)]
    assert window.window(6.0) == (3.0, 6.0)


def test_sliding_window_epochs() -> None:
    # size 5, slide 1 in §3: first epoch up to SWM 5, the second between SWMs 5 and 7.
    marks = ingest([1, 3, 5, 7])
    deadlines = [d for d in WindowSpec(5, 1, offset=4).deadlines_until(7)]
    assert deadlines == [5.0, 6.0, 7.0]
    assert sweeping_indices(deadlines, marks) == [2, 3]
    assert swept_deadlines(3, deadlines, marks) == [6.0, 7.0]


@given(timestamps, st.integers(min_value=0, max_value=31))
def test_swm_is_the_first_watermark_at_or_past_the_deadline(stamps: list[int], deadline: int) -> None:
    marks = ingest(stamps)
    index = sweeping_watermark(float(deadline), marks)
    if index is None:
        assert all(ts < deadline for ts in stamps)
    else:
        assert stamps[index] >= deadline
        assert all(ts < deadline for ts in stamps[:index])


@given(timestamps, st.lists(st.integers(min_value=1, max_value=31), max_size=6))
def test_swms_are_monotone_in_the_deadline(stamps: list[int], raw: list[int]) -> None:
    marks = ingest(stamps)
    deadlines = sorted(float(d) for d in raw)
    found = [sweeping_watermark(d, marks) for d in deadlines]
    known = [i for i in found if i is not None]
    assert known == sorted(known)
    # once a deadline is unswept, every later one is too
    if None in found:
        assert all(i is None for i in found[found.index(None):])


@given(timestamps, st.lists(st.integers(min_value=1, max_value=31), max_size=6),
       st.floats(min_value=-1, max_value=15))
def test_epoch_count_matches_swms_ingested(stamps: list[int], raw: list[int], now: float) -> None:
    marks = ingest(stamps)
    deadlines = sorted(set(float(d) for d in raw))
    cuts = sweeping_indices(deadlines, marks)
    assert epoch_of(now, deadlines, marks) == 1 + sum(1 for i in cuts if i <= now)
    assert len(epochs(deadlines, marks)) == len(cuts)


@given(st.floats(min_value=0, max_value=1e4), st.floats(min_value=0.01, max_value=10),
       st.floats(min_value=0, max_value=1))
def test_swm_generation_is_the_first_emission_at_or_after_the_deadline(
    deadline: float, period: float, phase: float
) -> None:
    g = swm_generation_time(deadline, period, phase)
    assert g >= deadline - 1e-6 * max(1.0, deadline)
    assert g - period < deadline + 1e-6 * max(1.0, deadline)
    steps = (g - phase) / period
    assert math.isclose(steps, round(steps), abs_tol=1e-6)


def test_bad_window_and_period_are_input_errors() -> None:
    with pytest.raises(InputError):
        WindowSpec(0, 1)
    with pytest.raises(InputError):
        WindowSpec(1, -1)
    with pytest.raises(InputError):
        swm_generation_time(1.0, 0.0)
