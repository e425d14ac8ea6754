"""Enorm Alg. 1 in near-linear time (Enorm §4.4.1), equal to ``spec.fusion.greedy``.

Two facts make Alg. 1 a single pass over the edges:

* fusing only ever *shrinks* a component's PA, so a pair that is invalid (no common attribute)
  or internal (same component) stays so forever, and a score based on the components' PA
  only decreases;
* Alg. 1 picks the valid pair of maximum score, the first in scan order (operator order,
  then edge order) on ties.

Score ``"comm"`` (static): visit the edges by decreasing rate, ties in scan order, and fuse
each one that is still valid - Kruskal's algorithm with a validity test. Score ``"pa"``
(decreasing): a lazy max-heap keyed by (score, scan position); a popped entry whose score is
stale is pushed back with its current score, an up-to-date one is the maximum.
"""

from __future__ import annotations

import heapq

from spec.errors import InputError
from spec.fusion.components import Component
from spec.fusion.greedy import SCORE_COMM, SCORES
from spec.fusion.job import Job


class _UnionFind:
    """Disjoint sets of operator positions, each root carrying its component's PA."""

    def __init__(self, pas: list[frozenset[str]]) -> None:
        self.parent = list(range(len(pas)))
        self.pa = list(pas)

    def find(self, x: int) -> int:
        root = x
        while self.parent[root] != root:
            root = self.parent[root]
        while self.parent[x] != root:
            self.parent[x], x = root, self.parent[x]
        return root

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[rb] = ra
            self.pa[ra] = self.pa[ra] & self.pa[rb]


def _scan_order(job: Job) -> list[tuple[int, int, float]]:
    """Edges as (src position, dst position, rate) in Alg. 1's scan order."""
    position = {name: k for k, name in enumerate(job.names)}
    out: dict[str, list[tuple[str, float]]] = {name: [] for name in job.names}
    for src, dst, rate in job.edges:
        out[src].append((dst, rate))
    return [
        (position[src], position[dst], rate) for src in job.names for dst, rate in out[src]
    ]


def automatic_fusion(job: Job, score: str = SCORE_COMM) -> list[Component]:
    """Alg. 1: the components, ordered by their first operator in job order."""
    if score not in SCORES:
        raise InputError(f"unknown fusion score {score!r} (expected one of {SCORES})", "score")
    sets = _UnionFind([op.pa for op in job.operators])
    edges = _scan_order(job)
    if score == SCORE_COMM:
        order = sorted(range(len(edges)), key=lambda k: (-edges[k][2], k))
        for k in order:
            i, j, rate = edges[k]
            if rate <= 0:
                break
            ri, rj = sets.find(i), sets.find(j)
            if ri != rj and sets.pa[ri] & sets.pa[rj]:
                sets.union(ri, rj)
    else:
        heap = [(-len(job.operators[i].pa & job.operators[j].pa), k) for k, (i, j, _) in enumerate(edges)]
        heap = [entry for entry in heap if entry[0] < 0]
        heapq.heapify(heap)
        while heap:
            stored, k = heapq.heappop(heap)
            i, j, _ = edges[k]
            ri, rj = sets.find(i), sets.find(j)
            if ri == rj:
                continue
            current = len(sets.pa[ri] & sets.pa[rj])
            if current == 0:
                continue
            if current < -stored:
                heapq.heappush(heap, (-current, k))
                continue
            sets.union(ri, rj)
    groups: dict[int, list[str]] = {}
    for k, name in enumerate(job.names):
        groups.setdefault(sets.find(k), []).append(name)
    return [frozenset(members) for members in groups.values()]
