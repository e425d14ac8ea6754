"""The DGS suite's check of ``spark_impl.dgs.plans.balanced_plan`` (issue 12).

``balanced_plan`` builds the synchronization plans of ``dgs-plan`` and of the live front end;
the suite also draws some of its cases' plans with it, but a plan that comes out wrong is then
wrong for the reference *and* for Spark alike, so no differential oracle can see it. This check
compares what it builds with its definition (its docstring, DGS Def. 3.1), on random requests:

* one leaf set: the one-worker plan, the root owning the root's and the leaf's tags;
* otherwise the leaves, left to right, own exactly the requested leaf sets; the root owns the
  root's tags and every other inner worker none; every inner worker has two children whose
  subtrees' leaf counts differ by at most one (the left half is the smaller); the root has
  ``root_type`` and ``root_prims``, the others ``inner_type`` / ``inner_prims`` (default: the
  root's); worker ids are unique.
"""

from __future__ import annotations

import random
from typing import Any

from spec.dgs.plan import Plan, Worker

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


def check(n: int, seed: int) -> list[str]:
    """The problems of ``balanced_plan`` on ``n`` random requests (empty: it keeps its promise)."""
    from spark_impl.dgs.plans import balanced_plan

    rng = random.Random(f"balanced-plans:{seed}")
    found = []
    for _ in range(n):
        request = draw_request(rng)
        root_impl, leaf_impl, root_type, inner_type, root_prims, inner_prims = request
        try:
            plan = balanced_plan(root_impl, leaf_impl, root_type=root_type, inner_type=inner_type,
                                 root_prims=root_prims, inner_prims=inner_prims)
        except Exception as error:  # noqa: BLE001 - a crash is a finding
            found.append(f"balanced_plan raised {type(error).__name__}: {error}")
            continue
        wrong = problem(request, plan)
        if wrong is not None:
            found.append(wrong)
    return found
