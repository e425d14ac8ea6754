"""Random Fries dataflows for property tests: a hypothesis strategy over every operator kind,
and seeded DAGs of the kinds the simulator's scenario catalogue has."""

from __future__ import annotations

import random

from hypothesis import strategies as st

from proofs.fries.dag import KINDS
from spec.fries.dataflow import Dataflow, Operator, OperatorKind

NAMES = "ABCDEFG"


@st.composite
def dags(draw: st.DrawFn, max_size: int = 7,
         kinds: tuple[OperatorKind, ...] = tuple(OperatorKind)) -> Dataflow:
    """Random DAGs: random kinds and uniqueness flags, edges from earlier to later in a
    random permutation (so declaration order is not a topological order). Operators without
    input edges are sources and only they are (the Dataflow invariant)."""
    size = draw(st.integers(1, max_size))
    names = draw(st.permutations(NAMES[:size]))
    edges = tuple((names[i], names[j]) for i in range(size) for j in range(i + 1, size)
                  if draw(st.integers(0, 2)) == 0)
    fed = {dst for _, dst in edges}
    inner = tuple(k for k in kinds if k is not OperatorKind.SOURCE) or (OperatorKind.ONE_TO_ONE,)
    ops = tuple(Operator(n, draw(st.sampled_from(inner)) if n in fed else OperatorKind.SOURCE,
                         draw(st.booleans())) for n in names)
    shuffled = draw(st.permutations(ops))
    return Dataflow(tuple(shuffled), edges)


def random_flows(rng: random.Random, count: int) -> list[tuple[Dataflow, list[str]]]:
    """Random DAGs of 3-5 operators (topological numbering; parentless = source), kinds
    without the uniqueness property (the scenario catalogue has none), and a non-empty
    reconfiguration of non-sources."""
    flows: list[tuple[Dataflow, list[str]]] = []
    while len(flows) < count:
        n = rng.randint(3, 5)
        edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5]
        has_parent = sorted({j for _, j in edges})
        if not has_parent:
            continue
        ops = [Operator(f"O{v}", OperatorKind("source" if v not in has_parent
                                              else rng.choice(KINDS[1:]))) for v in range(n)]
        flow = Dataflow(tuple(ops), tuple((f"O{i}", f"O{j}") for i, j in edges))
        chosen = rng.sample(has_parent, rng.randint(1, len(has_parent)))
        flows.append((flow, sorted(f"O{v}" for v in chosen)))
    return flows
