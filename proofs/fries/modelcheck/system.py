"""The transition system: one reconfiguration R and the data transactions, every interleaving.

A state is a tuple (immutable, hashable):

``(pending, requested, fcms, got, aligned, emitted, queues, logs)``

* ``pending`` - source tuples not yet ingested, as (transaction, source object) pairs;
* ``requested`` - has the controller started R (it may do so at any moment);
* ``fcms`` - bitmask of objects whose FCM is on its way;
* ``got`` - per object, bitmask of the input channels whose marker it has taken;
* ``aligned`` - bitmask of objects that have aligned (handled their FCM or taken a marker on
  every input they align on) and so applied R if they are reconfigured;
* ``emitted`` - bitmask over (transaction, logical operator) of unique operators that have
  emitted their one output tuple of that transaction (Alg. 4's uniqueness property);
* ``queues`` - per channel, the messages on it in FIFO order: a transaction number, or
  :data:`MARKER`;
* ``logs`` - per object, its operations so far (Def. 4.7): a transaction number, or
  :data:`UPDATE` for u(O) of R.

Actions (one atomic step each; an object handles one message at a time, and an FCM that
arrives while it works is handled between two tuples, Fries §4.1, so atomic steps lose no
behaviour): the controller starts R; an FCM reaches its object; a source ingests a tuple; an
object takes the head of one of its input channels that is not blocked by alignment (a data
tuple: it logs the operation and emits; a marker: it aligns). Which unblocked channel an
object serves next is free: channel delays are arbitrary, so every arrival order is possible.

Emissions are the *maximal* ones each kind allows (a run emitting less has a schedule that is
a sub-schedule of a maximal run's, and a sub-schedule of a conflict-serializable schedule is
conflict-serializable): a source sends its tuple to one child (``route_source``), a
one-to-one operator one tuple on one output channel, a one-to-many operator two tuples on any
two output channels (possibly the same one: more than two add no new conflict, a cycle
t -> R -> t needs two operations of t), a replicate one tuple per output port, a blocking
operator nothing (its flush is a new transaction after every reconfiguration, §7.1). A unique
operator (all its workers together) emits at most one tuple per transaction, and may emit it
for any of that transaction's inputs: it chooses to emit one tuple (on a channel its kind
allows) or nothing.
"""

from __future__ import annotations

from itertools import combinations_with_replacement, product
from typing import Iterator

from spec.fries.dataflow import OperatorKind

from proofs.fries.modelcheck.control import Control, Objects

MARKER = -1
UPDATE = -1

State = tuple[object, ...]
Action = tuple[object, ...]


class System:
    """Successors of states for one configuration (``objects``) under one plan (``control``),
    with ``tuples`` source tuples (transactions 0..tuples-1, each ingested at any source
    object: every initial placement is an initial state)."""

    def __init__(self, objects: Objects, control: Control, tuples: int = 1) -> None:
        self.objects = objects
        self.control = control
        self.tuples = tuples
        n = len(objects.names)
        self.n = n
        self.inputs = tuple(objects.inputs(o) for o in range(n))
        self.options = tuple(self._options(o) for o in range(n))
        self.single = tuple(sorted({(c,) for option in self.options[o] for c in option})
                            for o in range(n))
        self.unique_op = tuple(objects.operator[o] if objects.unique[o] else -1 for o in range(n))
        self.operators = max(objects.operator) + 1

    def _options(self, obj: int) -> list[tuple[int, ...]]:
        kind = self.objects.kinds[obj]
        ports = self.objects.ports[obj]
        outs = tuple(c for port in ports for c in port)
        if not outs or kind is OperatorKind.BLOCKING:
            return [()]
        if kind in (OperatorKind.SOURCE, OperatorKind.ONE_TO_ONE):
            return [(c,) for c in outs]
        if kind is OperatorKind.ONE_TO_MANY:
            return list(combinations_with_replacement(outs, 2))
        return [tuple(choice) for choice in product(*ports)]

    def initial_states(self) -> Iterator[State]:
        """One state per placement of the source tuples on source objects."""
        n = self.n
        queues = tuple(() for _ in self.objects.channels)
        logs = tuple(() for _ in range(n))
        for placement in product(self.objects.sources, repeat=self.tuples):
            pending = tuple(sorted((t, s) for t, s in enumerate(placement)))
            yield (pending, False, 0, (0,) * n, 0, 0, queues, logs)

    def successors(self, state: State) -> Iterator[tuple[Action, State]]:
        """Every (action, next state)."""
        pending, requested, fcms, got, aligned, emitted, queues, logs = state
        assert isinstance(pending, tuple) and isinstance(fcms, int) and isinstance(got, tuple)
        assert isinstance(aligned, int) and isinstance(emitted, int)
        assert isinstance(queues, tuple) and isinstance(logs, tuple)
        control = self.control
        if not requested:
            yield ("start",), (pending, True, _mask(control.entries), got, aligned, emitted,
                               queues, logs)
        for obj in range(self.n):
            if fcms >> obj & 1:
                after = self._align(obj, got, aligned, queues, logs)
                yield ("fcm", obj), (pending, requested, fcms & ~(1 << obj), after[0],
                                     after[1], emitted, after[2], after[3])
        for i, (txn, src) in enumerate(pending):
            rest = pending[:i] + pending[i + 1:]
            for option in self.options[src]:
                yield ("ingest", src, txn, option), (rest, requested, fcms, got, aligned,
                                                     emitted, _send(queues, option, txn), logs)
        for c, queue in enumerate(queues):
            if not queue:
                continue
            obj = self.objects.channels[c][1]
            got_obj = got[obj]
            if got_obj >> c & 1 and not aligned >> obj & 1:
                continue  # blocked: a marker came on c, obj has not aligned yet
            head = queue[0]
            popped = _replace(queues, c, queue[1:])
            if head == MARKER:
                after_marker = self._marker(state, obj, c, popped)
                now_aligned = not aligned >> obj & 1 and bool(after_marker[4] >> obj & 1)  # type: ignore[operator]
                yield ("marker", c, now_aligned), after_marker
                continue
            assert isinstance(head, int)
            log = _replace(logs, obj, logs[obj] + (head,))
            for option, emitted_after in self._emissions(obj, head, emitted):
                yield ("data", c, head, option), (pending, requested, fcms, got, aligned,
                                                  emitted_after, _send(popped, option, head), log)

    def _emissions(self, obj: int, txn: int, emitted: int) -> Iterator[tuple[tuple[int, ...], int]]:
        op = self.unique_op[obj]
        if op < 0:
            for option in self.options[obj]:
                yield option, emitted
            return
        bit = 1 << (txn * self.operators + op)
        yield (), emitted
        if not emitted & bit:
            for option in self.single[obj]:
                yield option, emitted | bit

    def _marker(self, state: State, obj: int, c: int, queues: tuple[object, ...]) -> State:
        pending, requested, fcms, got, aligned, emitted, _, logs = state
        assert isinstance(got, tuple) and isinstance(aligned, int) and isinstance(logs, tuple)
        got_obj = got[obj]
        assert isinstance(got_obj, int)
        got = _replace(got, obj, got_obj | 1 << c)
        expected = self.control.align[obj]
        if aligned >> obj & 1:
            return (pending, requested, fcms, got, aligned, emitted, queues, logs)
        done = self.control.align_on_any or all(got[obj] >> e & 1 for e in expected)  # type: ignore[operator]
        if not done:
            return (pending, requested, fcms, got, aligned, emitted, queues, logs)
        got, aligned, queues, logs = self._align(obj, got, aligned, queues, logs)
        return (pending, requested, fcms, got, aligned, emitted, queues, logs)

    def _align(self, obj: int, got: tuple[object, ...], aligned: int, queues: tuple[object, ...],
               logs: tuple[object, ...]) -> tuple[tuple[object, ...], int, tuple[object, ...],
                                                  tuple[object, ...]]:
        """``obj`` aligns: applies R if reconfigured, forwards markers (marker schedulers)."""
        if obj in self.objects.reconfigured:
            log = logs[obj]
            assert isinstance(log, tuple)
            logs = _replace(logs, obj, log + (UPDATE,))
        aligned |= 1 << obj
        if not self.control.naive:
            queues = _send(queues, self.control.forward[obj], MARKER)
        return got, aligned, queues, logs


def _mask(objects: frozenset[int]) -> int:
    out = 0
    for o in objects:
        out |= 1 << o
    return out


def _replace(values: tuple[object, ...], index: int, value: object) -> tuple[object, ...]:
    return values[:index] + (value,) + values[index + 1:]


def _send(queues: tuple[object, ...], channels: tuple[int, ...], message: int) -> tuple[object, ...]:
    if not channels:
        return queues
    out = list(queues)
    for c in channels:
        queue = out[c]
        assert isinstance(queue, tuple)
        out[c] = queue + (message,)
    return tuple(out)
