"""The MCS of a symbolic DAG: Fries' seed set (Alg. 2-4), Alg. 1, components and heads.

Each function mirrors one definition of :mod:`reference.fries.mcs` (the interpretation
choices are that module's and docs/fries.md's, not re-invented here), written as Z3 equations
over a :class:`~proofs.fries.dag.SymbolicDag`:

* seeds V' (Alg. 3 + 4): the reconfigured operators plus, for each reconfigured O, the earliest
  one-to-many ancestors of O that no enabled pruning rule removes (pruning *before* taking the
  earliest, per operator, as ``reference.fries.mcs.seed_ancestors`` does);
* edge-wise one-to-one rule: a ``replicate`` operator with exactly one output edge leading to a
  reconfigured operator;
* uniqueness rule: a unique operator U (possibly X itself) lies on every path from X to a
  reconfigured operator, strictly before the path's end;
* Alg. 1: red = seed or a red parent, blue = seed or a blue child, MCS = red and blue, MCS edges
  = view edges between MCS vertices; components = weakly connected components; heads = MCS
  vertices with no MCS input edge.

``tests/proofs/test_proofs_fries.py`` (``test_symbolic_mcs_is_the_reference_mcs``) checks on random
concrete DAGs that these equations compute exactly what ``reference.fries.mcs.fries_mcs`` computes, so a proof about the encoding
is a proof about the reference model's MCS.
"""

from __future__ import annotations

from dataclasses import dataclass

from proofs import z3util as z
from proofs.fries.dag import SymbolicDag
from proofs.z3util import BoolTerm


@dataclass(frozen=True)
class Variant:
    """Which Fries algorithm builds the seed set (the switches of ``fries_mcs``)."""

    name: str
    one_to_many: bool
    prune_edgewise: bool
    prune_uniqueness: bool


ALG2 = Variant("Alg. 2", one_to_many=False, prune_edgewise=False, prune_uniqueness=False)
ALG3 = Variant("Alg. 3", one_to_many=True, prune_edgewise=False, prune_uniqueness=False)
ALG4 = Variant("Alg. 4", one_to_many=True, prune_edgewise=True, prune_uniqueness=True)


def fries_seeds(dag: SymbolicDag, variant: Variant, prefix: str = "s") -> tuple[list[BoolTerm], list[BoolTerm]]:
    """V' of ``variant`` on ``dag``: one Boolean term per operator, and the defining
    constraints of the auxiliary variables."""
    n = dag.n
    if not variant.one_to_many:
        return list(dag.reconfigured), []
    eqs: list[BoolTerm] = []
    kept = [z.boolean(f"{prefix}kept_{x}") for x in range(n)]
    prunes: list[list[BoolTerm]] = [[] for _ in range(n)]
    if variant.prune_edgewise:
        for x in range(n):
            prunes[x].append(edgewise_prunable(dag, x))
    if variant.prune_uniqueness:
        avoiding = []
        for u in range(n):
            ra, ra_eqs = dag.reach_avoiding(u, prefix)
            avoiding.append(ra)
            eqs.extend(ra_eqs)
        for x in range(n):
            cuts = []
            for u in range(x, n):
                if u == x:
                    cuts.append(dag.unique[x])
                    continue
                escapes = z.any_of([z.all_of([dag.reconfigured[t], avoiding[u][x][t]])
                                    for t in range(x + 1, n)])
                cuts.append(z.all_of([dag.unique[u], dag.reach[x][u], z.negate(escapes)]))
            prunes[x].append(z.any_of(cuts))
    for x in range(n):
        eqs.append(kept[x] == z.negate(z.any_of(prunes[x])))
    seeds = []
    for v in range(n):
        sources = []
        for r in range(v + 1, n):
            def candidate(a: int, target: int = r) -> BoolTerm:
                return z.all_of([dag.many(a), dag.reach[a][target], kept[a]])

            earlier = [z.all_of([candidate(y), dag.reach[y][v]]) for y in range(v)]
            sources.append(z.all_of([dag.reconfigured[r], candidate(v),
                                     z.negate(z.any_of(earlier))]))
        seed = z.boolean(f"{prefix}seed_{v}")
        eqs.append(seed == z.any_of([dag.reconfigured[v], *sources]))
        seeds.append(seed)
    return seeds, eqs


def edgewise_prunable(dag: SymbolicDag, x: int) -> BoolTerm:
    """Alg. 4's edge-wise one-to-one rule for ``x``: a replicate operator with exactly one
    output edge leading to a reconfigured operator."""
    leading = [z.all_of([dag.view[x][c], dag.leads_to_reconfigured(c)]) for c in range(x + 1, dag.n)]
    return z.all_of([dag.kind["replicate"][x], z.count_is(leading, 1)])


class SymbolicMcs:
    """Alg. 1 on ``dag`` with seed terms ``seeds``, plus components and heads."""

    def __init__(self, dag: SymbolicDag, seeds: list[BoolTerm], prefix: str = "m") -> None:
        n = dag.n
        self.dag = dag
        self.seeds = seeds
        p = prefix
        self.red = [z.boolean(f"{p}red_{v}") for v in range(n)]
        self.blue = [z.boolean(f"{p}blue_{v}") for v in range(n)]
        self.vertex = [z.boolean(f"{p}vertex_{v}") for v in range(n)]
        eqs: list[BoolTerm] = []
        for v in range(n):
            eqs.append(self.red[v] == z.any_of(
                [seeds[v], *[z.all_of([dag.view[u][v], self.red[u]]) for u in range(v)]]))
            eqs.append(self.blue[v] == z.any_of(
                [seeds[v], *[z.all_of([dag.view[v][w], self.blue[w]]) for w in range(v + 1, n)]]))
            eqs.append(self.vertex[v] == z.all_of([self.red[v], self.blue[v]]))
        self.edge = [[z.all_of([dag.view[u][v], self.vertex[u], self.vertex[v]]) if u < v
                      else z.false() for v in range(n)] for u in range(n)]
        self.head = [z.all_of([self.vertex[v], z.negate(z.any_of([self.edge[u][v] for u in range(v)]))])
                     for v in range(n)]
        self._constraints = eqs

    def constraints(self) -> list[BoolTerm]:
        """Defining equations of red, blue and the MCS vertices."""
        return list(self._constraints)

    def closed_set(self, name: str) -> tuple[list[BoolTerm], list[BoolTerm]]:
        """A set X of MCS vertices closed under MCS edges in both directions, i.e. a union of
        components. "a and b are in different components" iff some such X holds a and not b;
        "a's component has no reconfigured operator" iff some such X holds a and no
        reconfigured operator. These existential forms keep the counterexample queries small
        (no transitive closure)."""
        n = self.dag.n
        member = [z.boolean(f"{name}_{v}") for v in range(n)]
        cons = [z.implies(member[v], self.vertex[v]) for v in range(n)]
        for u in range(n):
            for v in range(u + 1, n):
                cons.append(z.implies(self.edge[u][v], member[u] == member[v]))
        return member, cons

    def connectivity(self) -> tuple[list[list[BoolTerm]], list[BoolTerm]]:
        """``connected[u][v]``: u and v are MCS vertices of one component (weakly connected
        in the MCS), by Floyd-Warshall layers; with its defining equations. Used to read
        components off a model; the lemmas use :meth:`closed_set`."""
        n = self.dag.n
        eqs: list[BoolTerm] = []
        layer = [[self.vertex[u] if u == v else self.edge[min(u, v)][max(u, v)]
                  for v in range(n)] for u in range(n)]
        for k in range(n):
            nxt = []
            for u in range(n):
                row = []
                for v in range(n):
                    var = z.boolean(f"conn{k}_{u}_{v}")
                    eqs.append(var == z.any_of([layer[u][v], z.all_of([layer[u][k], layer[k][v]])]))
                    row.append(var)
                nxt.append(row)
            layer = nxt
        return layer, eqs
