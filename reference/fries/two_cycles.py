"""A 2-cycle of the full precedence graph (Fries Def. 4.8/4.9), when one exists, without a
pass per update transaction.

Two is the shortest a precedence cycle can be, so a 2-cycle is a *shortest* witness. Every
edge has an update at one end (two data operations never conflict), so a 2-cycle is either

* a data transaction d and an update u with d before u on some object and after u on some
  (possibly the same) object - "d saw both the old and the new function", the usual bug; or
* two updates u, u' ordered one way on one object and the other way on another.

Per object with updates, the updates cut the data operations into segments 0..k (segment s
lies after the s-th update and before the next). For a data transaction d on an object O only
its first and last operation matter: d is *before* exactly the updates of O from index
``first_segment(d)`` on, and *after* exactly those below ``last_segment(d)``. So:

1. same object: d straddles an update iff first_segment < last_segment;
2. objects O1 != O2: some update u on both has index_O1(u) >= first_segment_O1(d) and
   index_O2(u) < last_segment_O2(d). With m[a] = min{index_O2(u) : index_O1(u) >= a} (a
   suffix minimum over the updates O1 and O2 share) that is m[first_segment_O1(d)] <
   last_segment_O2(d): one array lookup per d;
3. two updates: along O1's order of their shared updates, O2's indices decrease somewhere
   (an inversion exists iff an adjacent one does).

Only bridging data transactions (before some update and after some update) can lie on a
cycle, so only they are looked up. All of it is numpy array work: per object O(its log);
per pair of objects sharing an update O(bridging transactions on them x log) - linear in
the schedule's length for a given set of objects (the dataflow's operators or workers).

The witness returned is the first found in this order: check 1 by object order, then check 2
by ordered object pair, then check 3; within one check, the 2-cycle whose transactions appear
first (smallest pair of transaction numbers).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations
from typing import Sequence

import numpy as np
import numpy.typing as npt

from reference.fries.compact import CompactSchedule, segments
from reference.fries.cycles import Edge

_Ints = npt.NDArray[np.int64]


@dataclass
class _Object:
    """One object with updates, summarised for the checks: its update positions and
    transactions (the chain), and per bridging data transaction on it (``txn`` ascending)
    the first and last position and segment."""

    name: str
    marks: _Ints
    chain: _Ints
    txn: _Ints
    first: _Ints
    last: _Ints
    first_segment: _Ints
    last_segment: _Ints


def shortest_two_cycle(schedule: CompactSchedule,
                       bridging: npt.NDArray[np.bool_]) -> list[Edge] | None:
    """A 2-cycle as its two edges (module docstring), or None when there is none.
    ``bridging[t]``: is data transaction t both before and after some update?"""
    summaries = _summaries(schedule, bridging)
    for obj in summaries:
        found = _straddle(obj)
        if found is not None:
            return found
    pairs = _sharing_pairs(summaries)
    for i, j in pairs:
        found = _across(summaries[i], summaries[j])
        if found is not None:
            return found
    for i, j in pairs:
        if i < j:
            found = _crossed_updates(summaries[i], summaries[j])
            if found is not None:
                return found
    return None


def _summaries(schedule: CompactSchedule, bridging: npt.NDArray[np.bool_]) -> list[_Object]:
    out = []
    for name, positions, segment in segments(schedule):
        ids, marks = schedule.txns[name], schedule.updates[name]
        keep = bridging[ids[positions]]
        positions, segment = positions[keep], segment[keep]
        txns = ids[positions].astype(np.int64)
        order = np.argsort(txns, kind="stable")  # by transaction, positions ascending
        ordered = txns[order]
        starts = np.flatnonzero(np.r_[True, ordered[1:] != ordered[:-1]]) if len(order) else \
            np.zeros(0, dtype=np.int64)
        ends = np.r_[starts[1:], len(order)] - 1 if len(order) else starts
        out.append(_Object(name, marks, ids[marks].astype(np.int64), ordered[starts],
                           positions[order[starts]], positions[order[ends]],
                           segment[order[starts]], segment[order[ends]]))
    return out


def _best(lows: _Ints, highs: _Ints) -> int:
    """Index of the smallest (min, max) pair of transaction numbers."""
    low, high = np.minimum(lows, highs), np.maximum(lows, highs)
    return int(np.lexsort((high, low))[0])


def _straddle(obj: _Object) -> list[Edge] | None:
    """Check 1: a data transaction with operations on both sides of one update of ``obj``."""
    hits = np.flatnonzero(obj.first_segment < obj.last_segment)
    if not len(hits):
        return None
    updates = obj.chain[obj.first_segment[hits]]
    k = int(hits[_best(obj.txn[hits], updates)])
    d, seg = int(obj.txn[k]), int(obj.first_segment[k])
    u, at = int(obj.chain[seg]), int(obj.marks[seg])
    return [(d, u, obj.name, int(obj.first[k]), at), (u, d, obj.name, at, int(obj.last[k]))]


def _sharing_pairs(summaries: Sequence[_Object]) -> list[tuple[int, int]]:
    """Ordered pairs of distinct objects that share an update transaction, in object order."""
    holders: dict[int, list[int]] = {}
    for i, obj in enumerate(summaries):
        for u in obj.chain.tolist():
            holders.setdefault(u, []).append(i)
    pairs = {pair for objects in holders.values() for pair in permutations(objects, 2)}
    return sorted(pairs)


def _shared(one: _Object, two: _Object) -> tuple[_Ints, _Ints]:
    """The updates on both objects, as their indices in ``one``'s and ``two``'s chains."""
    _, i1, i2 = np.intersect1d(one.chain, two.chain, assume_unique=True, return_indices=True)
    return i1.astype(np.int64), i2.astype(np.int64)


def _across(one: _Object, two: _Object) -> list[Edge] | None:
    """Check 2: d before u on ``one`` and after u on ``two``."""
    if not len(one.txn) or not len(two.txn):
        return None
    at = np.searchsorted(two.txn, one.txn)
    found = at < len(two.txn)
    found[found] = two.txn[at[found]] == one.txn[found]
    j1 = np.flatnonzero(found)
    if not len(j1):
        return None
    j2 = at[j1]
    i1, i2 = _shared(one, two)
    smallest = np.full(len(one.chain) + 1, len(two.chain), dtype=np.int64)
    smallest[i1] = i2
    smallest = np.minimum.accumulate(smallest[::-1])[::-1]
    chosen = smallest[one.first_segment[j1]]
    hits = np.flatnonzero(chosen < two.last_segment[j2])
    if not len(hits):
        return None
    updates = two.chain[chosen[hits]]
    k = int(hits[_best(one.txn[j1[hits]], updates)])
    d, v = int(one.txn[j1[k]]), int(chosen[k])
    u = int(two.chain[v])
    in_one = np.full(len(two.chain), -1, dtype=np.int64)
    in_one[i2] = i1
    return [(d, u, one.name, int(one.first[j1[k]]), int(one.marks[in_one[v]])),
            (u, d, two.name, int(two.marks[v]), int(two.last[j2[k]]))]


def _crossed_updates(one: _Object, two: _Object) -> list[Edge] | None:
    """Check 3: updates u, u' with u before u' on ``one`` and u' before u on ``two``."""
    i1, i2 = _shared(one, two)
    order = np.argsort(i1)
    i1, i2 = i1[order], i2[order]
    hits = np.flatnonzero(i2[:-1] > i2[1:])
    if not len(hits):
        return None
    k = int(hits[_best(one.chain[i1[hits]], one.chain[i1[hits + 1]])])
    u, w = int(one.chain[i1[k]]), int(one.chain[i1[k + 1]])
    return [(u, w, one.name, int(one.marks[i1[k]]), int(one.marks[i1[k + 1]])),
            (w, u, two.name, int(two.marks[i2[k + 1]]), int(two.marks[i2[k]]))]
