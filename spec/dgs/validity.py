"""P-validity of a synchronization plan (DGS Def. 3.2), stated declaratively.

(V1) well typed: every worker's state type is a state type of P; the root's is ``State_0``
(its initial state is ``init``); the state type "can handle the tags" of the worker - we
read this as: every tag of the worker's *subtree* satisfies ``pred_i`` (the subtree's tags
are the predicate of the worker's wire, and Def. 2.2 requires a wire's predicate to imply
``pred_i``); every tag is a tag of P; a worker has zero or two children (forks are binary);
a worker with children names a fork ``State_i -> (State_left, State_right)`` and a join
``(State_left, State_right) -> State_i`` typed by its own and its children's state types; a
leaf names neither.

(V2) any two workers with no ancestor/descendant relation have disjoint and pairwise
independent implementation-tag sets (dependence on implementation tags is dependence on
their tags, §3.1).

Plus (Def. 3.1 "the set of implementation tags that the worker is responsible for"): no
implementation tag belongs to two workers, so each input event has one responsible worker.

:func:`is_valid` is the obviously-right statement; ``reference.dgs.validity.check_plan`` is
the version with clear error messages, checked against it in ``tests/reference/dgs/test_dgs_validity.py``.
"""

from __future__ import annotations

from itertools import combinations

from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program


def v1_holds(program: Program, plan: Plan) -> bool:
    """(V1) every worker well typed (module docstring)."""
    if plan.root.state_type != program.initial:
        return False
    return all(well_typed(program, w, w.subtree_tags()) for w in plan.workers())


def well_typed(program: Program, worker: Worker, subtree_tags: frozenset[object]) -> bool:
    """V1 for one worker whose subtree's tags are ``subtree_tags`` (passed in, so a caller
    that gathers every subtree's tags once, bottom-up, need not walk the subtree again)."""
    st = program.state_types.get(worker.state_type)
    if st is None or not subtree_tags <= st.pred:
        return False
    if not worker.children:
        return worker.fork is None and worker.join is None
    if len(worker.children) != 2:
        return False
    left, right = worker.children[0].state_type, worker.children[1].state_type
    fork = program.forks.get(worker.fork or "")
    join = program.joins.get(worker.join or "")
    return (
        fork is not None
        and join is not None
        and (fork.source, fork.left, fork.right) == (worker.state_type, left, right)
        and (join.left, join.right, join.target) == (left, right, worker.state_type)
    )


def v2_holds(program: Program, plan: Plan) -> bool:
    """(V2) unrelated workers handle disjoint, pairwise independent implementation tags."""
    workers = plan.workers()
    for a, b in combinations(workers, 2):
        if a.id in plan.ancestors(b.id) or b.id in plan.ancestors(a.id):
            continue
        if a.impl_tags & b.impl_tags:
            return False
        if any(program.depends(ta, tb) for ta, _ in a.impl_tags for tb, _ in b.impl_tags):
            return False
    return True


def responsibility_unique(plan: Plan) -> bool:
    """No implementation tag is the responsibility of two workers."""
    workers = plan.workers()
    return all(not (a.impl_tags & b.impl_tags) for a, b in combinations(workers, 2))


def tags_known(program: Program, plan: Plan) -> bool:
    """Every implementation tag's tag is a tag of the program."""
    return all(tag in program.tags for w in plan.workers() for tag, _ in w.impl_tags)


def is_valid(program: Program, plan: Plan) -> bool:
    """P-validity (Def. 3.2): V1, V2, known tags, unique responsibility."""
    return (
        tags_known(program, plan)
        and v1_holds(program, plan)
        and v2_holds(program, plan)
        and responsibility_unique(plan)
    )
