"""Random "large jobs" for fusion experiments (Enorm §7, "Large Job"; §7.6).

Two steps, as in the paper:

1. Partition attributes: every operator gets a random subset of ``attributes`` (30) attribute
   names; the subset size starts at half of them and changes by a random step for each new
   operator. Interpretation choices: the step is uniform in ``[-3, 3]``, sizes are clipped to
   ``[1, attributes]``, each attribute's domain size is uniform in ``[2, 100]``, and operator
   kinds (map / compute / consolidate) are uniform (they do not affect Alg. 1).
2. Communication: the number of levels (the longest path) is uniform in
   ``[3, floor(0.75 n)]``; operators are divided, in order, into that many contiguous levels of
   near-equal size; every operator sends ``X`` tuples to the operators of the next level: the
   first gets ``Y = U(0, X) * U(0, 1)``, then ``X`` becomes ``X - Y`` for the next one, and so
   on. Interpretation choice: ``X`` starts at 1000 per operator and every pair of consecutive
   levels is fully connected (tiny rates included).
"""

from __future__ import annotations

import random

from spec.errors import InputError
from spec.fusion.job import Job, Operator, OperatorKind

TUPLES_PER_OPERATOR = 1000.0


def random_job(operators: int, rng: random.Random, attributes: int = 30) -> Job:
    """One random job of ``operators`` operators (at least 4) over ``attributes`` attributes."""
    if operators < 4:
        raise InputError(f"a large job needs at least 4 operators, got {operators}", "operators")
    if attributes < 1:
        raise InputError(f"need at least one attribute, got {attributes}", "attributes")
    names = [f"a{k}" for k in range(attributes)]
    domains: dict[str, int | None] = {a: rng.randint(2, 100) for a in names}
    kinds = list(OperatorKind)
    size = max(1, attributes // 2)
    ops: list[Operator] = []
    for k in range(operators):
        if k > 0:
            size = min(attributes, max(1, size + rng.randint(-3, 3)))
        ops.append(Operator(f"o{k}", rng.choice(kinds), frozenset(rng.sample(names, size))))
    levels = rng.randint(3, max(3, (3 * operators) // 4))
    base, extra = divmod(operators, levels)
    layers: list[list[str]] = []
    start = 0
    for level in range(levels):
        width = base + (1 if level < extra else 0)
        layers.append([op.name for op in ops[start : start + width]])
        start += width
    edges: list[tuple[str, str, float]] = []
    for upper, lower in zip(layers, layers[1:]):
        for src in upper:
            budget = TUPLES_PER_OPERATOR
            for dst in lower:
                sent = rng.uniform(0.0, budget) * rng.random()
                budget -= sent
                edges.append((src, dst, sent))
    return Job(tuple(ops), domains, tuple(edges))
