"""Fitting a synchronization plan to ``N`` workers' worth of leaves (``dgs-plan --workers N``).

:func:`cap_leaves` collapses subtrees until the plan has at most ``n`` leaves: each step takes
the worker whose two children are leaves and whose subtree has the lowest total event rate
(ties: the worker id) and makes it a leaf responsible for all its subtree's implementation
tags. The result stays P-valid (Def. 3.2): V1 - the worker's state type already accepts every
tag of its subtree (V1 of the original plan), a leaf names no fork/join; V2 - the merged tags'
unrelated workers were unrelated to every worker of the subtree. :func:`check_plan` confirms it.
"""

from __future__ import annotations

from typing import Iterator, Mapping

from reference.dgs.validity import check_plan
from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program
from spec.dgs.streams import ImplTag
from spec.errors import InputError


def leaf_count(plan: Plan) -> int:
    """The number of leaves (workers without children)."""
    return sum(not w.children for w in plan.workers())


def cap_leaves(program: Program, plan: Plan, n: int, rates: Mapping[ImplTag, float]) -> Plan:
    """``plan`` with at most ``n`` (>= 1) leaves (module docstring)."""
    if n < 1:
        raise InputError(f"the number of workers must be at least 1, got {n}", "--workers")
    capped = plan
    for capped in collapses(plan, rates):
        if leaf_count(capped) <= n:
            break
    check_plan(program, capped)
    return capped


def collapses(plan: Plan, rates: Mapping[ImplTag, float]) -> Iterator[Plan]:
    """``plan``, then the plan after each collapse step (module docstring), one leaf fewer each
    time, down to a single leaf: ``cap_leaves(.., n, ..)`` is the first of them with at most
    ``n`` leaves, so trying every ``n`` (``dgs-plan --optimize``) walks this sequence once
    instead of collapsing from the full plan again for each ``n``."""
    root = plan.root
    yield plan
    while root.children:  # a worker with children has one whose children are all leaves
        candidates = [w for w in root.walk() if w.children and all(not c.children for c in w.children)]
        victim = min(candidates, key=lambda w: (sum(rates.get(t, 0.0) for t in w.subtree_impl_tags()), w.id))
        root = _collapse(root, victim.id)
        yield Plan(root)


def _collapse(worker: Worker, target: str) -> Worker:
    if worker.id == target:
        return Worker(worker.id, worker.state_type, worker.subtree_impl_tags(), node=worker.node)
    if not worker.children:
        return worker
    children = tuple(_collapse(c, target) for c in worker.children)
    return Worker(worker.id, worker.state_type, worker.impl_tags, worker.fork, worker.join, children, worker.node)
