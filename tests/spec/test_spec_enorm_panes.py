"""Enorm's panes tile every window (``spec.enorm.panes``, module docstring): window instance
``[left, left + WS)`` is the disjoint union of ``panes_of_window``, each pane of size
``gcd(WA, WS)``, and the windows containing a pane are exactly those whose panes include it (instances may start before 0)."""

from __future__ import annotations

from hypothesis import given, strategies as st

from spec.enorm.panes import pane_of, pane_size, panes_of_window, windows_of_pane
from spec.oplus.windows import WindowSpec


@st.composite
def _windows(draw: st.DrawFn) -> WindowSpec:
    wa = draw(st.integers(1, 6))
    return WindowSpec(wa, draw(st.integers(wa, 12)))


@given(_windows(), st.integers(0, 8))
def test_a_window_is_the_disjoint_union_of_its_panes(spec: WindowSpec, index: int) -> None:
    left = index * spec.WA
    size = pane_size(spec)
    covered = [ts for pane in panes_of_window(spec, left) for ts in range(pane, pane + size)]
    assert covered == list(range(left, left + spec.WS))  # in order, so disjoint and complete
    assert all(pane_of(spec, pane) == pane for pane in panes_of_window(spec, left))


@given(_windows(), st.integers(0, 40))
def test_the_windows_of_a_pane_are_those_whose_panes_hold_it(spec: WindowSpec, ts: int) -> None:
    pane = pane_of(spec, ts)
    lefts = range((pane - spec.WS) // spec.WA * spec.WA, pane + 1, spec.WA)  # every instance that can reach it
    holding = {left for left in lefts if pane in panes_of_window(spec, left)}
    assert set(windows_of_pane(spec, pane)) == holding
