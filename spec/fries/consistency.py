"""What a consistent run must satisfy beyond conflict-serializability (Fries Def. 4.6-4.9), once
operators are order-sensitive; and the *replay* that decides it.

**Why more is needed.** Def. 4.6 lets any two data operations commute (only an update
conflicts), so a conflict-serializable schedule fixes which data transactions each object
processed before and after each update, but not the order of the data operations themselves.
With the commutative catalogue functions that is all that matters. With the order-sensitive
ones (``fold``, ``digest`` of :mod:`spec.fries.catalogue`: a per-key affine fold, emitted with
each output) an object that processes its input in another order computes other values, and
the schedule alone no longer decides the outputs.

**The run.** An engine reports, per object, its log S_O (Def. 4.7: its data and update
operations in execution order), for every data operation the object that sent the tuple it
processed (its *channel* P -> O; :data:`spec.fries.scenario.Senders`), the output records and
the final per-(operator, key) states.

**Definition (consistent run).** A run of scenario σ is consistent iff

* (C1) *version consistency*: the schedule is conflict-serializable (Def. 4.9);
* (C2) *channel FIFO*: every channel P -> O delivers what P sent to O exactly once, in send
  order: O's data operations with sender P consume P's emissions to O in the order P emitted
  them; none is left unconsumed, none consumes a tuple P did not send. A source object emits
  its tuples in ingestion order (:func:`spec.fries.reorder.reordered_ingestion`);
* (C3) *values*: the outputs (as a multiset) and the final states equal those of the
  :func:`replay` of the run: each object, in its log order, applies its current function - the
  scenario's, replaced at each update operation u(O) by the new one, whose state transformation
  T_O then applies to every key the object holds (Def. 2.1) - to the tuple each data operation
  consumed (:func:`spec.fries.catalogue.step`); a blocking object flushes after its last
  operation (§7.1), in key order, as transaction ``"<operator>:final"``.

**Relation to the serial execution, up to a dependence relation (DiffStream-style).** Let D
relate two data operations of a run iff they are on the same object and the same key: they
read and write the same state. Everything else commutes: independent operations touch
different states, and an output's value depends only on the state and tuple of its operation.
Hence two runs with the same operations, update operations in the same places and every
D-related pair in the same order compute the same outputs and states. Two consequences, both
property-tested against :func:`spec.fries.scenario.serial_execution` (which runs transactions
whole, in a given order, first in first out within one):

* (Theorem 1) if every D-related pair of a run is ordered as in the witness serial order W of
  (C1), the replay computes ``serial_execution(σ, W)``: (C3) says "outputs and states equal the
  serial execution in the witness order, up to D";
* (Theorem 2) with no order-sensitive function, D-related data operations commute too, so for
  every witness W the replay computes ``serial_execution(σ, W)``: (C3) is then exactly the
  earlier oracle (outputs and states of the serial execution in the witness order).

**Why (C3) takes the run's own order on D and not W's.** The order in which an object merges
*different* channels is the engine's free choice (asynchronous channels; Fries promises
nothing about it). A transaction reaching an object on two paths (a fork and a join), or two
sources feeding two order-sensitive objects, let a correct engine interleave two transactions
at one object (t1 via B, t2 via B, t1 via C, t2 via C) or order them one way at one object and
the other way at another. No single serial order explains such a run, yet it is correct; what
a correct engine must not do is reorder one channel (C2) or compute a value its own order does
not give (C3).

:func:`is_consistent` is the definition, literally (brute-force Def. 4.9, so for small runs);
the conformance oracles (``conformance.fries.oracles``) use the efficient checker and
:func:`replay` and name the failed condition.
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from typing import Callable, Mapping

from spec.fries.catalogue import Function, flush, step
from spec.fries.dataflow import OperatorKind
from spec.fries.reorder import reordered_ingestion
from spec.fries.scenario import Output, Scenario, Senders, Update, operator_of, route_source
from spec.fries.schedule import Operation, Schedule
from spec.fries.serializability import is_conflict_serializable

Item = tuple[str, int, int]
"""A tuple on a channel: (transaction, key, value)."""


@dataclass(frozen=True)
class Replay:
    """The replay of a run (module docstring, C3): the outputs and final states it computes,
    and every (C2) channel violation in words (empty when every channel is FIFO and fully
    consumed)."""

    outputs: Counter[Output]
    states: Mapping[tuple[str, int], int]
    violations: tuple[str, ...]


def dependent(a: tuple[str, int], b: tuple[str, int]) -> bool:
    """The dependence relation D on data operations given as (object, key): same object and
    same key (they read and write one state)."""
    return a == b


def replay(scenario: Scenario, schedule: Schedule, senders: Senders | None = None) -> Replay:
    """Execute every object's log in its own order (module docstring, C3), checking (C2).

    ``senders`` names the channel of each data operation; a sender may be given as an
    operator name when the receiving key decides the worker. Without senders (or with
    ``None`` entries) the operation consumes the first channel, in sender-name order, whose
    next tuple belongs to its transaction - exact unless an object receives one transaction on
    several channels (a fork and a join), so engines should report senders."""
    flow = scenario.dataflow
    channels: dict[tuple[str, str], list[Item]] = {}

    def send(sender: str, receiver: str, item: Item) -> None:
        channels.setdefault((sender, scenario.object_of(receiver, item[1])), []).append(item)

    source_of = {t.txn: name for name, tuples in scenario.sources.items() for t in tuples}
    for tup in reordered_ingestion(scenario):
        source = source_of[tup.txn]
        for child in route_source(tup.key, flow.children(source)):
            send(scenario.object_of(source, tup.key), child, (tup.txn, tup.key, tup.value))
    outputs: Counter[Output] = Counter()
    states: dict[tuple[str, int], int] = {}
    violations: list[str] = []
    for op in flow.topological_order():
        if flow.kind(op) is OperatorKind.SOURCE:
            continue
        for obj in scenario.objects(op):
            inputs = {snd: deque(items) for (snd, rcv), items in sorted(channels.items()) if rcv == obj}
            log = schedule.logs.get(obj, ())
            named = tuple(senders.get(obj, ())) if senders is not None else ()
            function = _run_object(scenario, op, obj, log, named, inputs, states, outputs, send, violations)
            for snd, queue in inputs.items():
                if queue:
                    violations.append(f"{len(queue)} tuple(s) sent on {snd} -> {obj} were never processed "
                                      f"(first: {queue[0][0]} key {queue[0][1]})")
            if flow.kind(op) is OperatorKind.BLOCKING:
                txn = f"{op}:final"
                for key in sorted(k for (o, k) in states if o == op and scenario.object_of(op, k) == obj):
                    for child, k, v in flush(function, states[(op, key)], key, flow.children(op)):
                        if child:
                            send(obj, child, (txn, k, v))
                        else:
                            outputs[(op, txn, k, v)] += 1
    return Replay(outputs, states, tuple(violations))


def _run_object(scenario: Scenario, op: str, obj: str, log: tuple[Operation, ...], named: tuple[str | None, ...],
                inputs: dict[str, deque[Item]], states: dict[tuple[str, int], int], outputs: Counter[Output],
                send: Callable[[str, str, Item], None], violations: list[str]) -> Function:
    """Replay one object's log; return its function at the end."""
    flow = scenario.dataflow
    children = flow.children(op)
    function = scenario.functions[op]
    for position, operation in enumerate(log):
        if operation.update:
            update = _update(scenario, op, operation.txn)
            if update is None:
                violations.append(f"{obj} logs update {operation.txn}, which does not reconfigure {op}")
                continue
            function = update.function
            for (o, key), value in list(states.items()):
                if o == op and scenario.object_of(op, key) == obj:
                    states[(o, key)] = update.state.apply(value)
            continue
        if operation.txn == f"{op}:final":
            continue  # the object's own flush, done after its last operation
        sender = named[position] if position < len(named) else None
        item = consume_input(obj, operation.txn, sender, inputs, violations)
        if item is None:
            continue
        txn, key, value = item
        states[(op, key)], emitted = step(function, states.get((op, key)), key, value, children)
        for child, k, v in emitted:
            if child:
                send(obj, child, (txn, k, v))
            else:
                outputs[(op, txn, k, v)] += 1
    return function


def _update(scenario: Scenario, op: str, txn: str) -> Update | None:
    """The update u(op) of request ``txn`` ("Rj"), or None."""
    if not txn.startswith("R") or not txn[1:].isdigit():
        return None
    j = int(txn[1:])
    if not 1 <= j <= len(scenario.reconfigurations):
        return None
    return scenario.reconfigurations[j - 1].updates.get(op)


def consume_input(obj: str, txn: str, sender: str | None, inputs: dict[str, deque[Item]],
                  violations: list[str]) -> Item | None:
    """Take the tuple of ``txn`` that ``obj``'s data operation processed (module docstring,
    C2); record a violation when it is not the next tuple of its channel or was never sent."""
    candidates = [snd for snd in inputs if sender is None or snd == sender or operator_of(snd) == sender]
    for snd in candidates:
        if inputs[snd] and inputs[snd][0][0] == txn:
            return inputs[snd].popleft()
    for snd in candidates:
        queue = inputs[snd]
        for index, item in enumerate(queue):
            if item[0] == txn:
                violations.append(f"channel {snd} -> {obj} is not FIFO: {obj} processed {txn} (key {item[1]}) "
                                  f"before {queue[0][0]} (key {queue[0][1]}), which {snd} sent earlier")
                del queue[index]
                return item
    origin = f"from {sender}" if sender is not None else "on any channel"
    violations.append(f"{obj} processed a tuple of {txn} that was never sent to it {origin} "
                      "(or was already processed)")
    return None


def is_consistent(scenario: Scenario, schedule: Schedule, senders: Senders | None,
                  outputs: Counter[Output], states: Mapping[tuple[str, int], int] | None) -> bool:
    """The definition (module docstring): (C1) by brute force (Def. 4.9, every serial order),
    (C2) and (C3) by :func:`replay`; ``states`` None skips the state comparison."""
    if not is_conflict_serializable(schedule):
        return False
    replayed = replay(scenario, schedule, senders)
    if replayed.violations or replayed.outputs != outputs:
        return False
    return states is None or dict(replayed.states) == dict(states)
