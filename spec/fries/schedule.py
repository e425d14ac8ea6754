"""Operations, conflicts and schedules (Fries Def. 4.3-4.7).

A *schedule* is given as one log per object: an object is an operator, or one worker of an
operator in a parallel dataflow (§7.2). Each log lists the operations that object executed,
in the order it executed them. This is exactly the information Def. 4.7 keeps: operations on
one object are totally ordered, operations on different objects are unordered unless the
derivation order of a transaction relates them - and that order never creates a conflict edge,
so the per-object logs determine conflict-serializability.

An operation belongs to a transaction ``txn``: a data transaction (the scope of one source
tuple, Def. 4.4; its id is any string, e.g. ``"t17"``) or a function-update transaction
(Def. 4.5; ``update = True``, one update operation u(O) per reconfigured object).

Conflict (Def. 4.6): two operations conflict iff they are on the same object, belong to
different transactions, and at least one of them is an update. Two data operations never
conflict; two updates of the same object (from two reconfigurations) do.

The JSON form (a CLI contract, see docs/fries.md)::

    {"logs": {"OBJECT": [{"txn": "t1"}, {"txn": "R", "update": true}, ...], ...}}
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from spec.errors import InputError
from spec.jsonio import expect_bool, expect_list, expect_object, expect_str, reject_unknown_keys


@dataclass(frozen=True)
class Operation:
    """One operation in an object's log: a data operation d(x) of transaction ``txn``
    (Def. 4.3) or, with ``update=True``, the function update u(O) of transaction ``txn``
    (Def. 4.5)."""

    txn: str
    update: bool = False

    def to_json(self) -> dict[str, Any]:
        """``{"txn": ...}`` or ``{"txn": ..., "update": true}``."""
        return {"txn": self.txn, "update": True} if self.update else {"txn": self.txn}


@dataclass(frozen=True)
class Schedule:
    """Per-object logs (Def. 4.7). ``logs`` maps each object to its operations in execution
    order."""

    logs: Mapping[str, tuple[Operation, ...]]

    def objects(self) -> tuple[str, ...]:
        """The objects, in the order given."""
        return tuple(self.logs)

    def transactions(self) -> tuple[str, ...]:
        """Every transaction id, in order of first appearance (object order, then log order)."""
        seen: dict[str, None] = {}
        for log in self.logs.values():
            for op in log:
                seen.setdefault(op.txn, None)
        return tuple(seen)

    def update_transactions(self) -> frozenset[str]:
        """Ids of transactions with at least one update operation."""
        return frozenset(op.txn for log in self.logs.values() for op in log if op.update)

    def operations(self) -> Iterator[tuple[str, int, Operation]]:
        """Every operation as (object, position in its log, operation)."""
        for obj, log in self.logs.items():
            for position, op in enumerate(log):
                yield obj, position, op

    def to_json(self) -> dict[str, Any]:
        """The JSON form (see the module docstring)."""
        return {"logs": {obj: [op.to_json() for op in log] for obj, log in self.logs.items()}}

    @staticmethod
    def from_json(value: Any, where: str = "schedule") -> "Schedule":
        """Parse the JSON form; raise :class:`InputError` with the JSON path of the problem.

        A transaction that is an update on one object must not appear as a data operation
        (it is either a data or a function-update transaction, Def. 4.4/4.5); this is checked
        by :func:`validate_transaction_types`."""
        try:
            obj = expect_object(value, "top level")
            reject_unknown_keys(obj, {"logs"}, "top level")
            if "logs" not in obj:
                raise InputError("missing field 'logs'", "top level")
            raw_logs = expect_object(obj["logs"], "logs")
            logs: dict[str, tuple[Operation, ...]] = {}
            for name, raw_log in raw_logs.items():
                where_log = f"logs[{name!r}]"
                if not name:
                    raise InputError("an object name must be non-empty", where_log)
                items = expect_list(raw_log, where_log)
                logs[name] = tuple(
                    operation_from_json(item, f"{where_log}[{i}]") for i, item in enumerate(items)
                )
            schedule = Schedule(logs)
            validate_transaction_types(schedule)
            return schedule
        except InputError as error:
            raise error.located(where) from None


def operation_from_json(value: Any, where: str) -> Operation:
    """One log entry ``{"txn": ..., "update": ...}`` of the schedule format as an
    :class:`Operation`; raise :class:`InputError` naming ``where`` on anything else (shared
    by :meth:`Schedule.from_json` and the streaming reader of ``reference.fries``)."""
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"txn", "update"}, where)
    if "txn" not in obj:
        raise InputError("missing field 'txn'", where)
    return Operation(expect_str(obj["txn"], f"{where}.txn"),
                     expect_bool(obj.get("update", False), f"{where}.update"))


def validate_transaction_types(schedule: Schedule) -> None:
    """Raise :class:`InputError` if a transaction has both data and update operations, or
    updates one object twice (a function-update transaction has one u(O) per object)."""
    updates = schedule.update_transactions()
    updated: set[tuple[str, str]] = set()
    for obj, position, op in schedule.operations():
        where = f"logs[{obj!r}][{position}]"
        if not op.update and op.txn in updates:
            raise InputError(
                f"transaction {op.txn!r} is a function update elsewhere but a data operation here",
                where,
            )
        if op.update:
            if (obj, op.txn) in updated:
                raise InputError(f"transaction {op.txn!r} updates {obj!r} twice", where)
            updated.add((obj, op.txn))


def conflicts(a: Operation, b: Operation) -> bool:
    """Def. 4.6 for two operations *on the same object*: different transactions and at least
    one update."""
    return a.txn != b.txn and (a.update or b.update)


def conflicting_pairs(schedule: Schedule) -> frozenset[tuple[str, int, int]]:
    """Every ordered conflicting pair as (object, earlier position, later position)
    (the pairs whose order Def. 4.8 compares)."""
    pairs = set()
    for obj, log in schedule.logs.items():
        for i, first in enumerate(log):
            for j in range(i + 1, len(log)):
                if conflicts(first, log[j]):
                    pairs.add((obj, i, j))
    return frozenset(pairs)
