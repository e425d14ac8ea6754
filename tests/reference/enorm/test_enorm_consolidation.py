"""Enorm §6.1 efficient consolidation: the DAG shortest path equals the exhaustive optimum,
plans are exact tilings, the paper's 86 vs 240, and consolidating by plan gives the direct
window results with fewer merges."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from spec.enorm.consolidation import (
    Piece,
    available,
    horizon_cost,
    naive_cost,
    optimal_cost,
    tilings,
)
from spec.enorm.panes import Monoid
from spec.errors import InputError
from reference.enorm.plan import MultiWindowConsolidator, best_tiling, plan_cost


@st.composite
def layouts(draw: Any) -> tuple[int, list[int], int, int]:
    base = draw(st.integers(1, 3))
    sizes = sorted(set(draw(st.lists(st.integers(1, 8), min_size=1, max_size=4))))
    sizes = [s * base for s in sizes]
    window = draw(st.sampled_from(sizes))
    start = draw(st.integers(0, 5)) * window
    return base, sizes, start, window


@settings(max_examples=200)
@given(layouts(), st.dictionaries(st.integers(1, 24), st.integers(1, 9)))
def test_shortest_path_is_the_exhaustive_optimum(layout: Any, weights: dict[int, int]) -> None:
    base, sizes, start, window = layout

    def weight(piece: Piece) -> int:
        return weights.get(piece.size, 1)

    plan = best_tiling(base, sizes, start, window, weight)
    assert sum(weight(p) for p in plan) == optimal_cost(base, sizes, start, window, weight)
    assert len(best_tiling(base, sizes, start, window)) == optimal_cost(base, sizes, start, window)
    assert plan in set(tilings(base, sizes, start, window))
    # an exact tiling by available pieces
    position = start
    for piece in plan:
        assert piece.start == position and piece in available(base, sizes, start, window)
        position += piece.size
    assert position == start + window


def test_paper_example_86_versus_240() -> None:
    """§6.1: windows of 5, 10, 15 and 20 minutes from 1-minute partials, for one hour."""
    assert plan_cost(1, [5, 10, 15, 20], 60) == 86
    assert horizon_cost(1, [5, 10, 15, 20], 60, efficient=True) == 86
    assert horizon_cost(1, [5, 10, 15, 20], 60, efficient=False) == 240
    assert naive_cost(1, 20) == 20
    assert len(best_tiling(1, [5, 10, 15, 20], 0, 20)) == 2  # 2x10 or 15 + 5


def test_sizes_must_be_multiples_of_the_base() -> None:
    with pytest.raises(InputError, match="not a positive multiple"):
        best_tiling(2, [5], 0, 5)
    with pytest.raises(InputError, match="base partial size"):
        optimal_cost(0, [4], 0, 4)


SUM: Monoid[int] = Monoid(0, lambda r: r.value, lambda a, b: a + b, lambda s: s)


@settings(max_examples=100)
@given(st.integers(1, 2), st.lists(st.integers(1, 4), min_size=1, max_size=3, unique=True),
       st.dictionaries(st.tuples(st.sampled_from("ab"), st.integers(0, 23)), st.integers(1, 9)))
def test_consolidating_by_plan_equals_direct(base: int, multiples: list[int],
                                             values: dict[tuple[str, int], int]) -> None:
    sizes = [m * base for m in multiples]
    horizon = 24 * base
    partials = {(k, b * base): v for (k, b), v in values.items()}
    efficient = MultiWindowConsolidator(base, sizes, SUM)
    naive = MultiWindowConsolidator(base, sizes, SUM, efficient=False)
    got = efficient.run(partials, horizon)
    assert got == naive.run(partials, horizon)
    direct = {}
    for size in sizes:
        for start in range(0, horizon - size + 1, size):
            for key in "ab":
                inside = [v for (k, b), v in partials.items() if k == key and start <= b < start + size]
                if inside:
                    direct[(key, size, start)] = sum(inside)
    assert got == direct
    assert efficient.merges <= naive.merges
    dense = {(k, b): 1 for k in "ab" for b in range(0, horizon, base)}
    full = MultiWindowConsolidator(base, sizes, SUM)
    full.run(dense, horizon)
    assert full.merges == 2 * plan_cost(base, sizes, horizon)
