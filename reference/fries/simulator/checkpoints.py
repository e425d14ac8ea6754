"""Checkpoints and the §7.3 rule that keeps them consistent under FCMs.

Model: every ``interval`` time units (while sources ingest) the controller starts checkpoint
``c``: it injects a barrier at every root object (same delay as an FCM); an object that has
taken the barrier on every pipelined input takes its snapshot - here, what matters for
§7.3: *which reconfigurations it has applied* - and forwards the barrier on every pipelined
output. Barriers are counted, not aligned (they never hold data back): the configuration an
object snapshots is decided by the order of barriers and epoch markers on its FIFO inputs,
which is all the §7.3 argument uses, and it cannot deadlock against a marker alignment.
A checkpoint completes when every object has snapshotted.

A completed checkpoint is *consistent* when, for every reconfiguration, the objects it
updates either all had it applied in their snapshot or none did (§7.3: "not in a consistent
state if some operators in R are updated, and some are not").

The rule (§7.3, ``rule=True``): on a reconfiguration request the controller cancels every
in-flight checkpoint and starts none until the scheduler reports that every control message
has been delivered (Fries: every component head got its FCM). Ticks that fall in that window
are skipped.
"""

from __future__ import annotations

from functools import partial
from typing import Callable, Mapping, Protocol

from spec.fries.scenario import Scenario

from reference.fries.messages import Barrier, Message
from reference.fries.simulator.clock import CONTROL
from reference.fries.simulator.result import CheckpointRecord, SimulationResult
from reference.fries.topology import Topology


class CheckpointHost(Protocol):
    """What the tracker reads and calls of the engine that owns it
    (:class:`reference.fries.simulator.engine.Engine`)."""

    @property
    def now(self) -> float:
        """The current simulated time."""
        ...

    @property
    def topology(self) -> Topology:
        """The objects and channels of the run."""
        ...

    @property
    def request_time(self) -> Mapping[int, float]:
        """When each reconfiguration was requested."""
        ...

    @property
    def completed(self) -> Mapping[int, float]:
        """When each completed reconfiguration completed."""
        ...

    def at(self, time: float, priority: int, action: Callable[[], None]) -> None:
        """Run ``action`` at ``time``."""
        ...

    def control(self, obj: str, action: Callable[[], None]) -> None:
        """A controller message to ``obj``; ``action`` runs on arrival."""
        ...

    def send(self, sender: str, receiver: str, message: Message) -> None:
        """Put ``message`` on the FIFO channel ``sender -> receiver``."""
        ...

    def applied_ids(self, obj: str) -> frozenset[int]:
        """The reconfigurations ``obj`` has applied so far."""
        ...


class CheckpointTracker:
    """Starts checkpoints, counts barriers, records snapshots (see the module docstring)."""

    def __init__(self, engine: CheckpointHost, interval: float | None, rule: bool) -> None:
        self.engine = engine
        self.interval = interval
        self.rule = rule
        self.blocked = False
        self._started: dict[int, float] = {}
        self._completed: dict[int, float] = {}
        self._cancelled: set[int] = set()
        self._snapshots: dict[int, dict[str, frozenset[int]]] = {}
        self._counts: dict[tuple[int, str], int] = {}

    def schedule_ticks(self, until: float) -> None:
        """Schedule a checkpoint every ``interval`` up to ``until``."""
        if self.interval is None or self.interval <= 0:
            return
        tick = self.interval
        while tick <= until:
            self.engine.at(tick, CONTROL, self._tick)
            tick += self.interval

    def _tick(self) -> None:
        if self.blocked:
            return
        checkpoint = len(self._started) + 1
        self._started[checkpoint] = self.engine.now
        self._snapshots[checkpoint] = {}
        for root in self.engine.topology.roots:
            self.engine.control(root, partial(self._snapshot, root, checkpoint))

    def on_barrier(self, obj: str, sender: str, checkpoint: int) -> None:
        """``obj`` took the barrier of ``checkpoint`` from ``sender``."""
        key = (checkpoint, obj)
        self._counts[key] = self._counts.get(key, 0) + 1
        if self._counts[key] == len(self.engine.topology.pipelined_in[obj]):
            self._snapshot(obj, checkpoint)

    def _snapshot(self, obj: str, checkpoint: int) -> None:
        snapshot = self._snapshots[checkpoint]
        snapshot[obj] = self.engine.applied_ids(obj)
        for receiver in self.engine.topology.pipelined_out[obj]:
            self.engine.send(obj, receiver, Barrier(checkpoint))
        if len(snapshot) == len(self.engine.topology.objects):
            self._completed[checkpoint] = self.engine.now

    def on_request(self, rid: int) -> None:
        """A reconfiguration was requested: with the rule, cancel in-flight checkpoints and
        hold new ones."""
        if not self.rule:
            return
        self.blocked = True
        for checkpoint in self._started:
            if checkpoint not in self._completed:
                self._cancelled.add(checkpoint)

    def on_control_delivered(self, rid: int) -> None:
        """The scheduler delivered every control message of ``rid``: checkpoints may start
        again (unless a later request is still waiting for its own)."""
        engine = self.engine
        waiting = [r for r in engine.request_time if r not in engine.completed and r != rid]
        if not waiting:
            self.blocked = False

    def records(self) -> tuple[CheckpointRecord, ...]:
        """Every checkpoint started, in order."""
        return tuple(
            CheckpointRecord(c, self._started[c], self._completed.get(c), c in self._cancelled,
                             dict(self._snapshots[c]))
            for c in sorted(self._started))


def inconsistent_checkpoints(scenario: Scenario, result: SimulationResult) -> tuple[tuple[int, int], ...]:
    """The (checkpoint, reconfiguration) pairs where a completed, not cancelled checkpoint
    holds some but not all updates of the reconfiguration (§7.3); empty when every usable
    checkpoint is consistent."""
    found = []
    for record in result.checkpoints:
        if record.completed is None or record.cancelled:
            continue
        for rid, reconfiguration in enumerate(scenario.reconfigurations, start=1):
            objects = [obj for op in reconfiguration.updates for obj in scenario.objects(op)]
            with_update = sum(1 for obj in objects if rid in record.snapshot.get(obj, frozenset()))
            if 0 < with_update < len(objects):
                found.append((record.checkpoint, rid))
    return tuple(found)
