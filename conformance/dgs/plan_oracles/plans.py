"""The DGS suite's oracle ``plan``: the synchronization plans spark_impl builds against their
definition (DGS Def. 3.1), and its plan validation against P-validity (Def. 3.2).

``balanced_plan`` builds the synchronization plans of ``dgs-plan`` and of the live front end;
the suite also draws some of its cases' plans with it, but a plan that comes out wrong is then
wrong for the reference *and* for Spark alike, so no differential oracle can see it. This oracle
compares what it builds with its definition (its docstring, DGS Def. 3.1), on random requests:

* one leaf set: the one-worker plan, the root owning the root's and the leaf's tags;
* otherwise the leaves, left to right, own exactly the requested leaf sets; the root owns the
  root's tags and every other inner worker none; every inner worker has two children whose
  subtrees' leaf counts differ by at most one (the left half is the smaller); the root has
  ``root_type`` and ``root_prims``, the others ``inner_type`` / ``inner_prims`` (default: the
  root's); worker ids are unique.

:func:`validity_problems` checks the executor's plan validation
(``spark_impl.dgs.topology.check_valid_plan``, which every DGS run calls) on the drawn cases:
each case's P-valid plan is accepted, and its P-invalid variants are refused with
``InputError`` (bad input, exit 2): a worker owning a tag the program does not have, one
implementation tag owned by two workers, and - each breaking one condition alone, so a
validation that skips that condition (``check_valid_plan`` "names the first Def. 3.2
condition the plan breaks": known tags, unique responsibility, V1, V2) accepts it - a leaf
given the root's fork/join names (V1 only: "a leaf names neither") and an implementation
tag moved to a worker outside its owner's branch (V2 only: "two unrelated workers have
dependent or shared implementation tags"; the first such move that keeps V1, found by search;
none exists when every tag outside the root is independent of the others). The oracle is
``spec.dgs.validity.is_valid``: a variant is refused exactly when it is P-invalid. (The
first two variants break V1 as well - an unknown tag is in no state type's predicate - so a
validation that checked only the first two conditions, or V1 in place of V2, passed them.)
A validation that accepts invalid plans runs them - on an invalid plan the
executor's outputs are not the program's, and the run would report that as a violation of
consistency rather than as bad input.

The builder and the validation judged are parameters (by default spark_impl's), so the oracle
can be tested on hand-built wrong ones.
"""

from __future__ import annotations

import random
from dataclasses import replace
from typing import Any, Callable, Sequence

from spec.dgs.plan import Plan, Worker
from spec.dgs.validity import is_valid, responsibility_unique, tags_known, v1_holds, v2_holds
from spec.errors import InputError

from spark_impl.dgs.plans import balanced_plan
from spark_impl.dgs.topology import check_valid_plan

from conformance.dgs.cases import DgsCase, program_of

Request = tuple[list[Any], list[list[Any]], str, str | None, tuple[str, str], tuple[str, str] | None]
"""``(root_impl, leaf_impl, root_type, inner_type, root_prims, inner_prims)``."""


def draw_request(rng: random.Random) -> Request:
    """A random request: 1-7 leaves of 0-3 tags each, types and primitives named or default."""
    def tags(n: int) -> list[Any]:
        return [(f"t{rng.randint(0, 99)}", f"s{rng.randint(0, 2)}") for _ in range(n)]

    leaves = [tags(rng.randint(0, 3)) for _ in range(rng.randint(1, 7))]
    inner = rng.choice((None, "Inner"))
    return (tags(rng.randint(0, 3)), leaves, rng.choice(("State", "Total")), inner,
            rng.choice((("fork", "join"), ("split", "add"))), rng.choice((None, ("split_i", "add_i"))))


def problem(request: Request, plan: Plan) -> str | None:
    """None when ``plan`` is what ``balanced_plan`` promises for ``request``, else why not."""
    root_impl, leaf_impl, root_type, inner_type, root_prims, inner_prims = request
    root = plan.root
    ids = [w.id for w in plan.workers()]
    if len(ids) != len(set(ids)):
        return f"worker ids repeat: {ids}"
    if len(leaf_impl) == 1:
        if root.children or root.impl_tags != frozenset(root_impl) | frozenset(leaf_impl[0]) or root.state_type != root_type:
            return f"one leaf set: expected the one-worker plan owning every tag, got {plan.to_json()}"
        return None
    leaves = [w for w in root.walk() if not w.children]
    if [w.impl_tags for w in leaves] != [frozenset(x) for x in leaf_impl]:
        return f"the leaves own {[sorted(w.impl_tags) for w in leaves]}, requested {leaf_impl}"
    return _inner_problem(root, True, request)


def _inner_problem(worker: Worker, top: bool, request: Request) -> str | None:
    root_impl, _, root_type, inner_type, root_prims, inner_prims = request
    state_type = root_type if top else (inner_type or root_type)
    if worker.state_type != state_type:
        return f"worker {worker.id} has state type {worker.state_type}, expected {state_type}"
    if not worker.children:
        return None
    prims = root_prims if top else (inner_prims or root_prims)
    if (worker.fork, worker.join) != prims:
        return f"worker {worker.id} forks/joins with {(worker.fork, worker.join)}, expected {prims}"
    if worker.impl_tags != (frozenset(root_impl) if top else frozenset()):
        return f"inner worker {worker.id} owns {sorted(worker.impl_tags)}"
    left, right = (sum(1 for w in child.walk() if not w.children) for child in worker.children)
    if not 0 <= right - left <= 1:
        return f"worker {worker.id} is not balanced: {left} leaves left, {right} right"
    return _inner_problem(worker.children[0], False, request) or _inner_problem(worker.children[1], False, request)


Builder = Callable[..., Plan]
"""A plan builder called as ``balanced_plan`` is (the leaf sets by position or by name)."""

Validation = Callable[[Any, Plan], None]
"""A plan validation called as ``check_valid_plan(program, plan)``: InputError when invalid."""


def check(n: int, seed: int, build: Builder = balanced_plan) -> list[str]:
    """The problems of ``build`` on ``n`` random requests (empty: it keeps the promise of
    ``balanced_plan``'s docstring, module docstring)."""
    rng = random.Random(f"balanced-plans:{seed}")
    found = []
    # first, one leaf whose tags overlap the root's (random tags rarely do)
    fixed: list[Request] = [([("t1", "s0"), ("t2", "s1")], [[("t2", "s1"), ("t3", "s0")]], "State", None,
                             ("fork", "join"), None)]
    for index in range(n + len(fixed)):
        request = fixed[index] if index < len(fixed) else draw_request(rng)
        root_impl, leaf_impl, root_type, inner_type, root_prims, inner_prims = request
        try:
            if index % 2:  # the two documented call forms: the tags by position, or by name
                plan = build(root_impl=root_impl, leaf_impl=leaf_impl, root_type=root_type,
                             inner_type=inner_type, root_prims=root_prims, inner_prims=inner_prims)
            else:
                plan = build(root_impl, leaf_impl, root_type=root_type, inner_type=inner_type,
                             root_prims=root_prims, inner_prims=inner_prims)
        except Exception as error:  # noqa: BLE001 - a crash is a finding
            found.append(f"balanced_plan raised {type(error).__name__}: {error}")
            continue
        wrong = problem(request, plan)
        if wrong is not None:
            found.append(wrong)
    return found


def validity_problems(cases: Sequence[DgsCase], validate: Validation = check_valid_plan) -> list[str]:
    """The problems of ``validate`` on ``cases`` and their invalid variants (module docstring;
    empty: it accepts exactly the valid ones tried)."""
    found = []
    for index, case in enumerate(cases):
        program, plan = program_of(case.name), case.plan
        workers = plan.workers()
        stream = sorted(case.streams)[0] if case.streams else "s0"
        unknown = unknown_tag(plan, stream)
        variants: list[tuple[str, Plan, bool]] = [("valid", plan, True),
                                                  ("an unknown tag", unknown, tags_known(program, unknown))]
        owner = next((w for w in workers if w.impl_tags), None)
        other = next((w for w in workers if owner is not None and w.id != owner.id), None)
        if owner is not None and other is not None:
            tag = sorted(owner.impl_tags)[0]
            twice = _changed(plan, other.id, lambda w: replace(w, impl_tags=w.impl_tags | {tag}))  # noqa: B023 - applied at once
            variants.append((f"{tag} owned by {owner.id} and {other.id}", twice, responsibility_unique(twice)))
        variants += [(what, candidate, is_valid(program, candidate))
                     for what, candidate in _one_condition_broken(program, plan)]
        for what, candidate, valid in variants:
            try:
                validate(program, candidate)
                accepted = True
            except InputError:
                accepted = False
            except Exception as error:  # noqa: BLE001 - a crash is a finding
                found.append(f"case {index}: validating the plan with {what} raised {type(error).__name__}: {error}")
                continue
            if accepted != valid:
                found.append(f"case {index} ({case.name}): the plan {'with ' + what if what != 'valid' else ''} was "
                             f"{'accepted' if accepted else 'refused'}; it is {'' if valid else 'not '}P-valid "
                             f"(DGS Def. 3.2)")
    return found


def _one_condition_broken(program: Any, plan: Plan) -> list[tuple[str, Plan]]:
    """Variants of ``plan`` (P-valid) that break V1 alone and V2 alone (module docstring), each
    with what was changed; a variant that breaks another condition too is not returned."""

    def only(candidate: Plan, v1: bool, v2: bool) -> bool:
        return (tags_known(program, candidate) and responsibility_unique(candidate)
                and v1_holds(program, candidate) == v1 and v2_holds(program, candidate) == v2)

    variants: list[tuple[str, Plan]] = []
    root, workers = plan.root, plan.workers()
    leaf = next(w for w in workers if not w.children)
    names = (root.fork or "fork", root.join or "join")
    named = _changed(plan, leaf.id, lambda w: replace(w, fork=names[0], join=names[1]))
    if only(named, False, True):
        variants.append((f"leaf {leaf.id} naming the fork/join {names} (V1 broken only)", named))
    for source in workers:
        related = {*plan.ancestors(source.id)} | {w.id for w in source.walk()}
        for impl in sorted(source.impl_tags, key=repr):
            for target in workers:
                if target.id in related:
                    continue
                # both functions are applied at once, within this iteration
                dropped = _changed(plan, source.id, lambda w: replace(w, impl_tags=w.impl_tags - {impl}))  # noqa: B023
                moved = _changed(dropped, target.id, lambda w: replace(w, impl_tags=w.impl_tags | {impl}))  # noqa: B023
                if only(moved, True, False):
                    return variants + [(f"{impl} moved from {source.id} to {target.id} (V2 broken only)", moved)]
    return variants


def unknown_tag(plan: Plan, stream: str) -> Plan:
    """``plan`` with its last worker also owning a tag no program has (P-invalid)."""
    return _changed(plan, plan.workers()[-1].id,
                    lambda w: replace(w, impl_tags=w.impl_tags | {("no-such-tag", stream)}))


def _changed(plan: Plan, worker_id: str, change: Callable[[Worker], Worker]) -> Plan:
    """``plan`` with worker ``worker_id`` replaced by ``change(worker)``."""
    def walk(worker: Worker) -> Worker:
        if worker.id == worker_id:
            worker = change(worker)
        return replace(worker, children=tuple(walk(child) for child in worker.children))

    return Plan(walk(plan.root))
