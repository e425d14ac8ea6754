"""Enorm Alg. 1 (automatic fusion), stated literally (Enorm §4.4.1).

Each operator starts in its own component. Each round scans every operator ``i`` (in job
order) and each downstream ``j`` (in edge order), skips pairs already in one component or
whose components share no partition attribute, and remembers the pair with the strictly
largest score (so the first such pair wins ties). If that score is positive, the two
components are fused and the scan restarts; otherwise fusion ends.

Scores (§4.4.1, §7.6):

* ``"comm"`` (the paper's "score = COMM", Alg. 1 line 16): the output rate ``i -> j``;
* ``"pa"`` (the "alternative score", "score = PA"): the number of partition attributes the two
  *components* have in common. Interpretation choice: "taking the intersection of the
  partitioning attributes and summing the values" - we count each shared attribute as 1 and
  intersect the components' PA (the operators' PA would ignore what fusion already fixed).

This module recomputes everything every round (cubic at worst); ``reference.fusion.greedy``
is the efficient version and is checked against this one.
"""

from __future__ import annotations

from typing import Callable

from spec.errors import InputError
from spec.fusion.components import Component, component_pa
from spec.fusion.job import Job

SCORE_COMM = "comm"
SCORE_PA = "pa"
SCORES = (SCORE_COMM, SCORE_PA)

Score = Callable[[Job, str, str, frozenset[str], frozenset[str]], float]


def score_function(name: str) -> Score:
    """The score called ``name`` (``"comm"`` or ``"pa"``)."""
    if name == SCORE_COMM:
        return lambda job, i, j, src_pa, dst_pa: job.rate(i, j)
    if name == SCORE_PA:
        return lambda job, i, j, src_pa, dst_pa: float(len(src_pa & dst_pa))
    raise InputError(f"unknown fusion score {name!r} (expected one of {SCORES})", "score")


def automatic_fusion(job: Job, score: str = SCORE_COMM) -> list[Component]:
    """Alg. 1: the components, ordered by their first operator in job order."""
    scorer = score_function(score)
    fused: dict[str, Component] = {name: frozenset({name}) for name in job.names}
    while True:
        best = 0.0
        pair: tuple[str, str] | None = None
        for i in job.names:
            src_component = fused[i]
            src_pa = component_pa(job, src_component)
            for j in job.downstream(i):
                if j in src_component:
                    continue
                dst_component = fused[j]
                dst_pa = component_pa(job, dst_component)
                if not src_pa & dst_pa:
                    continue
                value = scorer(job, i, j, src_pa, dst_pa)
                if value > best:
                    best, pair = value, (i, j)
        if pair is None:
            break
        merged = fused[pair[0]] | fused[pair[1]]
        for name in merged:
            fused[name] = merged
    ordered: list[Component] = []
    for name in job.names:
        if fused[name] not in ordered:
            ordered.append(fused[name])
    return ordered
