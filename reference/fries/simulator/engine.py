"""The discrete-event engine of the Fries simulator.

Model (see docs/fries-simulator.md):

* time is abstract; events are ordered by (time, priority, creation order), so a run is a
  deterministic function of the scenario (all randomness comes from one
  ``random.Random(timing.seed)``, drawn in event order);
* source tuples are ingested every ``timing.ingest_interval`` in :func:`reordered_ingestion`
  (:func:`ingestion_order` unless ``timing.reorder_bound`` > 0);
  reconfiguration ``j`` is requested at ``at_j * ingest_interval``, before the tuple ingested
  at that instant (so exactly ``at_j`` tuples were ingested before the request);
* every object processes one tuple at a time, taking ``operator_cost[op] * stragglers[obj]``
  time units; markers, barriers and FCMs take no time; an FCM that arrives while the object
  is busy is handled right after the current tuple (Fries §4.1);
* every (sender, receiver) pair is a FIFO channel; each message gets a delay drawn from
  ``timing.channel_delay`` but never overtakes an earlier message on its channel;
* an object picks, among the inputs not blocked by an alignment, the message that arrived
  first;
* one reconfiguration at a time (Fries §2.2), in declaration order: a request made while
  another is running (or before an earlier-declared one) waits until those complete;
* at quiescence the blocking operators flush in topological order (§7.1), each after the
  previous flush has quiesced; a flush is transaction ``"<operator>:final"``.
"""

from __future__ import annotations

import heapq
import itertools
import random
from collections import Counter, deque
from dataclasses import dataclass, field
from functools import partial
from typing import Callable

from spec.fries.dataflow import OperatorKind
from spec.fries.catalogue import flush, order_sensitive, step
from spec.fries.scenario import (
    Function,
    Output,
    Scenario,
    emit,
    route_source,
)
from spec.fries.reorder import reordered_ingestion
from spec.fries.schedule import Operation, Schedule

from reference.fries.messages import Barrier, Data, Marker, Message
from reference.fries.schedulers.base import LogEntry, Scheduler
from reference.fries.simulator.checkpoints import CheckpointTracker
from reference.fries.simulator.clock import CONTROL, INGEST, WORK
from reference.fries.simulator.result import SimulationResult, SimulationStats
from reference.fries.topology import Topology, build_topology


@dataclass
class _Runtime:
    """Per-object mutable state of the engine."""

    queues: dict[str, deque[tuple[int, Message]]] = field(default_factory=dict)
    blocked: dict[str, set[int]] = field(default_factory=dict)
    fcms: list[object] = field(default_factory=list)
    busy: bool = False


class Engine:
    """One simulated run of ``scenario`` under ``scheduler`` (use :func:`simulate`)."""

    def __init__(self, scenario: Scenario, scheduler: Scheduler, *,
                 checkpoint_interval: float | None = None, checkpoint_rule: bool = True) -> None:
        self.scenario = scenario
        self.scheduler = scheduler
        self.topology: Topology = build_topology(scenario)
        self.timing = scenario.timing
        self.rng = random.Random(self.timing.seed)
        self.now = 0.0
        self._events: list[tuple[float, int, int, Callable[[], None]]] = []
        self._seq = itertools.count()
        op_of = self.topology.operator_of
        self.functions: dict[str, Function] = {
            obj: scenario.functions[op] for obj, op in op_of.items() if op in scenario.functions}
        self.state: dict[tuple[str, int], int] = {}
        self._keys: dict[str, set[int]] = {obj: set() for obj in op_of}
        self.outputs: Counter[Output] = Counter()
        self._logs: dict[str, list[LogEntry]] = {
            obj: [] for obj in self.topology.objects if obj not in self.topology.sources}
        self._rt: dict[str, _Runtime] = {obj: _Runtime() for obj in self.topology.objects}
        self._channel_free: dict[tuple[str, str], float] = {}
        count = len(scenario.reconfigurations)
        self.request_time: dict[int, float] = {}
        self.start_time: dict[int, float] = {}
        self.completed: dict[int, float] = {}
        self.applied: dict[int, dict[str, float]] = {rid: {} for rid in range(1, count + 1)}
        self._remaining: dict[int, set[str]] = {}
        self.active: int | None = None
        self._waiting: set[int] = set()
        self._fcms = 0
        self._markers = 0
        self._marker_channels: set[tuple[str, str]] = set()
        self._emitted: Counter[tuple[str, str]] = Counter()
        self._unique = {op.name for op in scenario.dataflow.operators if op.unique}
        self.checkpoints = CheckpointTracker(self, checkpoint_interval, checkpoint_rule)

    # --- scheduling primitives -------------------------------------------------------------

    def at(self, time: float, priority: int, action: Callable[[], None]) -> None:
        """Run ``action`` at ``time``."""
        heapq.heappush(self._events, (time, priority, next(self._seq), action))

    def _draw(self, bounds: tuple[float, float]) -> float:
        lo, hi = bounds
        return lo if hi <= lo else self.rng.uniform(lo, hi)

    def send(self, sender: str, receiver: str, message: Message) -> None:
        """Put ``message`` on the FIFO channel ``sender -> receiver``."""
        channel = (sender, receiver)
        arrival = max(self.now + self._draw(self.timing.channel_delay), self._channel_free.get(channel, 0.0))
        self._channel_free[channel] = arrival
        self.at(arrival, WORK, lambda: self._arrive(receiver, sender, message))

    def send_marker(self, sender: str, receiver: str, rid: int) -> None:
        """Send the epoch marker of ``rid`` on ``sender -> receiver`` (counted in the stats)."""
        self._markers += 1
        self._marker_channels.add((sender, receiver))
        self.send(sender, receiver, Marker(rid))

    def send_fcm(self, obj: str, payload: object) -> None:
        """The controller sends an FCM to ``obj``: it arrives after a ``timing.fcm_delay``
        draw, bypassing data (Def. 4.1), and is handled once ``obj`` is not busy."""
        self._fcms += 1
        self.at(self.now + self._draw(self.timing.fcm_delay), CONTROL, lambda: self._fcm_arrive(obj, payload))

    def control(self, obj: str, action: Callable[[], None]) -> None:
        """A controller message to ``obj`` other than an FCM (a checkpoint barrier
        injection): same delay as an FCM, ``action`` runs on arrival."""
        self.at(self.now + self._draw(self.timing.fcm_delay), CONTROL, action)

    def block(self, obj: str, sender: str, token: int) -> None:
        """Hold the messages on ``sender -> obj`` until :meth:`unblock` of ``token``."""
        self._rt[obj].blocked.setdefault(sender, set()).add(token)

    def unblock(self, obj: str, token: int) -> None:
        """Release every input of ``obj`` blocked for ``token``."""
        runtime = self._rt[obj]
        for sender in list(runtime.blocked):
            runtime.blocked[sender].discard(token)
            if not runtime.blocked[sender]:
                del runtime.blocked[sender]
        self.at(self.now, WORK, lambda: self._try_start(obj))

    # --- reconfigurations ------------------------------------------------------------------

    def reconfigured_objects(self, rid: int) -> frozenset[str]:
        """The objects of the operators reconfiguration ``rid`` updates (§7.2)."""
        updates = self.scenario.reconfigurations[rid - 1].updates
        return frozenset(obj for op in updates for obj in self.topology.objects_of[op])

    def apply_update(self, obj: str, rid: int) -> None:
        """Apply ``rid``'s update u(obj): new function, state transformation of every key
        ``obj`` holds, the update operation in its log. A no-op for objects ``rid`` does not
        reconfigure (Fries' one-to-many heads); applying twice is a bug and raises."""
        op = self.topology.operator_of[obj]
        update = self.scenario.reconfigurations[rid - 1].updates.get(op)
        if update is None:
            return
        if obj in self.applied[rid]:
            raise RuntimeError(f"R{rid} applied twice on {obj!r}")
        self.functions[obj] = update.function
        for key in self._keys[obj]:
            if (op, key) in self.state:  # (the multi-version scheduler keeps its own copies)
                self.state[(op, key)] = update.state.apply(self.state[(op, key)])
        self._logs[obj].append(LogEntry(Operation(f"R{rid}", update=True), rid))
        self.applied[rid][obj] = self.now
        remaining = self._remaining[rid]
        remaining.discard(obj)
        if not remaining:
            self.scheduler.on_all_applied(self, rid)

    def applied_ids(self, obj: str) -> frozenset[int]:
        """The reconfigurations ``obj`` has applied so far."""
        return frozenset(rid for rid, objs in self.applied.items() if obj in objs)

    def last_applied(self, rid: int) -> float:
        """When the last update of ``rid`` was applied."""
        return max(self.applied[rid].values())

    def complete(self, rid: int) -> None:
        """Reconfiguration ``rid`` is over for the controller: start the next queued one."""
        self.completed[rid] = self.now
        self.active = None
        self._start_next()

    def control_delivered(self, rid: int) -> None:
        """Every control message ``rid`` needs has been delivered (§7.3: checkpoints may
        start again)."""
        self.checkpoints.on_control_delivered(rid)

    def _request(self, rid: int) -> None:
        self.request_time[rid] = self.now
        self.checkpoints.on_request(rid)
        self._waiting.add(rid)
        self._start_next()

    def _start_next(self) -> None:
        """Start the next reconfiguration in declaration order, once it has been requested
        and nothing else runs (one reconfiguration at a time, Fries §2.2)."""
        upcoming = len(self.start_time) + 1
        if self.active is None and upcoming in self._waiting:
            self._waiting.discard(upcoming)
            self._start(upcoming)

    def _start(self, rid: int) -> None:
        self.active = rid
        self.start_time[rid] = self.now
        self._remaining[rid] = set(self.reconfigured_objects(rid))
        self.scheduler.start(self, rid)

    # --- data ------------------------------------------------------------------------------

    def _ingest(self, source: str, key: int, value: int, txn: str) -> None:
        obj = self.scenario.object_of(source, key)
        version = self.scheduler.source_version(self, obj)
        for child in route_source(key, self.scenario.dataflow.children(source)):
            self.send(obj, self.scenario.object_of(child, key), Data(txn, key, value, version))

    def _arrive(self, obj: str, sender: str, message: Message) -> None:
        self._rt[obj].queues.setdefault(sender, deque()).append((next(self._seq), message))
        self._try_start(obj)

    def _fcm_arrive(self, obj: str, payload: object) -> None:
        self._rt[obj].fcms.append(payload)
        self._try_start(obj)

    def _try_start(self, obj: str) -> None:
        runtime = self._rt[obj]
        while not runtime.busy:
            if runtime.fcms:
                self.scheduler.on_fcm(self, obj, runtime.fcms.pop(0))
                continue
            best: str | None = None
            for sender, queue in runtime.queues.items():
                if queue and sender not in runtime.blocked and (
                        best is None or queue[0][0] < runtime.queues[best][0][0]):
                    best = sender
            if best is None:
                return
            _, message = runtime.queues[best].popleft()
            if isinstance(message, Marker):
                self.scheduler.on_marker(self, obj, best, message.rid)
            elif isinstance(message, Barrier):
                self.checkpoints.on_barrier(obj, best, message.checkpoint)
            else:
                runtime.busy = True
                op = self.topology.operator_of[obj]
                cost = self.timing.operator_cost.get(op, 0.0) * self.timing.stragglers.get(obj, 1.0)
                self.at(self.now + cost, WORK, partial(self._finish, obj, message, best))

    def _finish(self, obj: str, message: Data, sender: str) -> None:
        op = self.topology.operator_of[obj]
        function = self.scheduler.function_for(self, obj, message)
        children = self.scenario.dataflow.children(op)
        if order_sensitive(function):
            # (single-version schedulers only: simulate() refuses multi-version here)
            key = (op, message.key)
            self.state[key], emitted = step(function, self.state.get(key), message.key, message.value, children)
        else:
            self.scheduler.add_state(self, op, message)
            emitted = emit(function, message.key, message.value, children)
        self._keys[obj].add(message.key)
        self._logs[obj].append(LogEntry(Operation(message.txn), message.version, sender))
        self._deliver(obj, op, message.txn, message.version, emitted)
        self.scheduler.on_processed(self, obj, message)
        self._rt[obj].busy = False
        self._try_start(obj)

    def _deliver(self, obj: str, op: str, txn: str, version: int,
                 emitted: list[tuple[str, int, int]]) -> None:
        if op in self._unique:
            self._emitted[(op, txn)] += len(emitted)
        for child, key, value in emitted:
            if child:
                self.send(obj, self.scenario.object_of(child, key), Data(txn, key, value, version))
            else:
                self.outputs[(op, txn, key, value)] += 1

    def _flush(self, op: str) -> None:
        """End of input for blocking operator ``op`` (§7.1): each object emits, per key it
        holds, ``mul * state + add``, as transaction ``"<op>:final"``."""
        txn = f"{op}:final"
        children = self.scenario.dataflow.children(op)
        version = self.scheduler.source_version(self, None)
        for obj in self.topology.objects_of[op]:
            function = self.functions[obj]
            self._logs[obj].append(LogEntry(Operation(txn), version))
            emitted = []
            for key in sorted(self._keys[obj]):
                emitted.extend(flush(function, self.scheduler.state_of(self, op, key), key, children))
            self._deliver(obj, op, txn, version, emitted)

    # --- the run ---------------------------------------------------------------------------

    def run(self) -> SimulationResult:
        """Simulate to the end and collect the result."""
        interval = self.timing.ingest_interval
        source_of = {t.txn: name for name, tuples in self.scenario.sources.items() for t in tuples}
        for index, tup in enumerate(reordered_ingestion(self.scenario)):
            self.at(index * interval, INGEST,
                    partial(self._ingest, source_of[tup.txn], tup.key, tup.value, tup.txn))
        for rid, reconfiguration in enumerate(self.scenario.reconfigurations, start=1):
            self.at(reconfiguration.at * interval, CONTROL, partial(self._request, rid))
        total = sum(len(t) for t in self.scenario.sources.values())
        self.checkpoints.schedule_ticks(max(0.0, (total - 1) * interval))
        flow = self.scenario.dataflow
        flushes = deque(op for op in flow.topological_order() if flow.kind(op) is OperatorKind.BLOCKING)
        while True:
            while self._events:
                time, _, _, action = heapq.heappop(self._events)
                self.now = max(self.now, time)
                action()
            if not flushes:
                break
            self._flush(flushes.popleft())
        self._check_finished()
        arranged = {obj: self.scheduler.arrange(self, obj, entries) for obj, entries in self._logs.items()}
        return SimulationResult(
            outputs=self.outputs,
            schedule=Schedule({obj: tuple(e.operation for e in entries) for obj, entries in arranged.items()}),
            senders={obj: tuple(e.sender for e in entries) for obj, entries in arranged.items()},
            states=self.scheduler.final_states(self),
            delays=self.scheduler.delays(self),
            end_time=self.now,
            stats=SimulationStats(self._fcms, self._markers, len(self._marker_channels)),
            checkpoints=self.checkpoints.records(),
            uniqueness_violations=tuple(sorted({op for (op, _), n in self._emitted.items() if n > 1})),
        )

    def _check_finished(self) -> None:
        """Every reconfiguration must have completed and no message may be left: otherwise
        the scheduler deadlocked, which is a bug, not a result."""
        for rid in self.applied:
            missing = self.reconfigured_objects(rid) - set(self.applied[rid])
            if missing or rid not in self.completed:
                raise RuntimeError(f"R{rid} did not complete under {self.scheduler.name} "
                                   f"(objects never updated: {sorted(missing)})")
        for obj, runtime in self._rt.items():
            if any(runtime.queues.values()):
                raise RuntimeError(f"messages left undelivered at {obj!r} under {self.scheduler.name}")
