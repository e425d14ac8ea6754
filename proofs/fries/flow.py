"""Which operators one data transaction can reach, and with how many tuples (Fries Def. 4.2,
4.4, 5.1, 5.2, Alg. 4's uniqueness property) - as Z3 witnesses.

The scope of a source tuple is a tree of tuples (Def. 4.2). Two *distinct* tuples x1, x2 of one
transaction, at operators a and b, exist in some run iff either

* **chain**: one is an ancestor of the other, so there is a path ``a -> .. -> b`` (every
  operator is reachable from a source, and a one-to-one operator may route its output to any
  child; a filter may also drop it, which only removes runs), or
* **branch**: their latest common ancestor tuple y was processed by an operator w that emitted
  two output pairs towards them. Then w is ``one-to-many`` (any number of pairs, also two to
  the same child) or ``replicate`` (at most one pair per output edge, so two *different*
  children c1 != c2), w is not ``unique`` (a unique operator emits at most one output tuple per
  transaction), and there are paths c1 -> .. -> a and c2 -> .. -> b, with no unique operator
  strictly inside both paths (it would receive both tuples of this transaction and emit for
  at most one).

:class:`Branch` encodes the branch case with one-hot selectors for w, c1, c2, a, b and two
*exact* paths (selected edges with in/out-degree one, which in a DAG forms exactly one path), so
a model is a concrete tuple tree, never an over-approximation.
"""

from __future__ import annotations

from proofs import z3util as z
from proofs.fries.dag import SymbolicDag
from proofs.z3util import BoolTerm, Model


def one_hot(name: str, n: int) -> list[BoolTerm]:
    """``n`` Booleans meant to select one operator (the constraint is added by the user)."""
    return [z.boolean(f"{name}_{v}") for v in range(n)]


def selected(model: Model, selector: list[BoolTerm]) -> int:
    """The operator a one-hot selector picks in ``model``."""
    picks = [v for v, term in enumerate(selector) if z.holds(model, term)]
    if len(picks) != 1:
        raise ValueError(f"selector picks {picks}, expected exactly one operator")
    return picks[0]


class Path:
    """An exact path from the operator selected by ``start`` to the one selected by ``end``."""

    def __init__(self, dag: SymbolicDag, name: str, start: list[BoolTerm], end: list[BoolTerm]) -> None:
        n = dag.n
        self.start = start
        self.end = end
        self.step = [[z.boolean(f"{name}_step_{u}_{v}") if u < v else z.false() for v in range(n)]
                     for u in range(n)]
        self.on = [z.any_of([start[v], *[self.step[u][v] for u in range(v)]]) for v in range(n)]
        cons: list[BoolTerm] = []
        for u in range(n):
            for v in range(u + 1, n):
                cons.append(z.implies(self.step[u][v], z.all_of([dag.view[u][v], self.on[u]])))
        for v in range(n):
            outs = [self.step[v][w] for w in range(v + 1, n)]
            ins = [self.step[u][v] for u in range(v)]
            cons.append(z.implies(end[v], z.all_of([self.on[v], z.count_is(outs, 0)])))
            cons.append(z.implies(z.all_of([self.on[v], z.negate(end[v])]), z.count_is(outs, 1)))
            cons.append(z.implies(start[v], z.count_is(ins, 0)))
            cons.append(z.implies(z.negate(start[v]), z.at_most_one(ins)))
        self._constraints = cons

    def constraints(self) -> list[BoolTerm]:
        """Degree constraints making the selected edges one path from start to end."""
        return list(self._constraints)

    def nodes(self, model: Model) -> list[int]:
        """The path's operators in order, read from ``model``."""
        node = selected(model, self.start)
        order = [node]
        while True:
            nxt = [w for w in range(node + 1, len(self.step)) if z.holds(model, self.step[node][w])]
            if not nxt:
                return order
            node = nxt[0]
            order.append(node)


class Branch:
    """Two distinct tuples of one transaction at ``end1`` and ``end2`` whose latest common
    ancestor was processed by ``w`` (the *branch* case of the module docstring)."""

    def __init__(self, dag: SymbolicDag, name: str, end1: list[BoolTerm], end2: list[BoolTerm]) -> None:
        n = dag.n
        self.dag = dag
        self.w = one_hot(f"{name}_w", n)
        self.c1 = one_hot(f"{name}_c1", n)
        self.c2 = one_hot(f"{name}_c2", n)
        self.path1 = Path(dag, f"{name}_p1", self.c1, end1)
        self.path2 = Path(dag, f"{name}_p2", self.c2, end2)
        cons = [z.exactly_one(self.w), z.exactly_one(self.c1), z.exactly_one(self.c2)]
        cons += self.path1.constraints() + self.path2.constraints()
        for v in range(n):
            branching = z.all_of([dag.many(v), z.negate(dag.unique[v])])
            cons.append(z.implies(self.w[v], branching))
            for c in range(n):
                edge = dag.view[v][c]
                cons.append(z.implies(z.all_of([self.w[v], self.c1[c]]), edge))
                cons.append(z.implies(z.all_of([self.w[v], self.c2[c]]), edge))
            # replicate: one pair per output edge, so the two children differ
            cons.append(z.implies(z.all_of([self.w[v], dag.kind["replicate"][v]]),
                                  z.negate(z.any_of([z.all_of([self.c1[c], self.c2[c]])
                                                     for c in range(n)]))))
            shared_inner = z.all_of([dag.unique[v], self.path1.on[v], self.path2.on[v],
                                     z.negate(end1[v]), z.negate(end2[v])])
            cons.append(z.negate(shared_inner))
        self._constraints = cons

    def constraints(self) -> list[BoolTerm]:
        """The branch witness's constraints."""
        return list(self._constraints)

    def nodes_off(self, inside: list[BoolTerm]) -> BoolTerm:
        """Some operator of w or of either path is not in ``inside`` (a vertex set)."""
        return z.any_of([z.all_of([z.any_of([self.w[v], self.path1.on[v], self.path2.on[v]]),
                                   z.negate(inside[v])]) for v in range(self.dag.n)])


class LooseBranch:
    """The branch case with paths replaced by reachability, and the unique-operator condition
    weakened to "no single unique operator U cuts every path c1 -> end1 *and* every path
    c2 -> end2" (with real paths P1, P2 sharing no inner unique operator, no U lies on both,
    so none cuts both). Every real branch is a loose one, so if no loose branch exists, no
    branch does. Far cheaper (no path variables); the lemmas try it first and fall back to the
    exact :class:`Branch` only when it has a model (which may be spurious)."""

    def __init__(self, dag: SymbolicDag, name: str, end1: list[BoolTerm], end2: list[BoolTerm]) -> None:
        n = dag.n
        self.dag = dag
        self.w, self.c1, self.c2 = one_hot(f"{name}_w", n), one_hot(f"{name}_c1", n), one_hot(f"{name}_c2", n)
        self.end1, self.end2 = end1, end2
        cons = [z.exactly_one(self.w), z.exactly_one(self.c1), z.exactly_one(self.c2)]
        for v in range(n):
            cons.append(z.implies(self.w[v], z.all_of([dag.many(v), z.negate(dag.unique[v])])))
            for c in range(n):
                cons.append(z.implies(z.all_of([self.w[v], z.any_of([self.c1[c], self.c2[c]])]),
                                      dag.view[v][c]))
            cons.append(z.implies(z.all_of([self.w[v], dag.kind["replicate"][v]]),
                                  z.negate(z.any_of([z.all_of([self.c1[c], self.c2[c]])
                                                     for c in range(n)]))))
        cons.append(_reaches(dag, self.c1, end1))
        cons.append(_reaches(dag, self.c2, end2))
        self._definitions: list[BoolTerm] = []
        for u in range(n):
            avoid, eqs = dag.reach_avoiding(u, f"{name}_")
            self._definitions += eqs
            cuts1 = _cuts(dag, u, avoid, self.c1, end1)
            cuts2 = _cuts(dag, u, avoid, self.c2, end2)
            cons.append(z.negate(z.all_of([dag.unique[u], cuts1, cuts2])))
        self._conditions = cons

    def constraints(self) -> list[BoolTerm]:
        """The loose witness's constraints (definitions and conditions)."""
        return self._definitions + self._conditions

    def definitions(self) -> list[BoolTerm]:
        """Defining equations of auxiliary variables (no freedom)."""
        return list(self._definitions)

    def conditions(self) -> list[BoolTerm]:
        """What a loose branch must satisfy."""
        return list(self._conditions)

    def nodes_off(self, inside: list[BoolTerm]) -> BoolTerm:
        """w, or some operator on some path c1 -> end1 or c2 -> end2, is not in ``inside``."""
        n, star = self.dag.n, self.dag.reach_star
        terms = []
        for k in range(n):
            on1 = z.any_of([z.all_of([self.c1[i], self.end1[j], star(i, k), star(k, j)])
                            for i in range(n) for j in range(n)])
            on2 = z.any_of([z.all_of([self.c2[i], self.end2[j], star(i, k), star(k, j)])
                            for i in range(n) for j in range(n)])
            terms.append(z.all_of([z.any_of([self.w[k], on1, on2]), z.negate(inside[k])]))
        return z.any_of(terms)


def _cuts(dag: SymbolicDag, u: int, avoid: list[list[BoolTerm]], start: list[BoolTerm],
          end: list[BoolTerm]) -> BoolTerm:
    """Operator ``u`` lies strictly inside every path start -> end (``u`` may be the start,
    which processes the tuple and passes it on, but not the end)."""
    n = dag.n
    terms = []
    for i in range(n):
        for j in range(i + 1, n):
            if u == j:
                continue
            inside = z.true() if u == i else z.all_of([dag.reach[i][u], z.negate(avoid[i][j])]) \
                if i < u < j else z.false()
            terms.append(z.all_of([start[i], end[j], inside]))
    return z.any_of(terms)


def _reaches(dag: SymbolicDag, start: list[BoolTerm], end: list[BoolTerm]) -> BoolTerm:
    n = dag.n
    return z.any_of([z.all_of([start[i], end[j], dag.reach_star(i, j)])
                     for i in range(n) for j in range(i, n)])


def chain(dag: SymbolicDag, a: list[BoolTerm], b: list[BoolTerm]) -> BoolTerm:
    """A non-empty path from the operator selected by ``a`` to the one selected by ``b``."""
    n = dag.n
    return z.any_of([z.all_of([a[i], b[j], dag.reach[i][j]]) for i in range(n) for j in range(i + 1, n)])


def chain_leaves(dag: SymbolicDag, a: list[BoolTerm], b: list[BoolTerm], inside: list[BoolTerm]) -> BoolTerm:
    """Some path from ``a`` to ``b`` passes an operator outside ``inside``."""
    n = dag.n
    terms = []
    for i in range(n):
        for j in range(i + 1, n):
            for k in range(i + 1, j):
                terms.append(z.all_of([a[i], b[j], dag.reach[i][k], dag.reach[k][j],
                                       z.negate(inside[k])]))
    return z.any_of(terms)
