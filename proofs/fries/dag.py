"""A *symbolic* dataflow: every DAG on ``n`` operators at once (Fries Def. 5.1-5.2, §6.3, §7.1).

Instead of enumerating DAGs in Python, one Z3 problem describes all of them:

* operators are the numbers ``0 .. n-1`` and an edge ``i -> j`` may exist only when ``i < j``
  (a Boolean ``edge[i][j]``). Every DAG has a topological numbering, so every DAG on ``n``
  operators is one assignment of these variables (up to renaming, which no property of Fries
  depends on);
* each operator has a kind - exactly one of ``source``, ``one-to-one``, ``one-to-many``,
  ``replicate``, ``blocking`` - a ``unique`` flag (the uniqueness property of Alg. 4) and a
  ``reconfigured`` flag (membership in the reconfiguration R);
* an operator is a ``source`` iff it has no parent (sources start data transactions);
* Fries works on the *pipelined view* (§7.1, :func:`spec.fries.workers.pipelined_view`): the
  output edges of blocking operators are cut. ``view[i][j]`` is that edge relation and every
  path below is a path of the view.

A DAG with fewer than ``n`` operators is the same problem as the ``n``-operator DAG obtained by
adding isolated, unreconfigured sources (they lie on no path and carry no reconfiguration), so
a proof for ``n`` covers every DAG with at most ``n`` operators.

Reachability is not left to the solver: ``reach[i][j]`` (a non-empty path ``i -> .. -> j``) is
*defined* by equations over the numbering, so every model fixes it exactly.
"""

from __future__ import annotations

from typing import Sequence

from proofs import z3util as z
from proofs.z3util import BoolTerm

KINDS = ("source", "one-to-one", "one-to-many", "replicate", "blocking")


class SymbolicDag:
    """Variables and defining constraints of an arbitrary DAG on ``n`` operators.

    ``allowed_kinds`` restricts the kinds an operator may have (e.g. the one-to-one-only
    dataflows of Fries §5); ``source`` is always allowed since every DAG has one."""

    def __init__(self, n: int, *, allowed_kinds: Sequence[str] = KINDS, prefix: str = "") -> None:
        if n < 1:
            raise ValueError("a dataflow has at least one operator")
        unknown = set(allowed_kinds) - set(KINDS)
        if unknown:
            raise ValueError(f"unknown kinds {sorted(unknown)}")
        self.n = n
        self.allowed_kinds = tuple(k for k in KINDS if k in allowed_kinds or k == "source")
        p = prefix
        self.edge: list[list[BoolTerm]] = [
            [z.boolean(f"{p}edge_{i}_{j}") if i < j else z.false() for j in range(n)]
            for i in range(n)
        ]
        self.kind: dict[str, list[BoolTerm]] = {
            k: [z.boolean(f"{p}{k}_{v}") if k in self.allowed_kinds else z.false()
                for v in range(n)]
            for k in KINDS
        }
        self.unique: list[BoolTerm] = [z.boolean(f"{p}unique_{v}") for v in range(n)]
        self.reconfigured: list[BoolTerm] = [z.boolean(f"{p}reconf_{v}") for v in range(n)]
        self.view: list[list[BoolTerm]] = [
            [z.all_of([self.edge[i][j], z.negate(self.kind["blocking"][i])]) if i < j
             else z.false() for j in range(n)]
            for i in range(n)
        ]
        self.reach: list[list[BoolTerm]] = [
            [z.boolean(f"{p}reach_{i}_{j}") if i < j else z.false() for j in range(n)]
            for i in range(n)
        ]
        self._constraints: list[BoolTerm] = []
        for v in range(n):
            self._constraints.append(z.exactly_one([self.kind[k][v] for k in self.allowed_kinds]))
            parents = [self.edge[u][v] for u in range(v)]
            self._constraints.append(self.kind["source"][v] == z.negate(z.any_of(parents)))
        for i in range(n):
            for j in range(i + 1, n):
                via = [z.all_of([self.reach[i][k], self.view[k][j]]) for k in range(i + 1, j)]
                self._constraints.append(self.reach[i][j] == z.any_of([self.view[i][j], *via]))

    # --- derived terms ----------------------------------------------------------------------

    def constraints(self) -> list[BoolTerm]:
        """Well-formedness and the defining equations of ``reach``."""
        return list(self._constraints)

    def many(self, v: int) -> BoolTerm:
        """Operator ``v`` may emit several tuples per input (Def. 5.2: one-to-many or
        replicate)."""
        return z.any_of([self.kind["one-to-many"][v], self.kind["replicate"][v]])

    def reach_star(self, i: int, j: int) -> BoolTerm:
        """Reflexive reachability in the pipelined view (a possibly empty path)."""
        return z.true() if i == j else self.reach[i][j]

    def leads_to_reconfigured(self, v: int) -> BoolTerm:
        """``v`` is reconfigured or reaches a reconfigured operator."""
        return z.any_of([z.all_of([self.reconfigured[t], self.reach_star(v, t)])
                         for t in range(self.n)])

    def reach_avoiding(self, blocked: int, prefix: str) -> tuple[list[list[BoolTerm]], list[BoolTerm]]:
        """``ra[i][j]``: a non-empty path ``i -> j`` whose *inner* vertices avoid ``blocked``,
        with its defining equations."""
        n = self.n
        ra = [[z.boolean(f"{prefix}ra{blocked}_{i}_{j}") if i < j else z.false()
               for j in range(n)] for i in range(n)]
        eqs = []
        for i in range(n):
            for j in range(i + 1, n):
                via = [z.all_of([ra[i][k], self.view[k][j]]) for k in range(i + 1, j)
                       if k != blocked]
                eqs.append(ra[i][j] == z.any_of([self.view[i][j], *via]))
        return ra, eqs
