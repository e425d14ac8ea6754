"""Conflict-equivalence and conflict-serializability (Fries Def. 4.7-4.9), as definitions.

Slow on purpose: :func:`is_conflict_serializable` tries every serial order of the
transactions (n! of them). The efficient checker is :mod:`reference.fries.serializability`;
the tests check it agrees with these definitions on random small schedules.

**Operations have identities.** A schedule is given as per-object logs (Def. 4.7, see
:mod:`spec.fries.schedule`). The k-th operation of transaction T on object O is the operation
``(O, T, k)``: a data transaction may process several tuples at one operator (one-to-many
operators, Def. 5.2), and those are different operations. A serial schedule keeps, on each
object, the operations of one transaction in their original relative order (the derivation
order of a transaction is not ours to change) and puts whole transactions one after another.

**Conflict-equivalence (Def. 4.8).** S1 and S2 hold the same operations, and for every two
conflicting operations a, b (Def. 4.6: same object, different transactions, at least one an
update), a before b in S1 implies a before b in S2.

**Conflict-serializability (Def. 4.9).** S is conflict-equivalent to some serial schedule of
the same transactions.

**Precedence graph.** T_i -> T_j when an operation of T_i precedes a conflicting operation of
T_j; :func:`shortest_cycle_length` is the length of its shortest cycle (brute force) - the
reference checker's witness must be that short.
"""

from __future__ import annotations

from itertools import permutations
from typing import Iterator, Mapping, Sequence

from spec.fries.schedule import Operation, Schedule, conflicting_pairs, conflicts

#: The identity of an operation: (object, transaction, occurrence of that transaction on
#: that object, counting from 0).
OperationId = tuple[str, str, int]


def identified(log: Sequence[Operation], obj: str) -> list[tuple[OperationId, Operation]]:
    """The operations of one object's log with their identities, in log order."""
    seen: dict[str, int] = {}
    out = []
    for op in log:
        k = seen.get(op.txn, 0)
        seen[op.txn] = k + 1
        out.append(((obj, op.txn, k), op))
    return out


def serial_schedule(schedule: Schedule, order: Sequence[str]) -> Schedule:
    """The serial schedule of ``schedule``'s operations in transaction order ``order``
    (Def. 4.7): on each object, the operations sorted by their transaction's rank, each
    transaction's own operations kept in their relative order (a stable sort)."""
    rank = {txn: i for i, txn in enumerate(order)}
    return Schedule({obj: tuple(sorted(log, key=lambda op: rank[op.txn]))
                     for obj, log in schedule.logs.items()})


def conflict_equivalent(first: Schedule, second: Schedule) -> bool:
    """Def. 4.8, literally: same operations, and every conflicting pair ordered in
    ``first`` is ordered the same way in ``second``."""
    if set(first.logs) != set(second.logs):
        return False
    for obj in first.logs:
        one = identified(first.logs[obj], obj)
        two = identified(second.logs[obj], obj)
        if sorted(one, key=repr) != sorted(two, key=repr):
            return False
        where = {ident: i for i, (ident, _) in enumerate(two)}
        for i, (a, op_a) in enumerate(one):
            for b, op_b in one[i + 1:]:
                if conflicts(op_a, op_b) and where[a] > where[b]:
                    return False
    return True


def serial_orders(schedule: Schedule) -> Iterator[tuple[str, ...]]:
    """Every transaction order whose serial schedule is conflict-equivalent to
    ``schedule`` (brute force over all n! orders)."""
    for order in permutations(schedule.transactions()):
        if conflict_equivalent(schedule, serial_schedule(schedule, order)):
            yield order


def is_conflict_serializable(schedule: Schedule) -> bool:
    """Def. 4.9: conflict-equivalent to SOME serial schedule of the same transactions."""
    return next(serial_orders(schedule), None) is not None


def is_equivalent_serial_order(schedule: Schedule, order: Sequence[str]) -> bool:
    """Is ``order`` a permutation of the transactions whose serial schedule is
    conflict-equivalent to ``schedule``?"""
    if sorted(order) != sorted(schedule.transactions()):
        return False
    return conflict_equivalent(schedule, serial_schedule(schedule, order))


def precedence_edges(schedule: Schedule) -> frozenset[tuple[str, str]]:
    """T_i -> T_j for every conflicting pair with T_i's operation first."""
    logs: Mapping[str, Sequence[Operation]] = schedule.logs
    return frozenset((logs[obj][i].txn, logs[obj][j].txn)
                     for obj, i, j in conflicting_pairs(schedule))


def is_precedence_cycle(schedule: Schedule, cycle: Sequence[str]) -> bool:
    """Are ``cycle``'s transactions distinct, with an edge from each to the next and from
    the last back to the first?"""
    if len(cycle) < 2 or len(set(cycle)) != len(cycle):
        return False
    edges = precedence_edges(schedule)
    return all((cycle[i], cycle[(i + 1) % len(cycle)]) in edges for i in range(len(cycle)))


def shortest_cycle_length(schedule: Schedule) -> int | None:
    """The length of a shortest precedence-graph cycle (None when acyclic), by trying every
    sequence of distinct transactions, shortest first."""
    txns = schedule.transactions()
    for length in range(2, len(txns) + 1):
        for cycle in permutations(txns, length):
            if is_precedence_cycle(schedule, cycle):
                return length
    return None
