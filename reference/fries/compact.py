"""A compact form of a schedule (Fries Def. 4.7) for checking large logs fast.

:class:`spec.fries.schedule.Schedule` holds one :class:`~spec.fries.schedule.Operation`
object per operation: obviously right, but ~5M Python objects for the 60 MB benchmark file.
:class:`CompactSchedule` keeps, per object, the list of transaction ids in log order and the
ascending positions of the update operations - the same information (an operation is fully
described by its transaction id and whether it is an update).

:func:`compact_from_json` reads the parsed SCHEDULE.json with C-level list/set operations and
falls back to :meth:`Schedule.from_json` whenever anything is unusual, so a bad file gets
exactly the spec's one-line error and the fast path never accepts a file the spec rejects.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Mapping, Sequence

from spec.fries.schedule import Schedule


@dataclass(frozen=True)
class CompactSchedule:
    """Per object: ``txns[obj][i]`` is the transaction of the i-th operation on ``obj``;
    ``updates[obj]`` lists, ascending, the positions that are update operations.
    Objects keep the order of the input."""

    objects: tuple[str, ...]
    txns: Mapping[str, Sequence[str]]
    updates: Mapping[str, Sequence[int]]

    def operation_count(self) -> int:
        """Total number of operations."""
        return sum(len(self.txns[o]) for o in self.objects)

    def update_transactions(self) -> frozenset[str]:
        """Ids of the function-update transactions."""
        return frozenset(self.txns[o][p] for o in self.objects for p in self.updates[o])

    def is_update(self, obj: str, position: int) -> bool:
        """Is operation ``position`` of ``obj`` an update? (binary search)"""
        positions = self.updates[obj]
        lo, hi = 0, len(positions)
        while lo < hi:
            mid = (lo + hi) // 2
            if positions[mid] < position:
                lo = mid + 1
            else:
                hi = mid
        return lo < len(positions) and positions[lo] == position

    def to_schedule(self) -> Schedule:
        """Back to the spec's form (used by tests)."""
        from spec.fries.schedule import Operation

        logs = {}
        for obj in self.objects:
            marks = set(self.updates[obj])
            logs[obj] = tuple(Operation(t, i in marks) for i, t in enumerate(self.txns[obj]))
        return Schedule(logs)


def compact_from_schedule(schedule: Schedule) -> CompactSchedule:
    """The compact form of a spec schedule."""
    txns: dict[str, Sequence[str]] = {}
    updates: dict[str, Sequence[int]] = {}
    for obj, log in schedule.logs.items():
        txns[obj] = [op.txn for op in log]
        updates[obj] = [i for i, op in enumerate(log) if op.update]
    return CompactSchedule(tuple(schedule.logs), txns, updates)


def compact_from_json(value: Any, where: str = "schedule") -> CompactSchedule:
    """Parse SCHEDULE.json (already decoded) into the compact form; invalid input raises the
    same :class:`~spec.errors.InputError` as :meth:`Schedule.from_json`."""
    fast = _fast_path(value)
    if fast is not None:
        return fast
    return compact_from_schedule(Schedule.from_json(value, where))


_TXN = itemgetter("txn")


def _fast_path(value: Any) -> CompactSchedule | None:
    """The compact form when ``value`` is valid and every check can run at C speed;
    None to defer to the spec's parser (which then either reports the error or parses)."""
    if type(value) is not dict or len(value) != 1 or type(value.get("logs")) is not dict:
        return None
    txns: dict[str, Sequence[str]] = {}
    updates: dict[str, Sequence[int]] = {}
    for name, log in value["logs"].items():
        if not name or type(log) is not list:
            return None
        if not log:
            txns[name], updates[name] = [], []
            continue
        try:  # a non-object operation raises TypeError, a missing "txn" KeyError
            ids = list(map(_TXN, log))
        except (KeyError, TypeError):
            return None
        if set(map(type, ids)) != {str} or "" in ids:
            return None
        lengths = list(map(len, log))
        extra = sum(lengths) - len(lengths)  # every operation has "txn": length >= 1
        marks: list[int] = []
        position = -1
        for _ in range(extra):  # the operations with a second key must all have length 2
            try:
                position = lengths.index(2, position + 1)
            except ValueError:
                return None  # some operation has three or more keys
            flag = log[position].get("update")
            if type(flag) is not bool:  # unknown key or non-boolean update
                return None
            if flag:
                marks.append(position)
        txns[name], updates[name] = ids, marks
    if not _types_consistent(txns, updates):
        return None
    return CompactSchedule(tuple(txns), txns, updates)


def _types_consistent(txns: Mapping[str, Sequence[str]],
                      updates: Mapping[str, Sequence[int]]) -> bool:
    """Def. 4.4/4.5: no transaction is both an update and a data transaction, and no update
    transaction updates one object twice (what ``validate_transaction_types`` rejects)."""
    update_ids: set[str] = set()
    for obj, marks in updates.items():
        ids = {txns[obj][p] for p in marks}
        if len(ids) != len(marks):
            return False
        update_ids |= ids
    if not update_ids:
        return True
    for obj, log in txns.items():
        start = 0
        for mark in [*updates[obj], len(log)]:
            if not update_ids.isdisjoint(log[start:mark]):
                return False
            start = mark + 1
    return True
