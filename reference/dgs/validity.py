"""P-validity (DGS Def. 3.2) with clear errors: :func:`check_plan` raises an InputError that
names the rule (V1 / V2), the worker(s) and the tag(s) at fault.

The rules are those of ``spec.dgs.validity`` (read its docstring for the interpretation);
``tests/reference/dgs/test_dgs_validity.py`` checks that :func:`check_plan` accepts exactly the plans
``spec.dgs.validity.is_valid`` accepts. V2 is checked per pair of sibling subtrees (two
workers are unrelated iff they lie in the two subtrees of their lowest common ancestor),
between the distinct tags of each side (one representative worker and implementation tag per
tag, the first in walk order), asking ``depends`` once per pair of tags; every subtree's tags
are gathered once, bottom-up. The cost is near-linear in the workers plus one ``depends`` per
pair of distinct tags on unrelated workers (plans of thousands of workers check in well under a
second, ``benchmarks/cli_scaling.py``).
"""

from __future__ import annotations

from typing import Any

from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program, short_repr
from spec.dgs.streams import ImplTag
from spec.errors import InputError


def impl_text(impl: ImplTag) -> str:
    """An implementation tag in words: ``('r', 1)@s0``."""
    return f"{short_repr(impl[0], 60)}@{impl[1]}"


def check_plan(program: Program, plan: Plan) -> None:
    """Raise an InputError unless ``plan`` is P-valid for ``program``."""
    owner: dict[ImplTag, str] = {}
    for worker in plan.workers():
        for impl in sorted(worker.impl_tags, key=repr):
            if impl[0] not in program.tags:
                raise InputError(f"tag {short_repr(impl[0])} is not a tag of {program.name}", f"worker {worker.id!r}")
            if impl in owner:
                raise InputError(
                    f"implementation tag {impl_text(impl)} is handled by two workers, {owner[impl]!r} and {worker.id!r}",
                    "plan",
                )
            owner[impl] = worker.id
    if plan.root.state_type != program.initial:
        raise InputError(
            f"V1: the root's state type must be the initial type {program.initial!r}, not {plan.root.state_type!r}",
            f"worker {plan.root.id!r}",
        )
    below = _subtree_representatives(plan)
    for worker in plan.workers():
        _check_v1(program, worker, frozenset(below[worker.id]))
    known: dict[tuple[Any, Any], bool] = {}
    for worker in plan.workers():
        if len(worker.children) == 2:
            _check_v2(program, below[worker.children[0].id], below[worker.children[1].id], known)


Representatives = dict[Any, tuple[str, ImplTag]]
"""Tag -> the first (walk order) worker id and implementation tag of a subtree carrying it."""


def _subtree_representatives(plan: Plan) -> dict[str, Representatives]:
    """Every worker's subtree tags with their representatives, gathered bottom-up once."""
    result: dict[str, Representatives] = {}
    for worker in reversed(plan.workers()):  # children before parents
        own: Representatives = {}
        for impl in sorted(worker.impl_tags, key=repr):
            own.setdefault(impl[0], (worker.id, impl))
        for child in worker.children:
            for tag, where in result[child.id].items():
                own.setdefault(tag, where)
        result[worker.id] = own
    return result


def _check_v1(program: Program, worker: Worker, subtree_tags: frozenset[Any]) -> None:
    where = f"worker {worker.id!r}"
    st = program.state_types.get(worker.state_type)
    if st is None:
        raise InputError(f"V1: unknown state type {worker.state_type!r} (known: {sorted(program.state_types)})", where)
    outside = sorted(subtree_tags - st.pred, key=repr)
    if outside:
        raise InputError(
            f"V1: state type {st.name!r} cannot process tag {short_repr(outside[0])}, which this worker "
            "or a descendant handles",
            where,
        )
    if not worker.children:
        if worker.fork is not None or worker.join is not None:
            raise InputError("V1: a leaf worker has no fork or join", where)
        return
    if len(worker.children) != 2:
        raise InputError(f"V1: a worker has 0 or 2 children, not {len(worker.children)}", where)
    left, right = (c.state_type for c in worker.children)
    fork = program.forks.get(worker.fork or "")
    join = program.joins.get(worker.join or "")
    if fork is None:
        raise InputError(f"V1: unknown fork {worker.fork!r} (known: {sorted(program.forks)})", where)
    if join is None:
        raise InputError(f"V1: unknown join {worker.join!r} (known: {sorted(program.joins)})", where)
    if (fork.source, fork.left, fork.right) != (worker.state_type, left, right):
        raise InputError(
            f"V1: fork {fork.name!r} has type {fork.source} -> ({fork.left}, {fork.right}), but the worker and "
            f"its children have types {worker.state_type} -> ({left}, {right})",
            where,
        )
    if (join.left, join.right, join.target) != (left, right, worker.state_type):
        raise InputError(
            f"V1: join {join.name!r} has type ({join.left}, {join.right}) -> {join.target}, but the children and "
            f"the worker have types ({left}, {right}) -> {worker.state_type}",
            where,
        )


def _check_v2(program: Program, left: Representatives, right: Representatives,
              known: dict[tuple[Any, Any], bool]) -> None:
    """Every tag of the left subtree against every tag of the right one (``known`` memoizes
    ``depends``). A shared implementation tag never gets here: :func:`check_plan` refuses
    one held by two workers first."""
    for ta, (a, ia) in left.items():
        for tb, (b, ib) in right.items():
            if (ta, tb) not in known:
                known[ta, tb] = bool(program.depends(ta, tb))
            if known[ta, tb]:
                raise InputError(
                    f"V2: workers {a!r} and {b!r} are not ancestor-related, but "
                    f"{impl_text(ia)} ({a}) depends on {impl_text(ib)} ({b})",
                    "plan",
                )
