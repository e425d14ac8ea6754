"""P-validity (DGS Def. 3.2) in near-linear time: the same four predicates as
:mod:`spec.dgs.validity` (``tags_known``, ``responsibility_unique``, ``v1_holds``,
``v2_holds``, same names, same answers - a hypothesis property in
``tests/spark_impl/dgs/test_dgs_plan_checks.py`` compares them on random plans), for plans of thousands of
workers (``streamproof dgs-plan`` with one stream per worker).

The spec states V2 over every pair of workers and V1 over every worker's whole subtree, which
is quadratic in the workers (and each ancestor query walks the tree again). Here:

* every worker's subtree *tags* are computed once, bottom-up;
* two workers are unrelated iff they lie in the two subtrees of their lowest common ancestor,
  so V2 is checked once per worker with two children, between the distinct tags of its left
  and of its right subtree; ``program.depends`` is asked once per distinct pair of tags
  (memoized), and a shared implementation tag between unrelated workers is a repeated
  implementation tag, found by one pass over the plan.

Cost: linear in the workers and implementation tags, plus one ``depends`` call per pair of
distinct tags that lie on unrelated workers (which V2 must ask about in any case) and the set
products of those tags per node.
"""

from __future__ import annotations

from typing import Any, Callable

from spec.dgs.plan import Plan
from spec.dgs.program import Program
from spec.dgs.streams import ImplTag
from spec.dgs.validity import well_typed


def tags_known(program: Program, plan: Plan) -> bool:
    """Every implementation tag's tag is a tag of the program."""
    return all(tag in program.tags for w in plan.workers() for tag, _ in w.impl_tags)


def responsibility_unique(plan: Plan) -> bool:
    """No implementation tag is the responsibility of two workers."""
    seen: set[ImplTag] = set()
    for worker in plan.workers():
        if worker.impl_tags & seen:
            return False
        seen |= worker.impl_tags
    return True


def subtree_tags(plan: Plan) -> dict[str, frozenset[Any]]:
    """Worker id -> the tags of its subtree (its wire's predicate), computed bottom-up once."""
    result: dict[str, frozenset[Any]] = {}
    for worker in reversed(plan.workers()):  # children before parents
        tags = {tag for tag, _ in worker.impl_tags}
        for child in worker.children:
            tags |= result[child.id]
        result[worker.id] = frozenset(tags)
    return result


def v1_holds(program: Program, plan: Plan) -> bool:
    """(V1) every worker well typed (:func:`spec.dgs.validity.v1_holds`)."""
    if plan.root.state_type != program.initial:
        return False
    below = subtree_tags(plan)
    return all(well_typed(program, w, below[w.id]) for w in plan.workers())


def memoized_depends(program: Program) -> Callable[[Any, Any], bool]:
    """``program.depends``, asked at most once per ordered pair of tags."""
    known: dict[tuple[Any, Any], bool] = {}

    def depends(a: Any, b: Any) -> bool:
        key = (a, b)
        if key not in known:
            known[key] = bool(program.depends(a, b))
        return known[key]

    return depends


def v2_holds(program: Program, plan: Plan) -> bool:
    """(V2) unrelated workers handle disjoint, pairwise independent implementation tags
    (:func:`spec.dgs.validity.v2_holds`; module docstring for how)."""
    owner: dict[ImplTag, str] = {}
    parents = plan.parents()
    for worker in plan.workers():
        for impl in worker.impl_tags:
            other = owner.get(impl)
            # walk order is parents first: every earlier holder is an ancestor of the latest
            # one (by induction), so checking the latest one is enough
            if other is not None and not _is_ancestor(parents, other, worker.id):
                return False
            owner[impl] = worker.id
    depends = memoized_depends(program)
    below = subtree_tags(plan)
    for worker in plan.workers():
        if len(worker.children) < 2:
            continue
        for k, left in enumerate(worker.children):
            for right in worker.children[k + 1:]:
                if any(depends(a, b) for a in below[left.id] for b in below[right.id]):
                    return False
    return True


def _is_ancestor(parents: dict[str, str | None], ancestor: str, worker_id: str) -> bool:
    """Whether ``ancestor`` is a proper ancestor of ``worker_id`` (a walk up the tree)."""
    current = parents[worker_id]
    while current is not None:
        if current == ancestor:
            return True
        current = parents[current]
    return False
