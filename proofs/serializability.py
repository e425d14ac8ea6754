"""Conflict-serializability as an SMT problem (Fries Def. 4.6-4.9).

A schedule is conflict-serializable iff some serial order of its transactions puts every
conflicting pair in the order the schedule executed it (Def. 4.8, 4.9). As SMT: one integer
*serial position* per transaction, pairwise distinct, and for each conflicting pair
(``a`` before ``b`` on one object, Def. 4.6) the constraint ``pos[a.txn] < pos[b.txn]``.

* satisfiable: the model's positions, sorted, are a serial order (the witness);
* unsatisfiable: Z3's minimised unsat core is a set of precedence constraints that cannot all
  hold; it contains a cycle of transactions, which we report (the counterexample).

This is an independent second implementation of the checker: ``tests/test_proofs_
serializability.py`` checks on random schedules that it always agrees with the reference
checker (precedence-graph acyclicity) and with brute force over all serial orders.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import permutations

from proofs import z3util as z
from spec.fries.schedule import Schedule, conflicting_pairs


@dataclass(frozen=True)
class SmtVerdict:
    """``serializable`` with a ``serial_order`` witness, or not with a transaction ``cycle``
    (as the reference checker reports it: the first transaction not repeated at the end, e.g.
    ``("t1", "R")`` for t1 -> R -> t1)."""

    serializable: bool
    serial_order: tuple[str, ...] | None
    cycle: tuple[str, ...] | None


def precedence_pairs(schedule: Schedule) -> list[tuple[str, str]]:
    """The precedence constraints ``(before, after)`` implied by the conflicting pairs, each
    once, in schedule order."""
    seen: dict[tuple[str, str], None] = {}
    for obj, i, j in sorted(conflicting_pairs(schedule)):
        log = schedule.logs[obj]
        seen.setdefault((log[i].txn, log[j].txn), None)
    return list(seen)


def smt_serializable(schedule: Schedule) -> SmtVerdict:
    """Decide conflict-serializability of ``schedule`` with Z3 (see the module docstring)."""
    txns = schedule.transactions()
    pos = {t: z.integer(f"pos[{t}]") for t in txns}
    pairs = precedence_pairs(schedule)
    named = [(str(i), pos[a] < pos[b]) for i, (a, b) in enumerate(pairs)]
    model, core = z.solve_named(named, [z.distinct([pos[t] for t in txns])])
    if model is not None:
        order = sorted(txns, key=lambda t: (z.int_value(model, pos[t]), txns.index(t)))
        return SmtVerdict(True, tuple(order), None)
    return SmtVerdict(False, None, _cycle([pairs[int(name)] for name in core]))


def _cycle(edges: list[tuple[str, str]]) -> tuple[str, ...]:
    """A directed cycle among ``edges`` (an unsat core of strict inequalities has one)."""
    succ: dict[str, list[str]] = {}
    for a, b in edges:
        succ.setdefault(a, []).append(b)
    for start in sorted(succ):
        path = [start]
        on_path = {start}
        stack = [iter(succ.get(start, []))]
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                stack.pop()
                on_path.discard(path.pop())
                continue
            if nxt in on_path:
                return tuple(path[path.index(nxt):])
            path.append(nxt)
            on_path.add(nxt)
            stack.append(iter(succ.get(nxt, [])))
    raise AssertionError("an unsatisfiable set of strict precedences always contains a cycle")


def serial_order_iff_acyclic(transactions: int, timeout_ms: int | None = None, *,
                             closure_rounds: int | None = None) -> z.Outcome:
    """Def. 4.9 versus the precedence-graph test, for *every* precedence relation on
    ``transactions`` transactions: "some serial order puts every precedence pair in order"
    iff "the precedence graph has no cycle". This is what justifies both checkers (the
    reference one tests acyclicity, :func:`smt_serializable` searches positions). A serial
    order is one of the ``transactions!`` permutations, so the left side is a finite
    disjunction. Returns Z3's outcome on the negation (unsat = proved). Fewer transactions
    are covered by adding isolated ones. ``closure_rounds`` (default: all) truncates the
    transitive closure; tests use it to check that the proof is not vacuous."""
    k = transactions
    edge = [[z.boolean(f"prec_{i}_{j}") if i != j else z.false() for j in range(k)] for i in range(k)]
    layer = edge
    closure_eqs = []
    for m in range(k if closure_rounds is None else closure_rounds):
        nxt = []
        for i in range(k):
            row = []
            for j in range(k):
                var = z.boolean(f"path{m}_{i}_{j}")
                closure_eqs.append(var == z.any_of([layer[i][j], z.all_of([layer[i][m], layer[m][j]])]))
                row.append(var)
            nxt.append(row)
        layer = nxt
    acyclic = z.all_of([z.negate(layer[i][i]) for i in range(k)])
    orders = []
    for perm in permutations(range(k)):
        place = {t: p for p, t in enumerate(perm)}
        orders.append(z.all_of([z.implies(edge[i][j], z.true() if place[i] < place[j] else z.false())
                                for i in range(k) for j in range(k) if i != j]))
    return z.solve(closure_eqs + [acyclic != z.any_of(orders)], timeout_ms=timeout_ms)
