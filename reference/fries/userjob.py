"""The reference executor of *user jobs*: serial execution and replay of the same job objects
``spark_impl`` runs (user operators, any key and state type, blocking flushes, requests with
state transformations), in pure Python, without Spark.

A job is read only through the protocols of :mod:`spec.fries.userjob` (``spark_impl``'s
``Job`` satisfies them structurally), so this module imports ``spec`` only and ``spark_impl``
never imports it. Two functions, the user-job counterparts of the spec's catalogue semantics:

* :func:`serial_run` - Fries Def. 4.9's serial schedule of a job in a given order of its
  transactions (data ``"S:i"`` and requests ``"Rj"``): what
  :func:`spec.fries.scenario.serial_execution` computes for a catalogue scenario, for any
  logic. Within a transaction tuples are processed first in first out; a request applies all
  its updates between two transactions (new logic, ``T_O`` on every existing key of ``O``);
  at end of input every blocking object flushes its keys in sorted order, operator by operator
  in topological order, as transaction ``"<operator>:final"`` (§7.1; the order ``spark_impl``
  flushes in, so a user key type must be sortable when a blocking operator holds it).
* :func:`replay_run` - (C2) and (C3) of :mod:`spec.fries.consistency` for a run's schedule:
  each object executes its own log with the user's logic, every channel must be FIFO and fully
  consumed. The outputs come back *in emission order per object*, so a per-key (or any
  coarser, user-declared) output order can be compared with what the run emitted.

Routing: the objects of an operator come from ``job.object_of``; a source tuple goes to child
``children[route(key, n)]`` of its source. ``route`` is a parameter (default: integer keys mod
n, Fries §7.2, as :func:`spec.fries.scenario.route_source`) because the stable routing of
other key types belongs to the deployment (``spark_impl.keys.route``), which the conformance
layer passes in. Likewise ``flush_order``, the order in which a blocking operator's object
flushes its keys at end of input (default: Python's ``sorted``, an InputError when the keys
cannot be compared): a deployment flushes keys of mixed types (``None`` beside tuples) in its
own total order (``spark_impl.keys.key_order``), and the flushed records go down FIFO
channels in that order, so the replay must use the same one.

Checked against the spec by hypothesis (tests/conformance/userjob/test_userjob_reference.py): on every catalogue
scenario expressed as the executor's job (``spark_impl.reconfig.scenario_job``),
:func:`serial_run` equals :func:`spec.fries.scenario.serial_execution` in every order and
:func:`replay_run` equals :func:`spec.fries.consistency.replay` on every schedule.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

from spec.errors import InputError
from spec.fries.consistency import consume_input
from spec.fries.dataflow import OperatorKind
from spec.fries.schedule import Operation, Schedule
from spec.fries.userjob import Emitted, JobUpdate, Logic, UserJob, UserOutput

Route = Callable[[Any, int], int]
FlushOrder = Callable[[Any], Any]
"""A sort key over a blocking operator's keys (module docstring); None: natural order."""
Item = tuple[str, Any, Any]
"""A tuple on a channel: (transaction, key, value)."""


def integer_route(key: Any, n: int) -> int:
    """Fries §7.2's hash partitioning of integer keys: ``key mod n``."""
    if isinstance(key, bool) or not isinstance(key, int):
        raise InputError(f"key {key!r} is not an integer: pass the deployment's route function")
    return key % n


@dataclass(frozen=True)
class SerialRun:
    """What a serial execution computes: outputs in emission order, the final state of every
    (operator, key), and the serial schedule with the sender of every data operation."""

    outputs: list[UserOutput]
    states: dict[tuple[str, Any], Any]
    schedule: Schedule = field(compare=False)
    senders: dict[str, tuple[str | None, ...]] = field(compare=False)


@dataclass(frozen=True)
class ReplayRun:
    """The replay of a run: outputs (per object in emission order, objects in topological
    order), final states, and every channel violation (C2) in words."""

    outputs: list[UserOutput]
    states: dict[tuple[str, Any], Any]
    violations: tuple[str, ...]


def source_tuples(job: UserJob) -> list[tuple[str, str, Any, Any]]:
    """Every source tuple in ingestion order."""
    return [job.source.get(i) for i in range(job.source.count())]


def request_order(job: UserJob) -> list[str]:
    """The serial order applying request ``Rj`` right after the first ``at_j`` ingested tuples
    (ties keep request order): what an engine that quiesces on every request computes."""
    order: list[str] = []
    pending = sorted(range(len(job.planned)), key=lambda j: job.planned[j].at)
    for position, tup in enumerate([*source_tuples(job), None]):
        while pending and job.planned[pending[0]].at <= position:
            order.append(f"R{pending.pop(0) + 1}")
        if tup is not None:
            order.append(tup[1])
    return order


def _children_of_source(job: UserJob, source: str, key: Any, route: Route) -> list[str]:
    children = job.dataflow.children(source)
    return [children[route(key, len(children))]] if children else []


def _update(job: UserJob, op: str, txn: str) -> JobUpdate | None:
    """The update of ``op`` in request ``txn`` ("Rj"), or None."""
    if not txn.startswith("R") or not txn[1:].isdigit():
        return None
    j = int(txn[1:])
    if not 1 <= j <= len(job.planned):
        return None
    return job.planned[j - 1].request.updates.get(op)


def _sorted_keys(keys: Sequence[Any], flush_order: FlushOrder | None = None) -> list[Any]:
    if flush_order is not None:
        return sorted(keys, key=flush_order)
    try:
        return sorted(keys)
    except TypeError as error:
        raise InputError(f"the keys of a blocking operator must be sortable to flush in order: {error}") from None


def serial_run(job: UserJob, order: Sequence[str], route: Route = integer_route, *,
               flush_order: FlushOrder | None = None) -> SerialRun:
    """Run the transactions of ``job`` one at a time in ``order`` (module docstring); ``order``
    lists every transaction id exactly once."""
    flow = job.dataflow
    tuples = source_tuples(job)
    by_txn = {t[1]: t for t in tuples}
    requests = {f"R{j + 1}": p.request for j, p in enumerate(job.planned)}
    expected = set(by_txn) | set(requests)
    if len(order) != len(expected) or set(order) != expected:
        raise InputError(f"serial order must list every transaction once (missing {sorted(expected - set(order))}, "
                         f"extra {sorted(set(order) - expected)}, {len(order)} given for {len(expected)})")
    logic: dict[str, Logic] = dict(job.logic)
    states: dict[tuple[str, Any], Any] = {}
    outputs: list[UserOutput] = []
    logs: dict[str, list[tuple[Operation, str | None]]] = {
        obj: [] for op in flow.names if op in job.logic for obj in job.objects(op)}

    def deliver(pending: deque[tuple[str, str, Any, Any]], obj: str, op: str, txn: str, emitted: Emitted) -> None:
        for child, k, v in emitted:
            if child:
                pending.append((obj, child, k, v))
            else:
                outputs.append((op, txn, k, v))

    def propagate(pending: deque[tuple[str, str, Any, Any]], txn: str) -> None:
        while pending:
            sender, op, key, value = pending.popleft()
            obj = job.object_of(op, key)
            logs[obj].append((Operation(txn), sender))
            states[(op, key)], emitted = logic[op].process(states.get((op, key)), key, value)
            deliver(pending, obj, op, txn, emitted)

    for txn in order:
        if txn in requests:
            for op, update in requests[txn].updates.items():
                logic[op] = update.logic
                for obj in job.objects(op):
                    logs[obj].append((Operation(txn, update=True), None))
                for (o, key), value in list(states.items()):
                    if o == op:
                        states[(o, key)] = update.transform(value)
            continue
        source, _, key, value = by_txn[txn]
        sender = job.object_of(source, key)
        propagate(deque((sender, child, key, value) for child in _children_of_source(job, source, key, route)), txn)
    for op in flow.topological_order():
        if flow.kind(op) is not OperatorKind.BLOCKING:
            continue
        txn = f"{op}:final"
        pending: deque[tuple[str, str, Any, Any]] = deque()
        for obj in job.objects(op):
            keys = [k for (o, k) in states if o == op and job.object_of(op, k) == obj]
            for key in _sorted_keys(keys, flush_order):
                deliver(pending, obj, op, txn, logic[op].flush(states[(op, key)], key))
        propagate(pending, txn)
    schedule = Schedule({obj: tuple(o for o, _ in log) for obj, log in logs.items()})
    return SerialRun(outputs, states, schedule, {obj: tuple(s for _, s in log) for obj, log in logs.items()})


def replay_run(job: UserJob, schedule: Schedule, senders: dict[str, tuple[str | None, ...]] | None = None,
               route: Route = integer_route, *, flush_order: FlushOrder | None = None) -> ReplayRun:
    """Execute every object's log in its own order, checking every channel (module docstring;
    the user-job form of :func:`spec.fries.consistency.replay`)."""
    flow = job.dataflow
    channels: dict[tuple[str, str], list[Item]] = {}

    def send(sender: str, receiver: str, item: Item) -> None:
        channels.setdefault((sender, job.object_of(receiver, item[1])), []).append(item)

    for source, txn, key, value in source_tuples(job):
        for child in _children_of_source(job, source, key, route):
            send(job.object_of(source, key), child, (txn, key, value))
    outputs: list[UserOutput] = []
    states: dict[tuple[str, Any], Any] = {}
    violations: list[str] = []
    for op in flow.topological_order():
        if flow.kind(op) is OperatorKind.SOURCE:
            continue
        for obj in job.objects(op):
            inputs = {snd: deque(items) for (snd, rcv), items in sorted(channels.items()) if rcv == obj}
            log = schedule.logs.get(obj, ())
            named = tuple(senders.get(obj, ())) if senders is not None else ()
            logic = _run_object(job, op, obj, log, named, inputs, states, outputs, send, violations)
            for snd, queue in inputs.items():
                if queue:
                    violations.append(f"{len(queue)} tuple(s) sent on {snd} -> {obj} were never processed "
                                      f"(first: {queue[0][0]} key {queue[0][1]!r})")
            if flow.kind(op) is OperatorKind.BLOCKING:
                txn = f"{op}:final"
                keys = [k for (o, k) in states if o == op and job.object_of(op, k) == obj]
                for key in _sorted_keys(keys, flush_order):
                    for child, k, v in logic.flush(states[(op, key)], key):
                        if child:
                            send(obj, child, (txn, k, v))
                        else:
                            outputs.append((op, txn, k, v))
    return ReplayRun(outputs, states, tuple(violations))


def _run_object(job: UserJob, op: str, obj: str, log: tuple[Operation, ...], named: tuple[str | None, ...],
                inputs: dict[str, deque[Item]], states: dict[tuple[str, Any], Any], outputs: list[UserOutput],
                send: Callable[[str, str, Item], None], violations: list[str]) -> Logic:
    """Replay one object's log; return its logic at the end."""
    logic = job.logic[op]
    for position, operation in enumerate(log):
        if operation.update:
            update = _update(job, op, operation.txn)
            if update is None:
                violations.append(f"{obj} logs update {operation.txn}, which does not reconfigure {op}")
                continue
            logic = update.logic
            for (o, key), value in list(states.items()):
                if o == op and job.object_of(op, key) == obj:
                    states[(o, key)] = update.transform(value)
            continue
        if operation.txn == f"{op}:final":
            continue
        sender = named[position] if position < len(named) else None
        item = consume_input(obj, operation.txn, sender, inputs, violations)
        if item is None:
            continue
        txn, key, value = item
        states[(op, key)], emitted = logic.process(states.get((op, key)), key, value)
        for child, k, v in emitted:
            if child:
                send(obj, child, (txn, k, v))
            else:
                outputs.append((op, txn, k, v))
    return logic
