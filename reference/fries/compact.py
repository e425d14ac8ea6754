"""A compact form of a schedule (Fries Def. 4.7) for checking large logs fast and small.

:class:`spec.fries.schedule.Schedule` holds one :class:`~spec.fries.schedule.Operation`
object per operation: obviously right, but ~50M Python objects for a 10M-transaction file.
:class:`CompactSchedule` numbers the transactions 0, 1, 2, ... in order of first appearance
(objects in input order, then log order; ``names[i]`` is transaction i's id) and keeps, per
object, a numpy ``int32`` array of transaction numbers in log order and the ascending
positions of the update operations - the same information (an operation is fully described
by its transaction and whether it is an update), at 4 bytes per operation.

Because the numbers follow first appearance, "sorted by number" *is* "in order of first
appearance", which is how the checker keeps its output independent of string hashing.

:func:`compact_from_json` reads the parsed SCHEDULE.json with C-level list operations and
falls back to :meth:`Schedule.from_json` whenever anything is unusual, so a bad file gets
exactly the spec's one-line error and the fast path never accepts a file the spec rejects.
:mod:`reference.fries.schedule_stream` builds the same form straight from the file.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import Any, Iterator, Mapping, Sequence

import numpy as np
import numpy.typing as npt

from spec.errors import InputError
from spec.fries.schedule import Operation, Schedule

#: Transaction numbers of one object's log, in log order.
Ids = npt.NDArray[np.int32]
#: Ascending positions (indices into a log).
Positions = npt.NDArray[np.int64]

_EMPTY_POSITIONS: Positions = np.zeros(0, dtype=np.int64)


@dataclass(frozen=True, eq=False)
class CompactSchedule:
    """Per object: ``txns[obj][i]`` is the number of the transaction of the i-th operation
    on ``obj`` (its id is ``names[...]``); ``updates[obj]`` lists, ascending, the positions
    that are update operations. Objects keep the order of the input; transactions are
    numbered in order of first appearance."""

    objects: tuple[str, ...]
    names: Sequence[str]
    txns: Mapping[str, Ids]
    updates: Mapping[str, Positions]

    def operation_count(self) -> int:
        """Total number of operations."""
        return sum(len(self.txns[o]) for o in self.objects)

    def update_transactions(self) -> frozenset[str]:
        """Ids of the function-update transactions."""
        return frozenset(self.names[int(t)] for o in self.objects
                         for t in self.txns[o][self.updates[o]])

    def is_update(self, obj: str, position: int) -> bool:
        """Is operation ``position`` of ``obj`` an update? (binary search)"""
        marks = self.updates[obj]
        at = int(np.searchsorted(marks, position))
        return at < len(marks) and int(marks[at]) == position

    def to_schedule(self) -> Schedule:
        """Back to the spec's form (used by tests)."""
        logs = {}
        for obj in self.objects:
            marks = set(self.updates[obj].tolist())
            logs[obj] = tuple(Operation(self.names[t], i in marks)
                              for i, t in enumerate(self.txns[obj].tolist()))
        return Schedule(logs)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, CompactSchedule):
            return NotImplemented
        return (self.objects == other.objects and list(self.names) == list(other.names)
                and all(np.array_equal(self.txns[o], other.txns[o])
                        and np.array_equal(self.updates[o], other.updates[o])
                        for o in self.objects))

    __hash__ = None  # type: ignore[assignment]


class Interner:
    """Numbers transaction ids in order of first appearance."""

    def __init__(self) -> None:
        self.table: dict[str, int] = {}

    def ids(self, names: Sequence[str]) -> Ids:
        """The numbers of ``names`` (numbering the new ones), as an int32 array. One C-level
        lookup pass; a Python loop only over the names not seen before."""
        table = self.table
        found = list(map(table.get, names))
        if None in found:
            for i in [i for i, number in enumerate(found) if number is None]:
                number = table.get(names[i])
                if number is None:
                    number = table[names[i]] = len(table)
                found[i] = number
        if len(table) > np.iinfo(np.int32).max:  # pragma: no cover - 2^31 transactions
            raise InputError("more than 2^31 transactions")
        return np.array(found, dtype=np.int32)

    def names(self) -> list[str]:
        """Every id, by number."""
        return list(self.table)


def compact_from_schedule(schedule: Schedule) -> CompactSchedule:
    """The compact form of a spec schedule."""
    interner = Interner()
    txns: dict[str, Ids] = {}
    updates: dict[str, Positions] = {}
    for obj, log in schedule.logs.items():
        txns[obj] = interner.ids([op.txn for op in log])
        updates[obj] = np.array([i for i, op in enumerate(log) if op.update], dtype=np.int64)
    return CompactSchedule(tuple(schedule.logs), interner.names(), txns, updates)


def compact_from_json(value: Any, where: str = "schedule") -> CompactSchedule:
    """Parse SCHEDULE.json (already decoded) into the compact form; invalid input raises the
    same :class:`~spec.errors.InputError` as :meth:`Schedule.from_json`."""
    fast = _fast_path(value)
    if fast is not None:
        validate_types(fast, where)
        return fast
    return compact_from_schedule(Schedule.from_json(value, where))


_TXN = itemgetter("txn")


def _fast_path(value: Any) -> CompactSchedule | None:
    """The compact form when ``value`` is well-formed and every check can run at C speed;
    None to defer to the spec's parser (which then either reports the error or parses).
    Transaction types (Def. 4.4/4.5) are left to :func:`validate_types`."""
    if type(value) is not dict or len(value) != 1 or type(value.get("logs")) is not dict:
        return None
    interner = Interner()
    txns: dict[str, Ids] = {}
    updates: dict[str, Positions] = {}
    for name, log in value["logs"].items():
        if not name or type(log) is not list:
            return None
        try:  # a non-object operation raises TypeError, a missing "txn" KeyError
            ids = list(map(_TXN, log))
        except (KeyError, TypeError):
            return None
        if set(map(type, ids)) - {str} or "" in ids:
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
        txns[name] = interner.ids(ids)
        updates[name] = np.array(marks, dtype=np.int64) if marks else _EMPTY_POSITIONS
    return CompactSchedule(tuple(txns), interner.names(), txns, updates)


def validate_types(schedule: CompactSchedule, where: str) -> None:
    """Def. 4.4/4.5, as :func:`spec.fries.schedule.validate_transaction_types`: no
    transaction is both an update and a data transaction, and no update transaction updates
    one object twice. The error names the first offending operation (objects in order, then
    log order), with the spec's message."""
    is_update = update_mask(schedule)
    for obj in schedule.objects:
        ids, marks = schedule.txns[obj], schedule.updates[obj]
        data = np.ones(len(ids), dtype=bool)
        data[marks] = False
        wrong = np.flatnonzero(data & is_update[ids])
        first_wrong = int(wrong[0]) if len(wrong) else len(ids)
        updated = ids[marks]
        _, first_seen = np.unique(updated, return_index=True)
        repeated = np.ones(len(marks), dtype=bool)
        repeated[first_seen] = False
        twice = marks[repeated]
        first_twice = int(twice[0]) if len(twice) else len(ids)
        if first_wrong < first_twice:
            txn = schedule.names[int(ids[first_wrong])]
            raise InputError(f"transaction {txn!r} is a function update elsewhere but a data "
                             f"operation here", f"{where}: logs[{obj!r}][{first_wrong}]")
        if first_twice < len(ids):
            txn = schedule.names[int(ids[first_twice])]
            raise InputError(f"transaction {txn!r} updates {obj!r} twice",
                             f"{where}: logs[{obj!r}][{first_twice}]")


def update_mask(schedule: CompactSchedule) -> npt.NDArray[np.bool_]:
    """``mask[t]``: is transaction number t a function-update transaction?"""
    mask = np.zeros(len(schedule.names), dtype=bool)
    for obj in schedule.objects:
        mask[schedule.txns[obj][schedule.updates[obj]]] = True
    return mask


def segments(schedule: CompactSchedule) -> Iterator[tuple[str, Positions, Positions]]:
    """For each object with updates, in order: the positions of its data operations and, for
    each, its segment (the number of the object's updates before it). A generator, so only
    one object's arrays are alive at a time (16 bytes per operation of that object)."""
    for obj in schedule.objects:
        ids, marks = schedule.txns[obj], schedule.updates[obj]
        if len(marks):
            data = np.ones(len(ids), dtype=bool)
            data[marks] = False
            positions = np.flatnonzero(data)
            yield obj, positions, np.searchsorted(marks, positions)
