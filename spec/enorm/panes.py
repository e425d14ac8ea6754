"""Partial windows (panes), compute and consolidate (Enorm §4.2, Fig. 3 and 5.1).

Windows are STRETCH's ``[l*WA, l*WA + WS)`` (:class:`spec.oplus.windows.WindowSpec`), so the
two papers share one window model and one expiry rule. Enorm's compute operator builds
*partial* results for fixed intervals and consolidate merges them into the user's windows
(§4.2 "compute ... builds the state for the corresponding window (or a partial of the
window)"; "consolidate ... takes a list of partial windows and merges them"). We use the
classic choice of partial: the *pane* of size ``P = gcd(WA, WS)``; every window instance is
the disjoint union of ``WS / P`` consecutive panes, so each tuple is processed once (by
compute) however many windows overlap it - the sharing of Optimization 2.

The user logic is a :class:`Monoid`: ``lift`` one tuple, ``combine`` two partial states,
``finish`` a window's state into its result. Consolidate may merge partials of one pane that
were computed on different nodes (after an instant migration, §4.4), in any order, so
``combine`` must be associative and commutative with ``zero`` as identity. This is the
condition under which Enorm's claim holds: partial-based and direct window
results are equal, before and after any migration (:func:`direct_results` vs
:func:`consolidate` of :func:`compute` over any split of the tuples).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, Iterable, TypeVar

from spec.oplus.windows import WindowSpec

M = TypeVar("M")

Key = Hashable


@dataclass(frozen=True)
class Record:
    """An input tuple of a compute operator: key, event time, value."""

    key: Key
    ts: int
    value: Any


@dataclass(frozen=True)
class Monoid(Generic[M]):
    """The user logic of a windowed computation: a commutative monoid (module docstring)."""

    zero: M
    lift: Callable[[Record], M]
    combine: Callable[[M, M], M]
    finish: Callable[[M], Any]


@dataclass(frozen=True)
class Partial(Generic[M]):
    """A partial window result: the state of ``key`` over pane ``[pane, pane + P)`` as
    computed by one node (``node`` names where; consolidate ignores it)."""

    key: Key
    pane: int
    state: M
    node: Hashable = 0


def pane_size(spec: WindowSpec) -> int:
    """P = gcd(WA, WS): the largest pane size that tiles every window instance."""
    return math.gcd(spec.WA, spec.WS)


def pane_of(spec: WindowSpec, ts: int) -> int:
    """The start of the pane ``ts`` falls in."""
    size = pane_size(spec)
    return (ts // size) * size


def panes_of_window(spec: WindowSpec, left: int) -> range:
    """The panes whose disjoint union is window instance ``[left, left + WS)``."""
    return range(left, left + spec.WS, pane_size(spec))


def windows_of_pane(spec: WindowSpec, pane: int) -> range:
    """The window instances that contain pane ``pane`` (= those containing its start)."""
    return spec.lefts_of(pane)


def direct_results(spec: WindowSpec, monoid: Monoid[M],
                   records: Iterable[Record]) -> dict[tuple[Key, int], Any]:
    """Window results computed directly, without panes: for every (key, instance) with at
    least one record, ``finish`` of the fold of its records."""
    acc: dict[tuple[Key, int], M] = {}
    for r in records:
        for left in spec.lefts_of(r.ts):
            current = acc.get((r.key, left), monoid.zero)
            acc[(r.key, left)] = monoid.combine(current, monoid.lift(r))
    return {k: monoid.finish(v) for k, v in acc.items()}


def compute(spec: WindowSpec, monoid: Monoid[M], records: Iterable[Record],
            node: Hashable = 0) -> list[Partial[M]]:
    """Enorm's compute: one partial per (key, pane) with at least one record."""
    acc: dict[tuple[Key, int], M] = {}
    for r in records:
        slot = (r.key, pane_of(spec, r.ts))
        acc[slot] = monoid.combine(acc.get(slot, monoid.zero), monoid.lift(r))
    return [Partial(k, p, s, node) for (k, p), s in acc.items()]


def consolidate(spec: WindowSpec, monoid: Monoid[M],
                partials: Iterable[Partial[M]]) -> dict[tuple[Key, int], Any]:
    """Enorm's consolidate: each window instance = the merge of every partial (from any
    node) of its key whose pane it contains; windows without partials produce nothing."""
    acc: dict[tuple[Key, int], M] = {}
    for part in partials:
        for left in windows_of_pane(spec, part.pane):
            slot = (part.key, left)
            acc[slot] = monoid.combine(acc.get(slot, monoid.zero), part.state)
    return {k: monoid.finish(v) for k, v in acc.items()}
