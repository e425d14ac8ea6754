"""The interface between the simulator's engine and a reconfiguration scheduler.

The engine (:mod:`reference.fries.simulator.engine`) moves data: ingestion, FIFO channels,
one tuple at a time per object, blocking flushes. A scheduler decides *when each object
applies its function update* by reacting to three events - the controller starting a
reconfiguration, an FCM reaching an object, an epoch marker reaching an object - and calling
back :meth:`EngineView.apply_update`, :meth:`EngineView.send_fcm`,
:meth:`EngineView.send_marker`, :meth:`EngineView.block` / :meth:`EngineView.unblock`. The
default hooks here are those of every single-version scheduler; the multi-version scheduler
overrides the data hooks.

A scheduler sees the engine only through :class:`EngineView`, the part of the engine's API
it may call, so the engine imports the schedulers and not the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping, Protocol

from spec.fries.scenario import Function, Scenario
from spec.fries.schedule import Operation

from reference.fries.messages import Data
from reference.fries.topology import Topology


@dataclass(frozen=True)
class LogEntry:
    """One operation in an object's log with the version it used (multi-version only) and
    the object that sent the tuple it processed (data operations)."""

    operation: Operation
    version: int = 0
    sender: str | None = None


class EngineView(Protocol):
    """What a scheduler reads and calls of the engine
    (:class:`reference.fries.simulator.engine.Engine` is the one implementation)."""

    @property
    def now(self) -> float:
        """The current simulated time."""
        ...

    @property
    def scenario(self) -> Scenario:
        """The scenario being run."""
        ...

    @property
    def topology(self) -> Topology:
        """The objects and channels of the scenario's dataflow."""
        ...

    @property
    def functions(self) -> Mapping[str, Function]:
        """Each object's current function."""
        ...

    @property
    def state(self) -> dict[tuple[str, int], int]:
        """The (operator, key) states, updated in place by :meth:`Scheduler.add_state`."""
        ...

    @property
    def request_time(self) -> Mapping[int, float]:
        """When each reconfiguration was requested."""
        ...

    @property
    def completed(self) -> Mapping[int, float]:
        """When each completed reconfiguration completed."""
        ...

    def send_fcm(self, obj: str, payload: object) -> None:
        """The controller sends an FCM to ``obj``."""
        ...

    def send_marker(self, sender: str, receiver: str, rid: int) -> None:
        """Send the epoch marker of ``rid`` on ``sender -> receiver``."""
        ...

    def block(self, obj: str, sender: str, token: int) -> None:
        """Hold the messages on ``sender -> obj`` until :meth:`unblock` of ``token``."""
        ...

    def unblock(self, obj: str, token: int) -> None:
        """Release every input of ``obj`` blocked for ``token``."""
        ...

    def reconfigured_objects(self, rid: int) -> frozenset[str]:
        """The objects of the operators reconfiguration ``rid`` updates."""
        ...

    def apply_update(self, obj: str, rid: int) -> None:
        """Apply ``rid``'s update to ``obj``."""
        ...

    def applied_ids(self, obj: str) -> frozenset[int]:
        """The reconfigurations ``obj`` has applied so far."""
        ...

    def last_applied(self, rid: int) -> float:
        """When the last update of ``rid`` was applied."""
        ...

    def complete(self, rid: int) -> None:
        """Reconfiguration ``rid`` is over for the controller."""
        ...

    def control_delivered(self, rid: int) -> None:
        """Every control message ``rid`` needs has been delivered."""
        ...


class Scheduler:
    """Base class: hooks with the single-version defaults. ``name`` is the CLI name."""

    name = "base"

    def start(self, engine: EngineView, rid: int) -> None:
        """The controller starts reconfiguration ``rid`` (1-based) at ``engine.now``."""
        raise NotImplementedError

    def on_fcm(self, engine: EngineView, obj: str, payload: object) -> None:
        """An FCM sent with :meth:`EngineView.send_fcm` is handled by ``obj`` (after the tuple it
        was processing, Fries §4.1)."""

    def on_marker(self, engine: EngineView, obj: str, sender: str, rid: int) -> None:
        """``obj`` takes the epoch marker of ``rid`` from the channel ``sender -> obj``."""

    def on_all_applied(self, engine: EngineView, rid: int) -> None:
        """Every object of ``rid``'s operators applied its update: by default the
        reconfiguration is complete and the next queued one may start."""
        engine.complete(rid)

    # --- data hooks (multi-version overrides them) -----------------------------------------

    def source_version(self, engine: EngineView, source_obj: str | None) -> int:
        """The version tag of a tuple leaving ``source_obj`` (None: a blocking flush)."""
        return 0

    def function_for(self, engine: EngineView, obj: str, msg: Data) -> Function:
        """The function ``obj`` applies to ``msg``: its current one."""
        return engine.functions[obj]

    def add_state(self, engine: EngineView, op: str, msg: Data) -> None:
        """Add ``msg``'s value to its key's state at operator ``op`` (Fries' catalogue: the
        state is the sum of the values processed, spec.fries.scenario)."""
        engine.state[(op, msg.key)] = engine.state.get((op, msg.key), 0) + msg.value

    def state_of(self, engine: EngineView, op: str, key: int) -> int:
        """The current state of ``key`` at ``op`` (read by a blocking flush)."""
        return engine.state[(op, key)]

    def final_states(self, engine: EngineView) -> dict[tuple[str, int], int]:
        """Every (operator, key) state at the end of the run."""
        return dict(engine.state)

    def on_processed(self, engine: EngineView, obj: str, msg: Data) -> None:
        """``obj`` finished processing ``msg`` at ``engine.now``."""

    def arrange(self, engine: EngineView, obj: str, entries: Iterable[LogEntry]) -> list[LogEntry]:
        """The schedule's log of ``obj`` as entries: its operations in execution order."""
        return list(entries)

    def arrange_log(self, engine: EngineView, obj: str, entries: Iterable[LogEntry]) -> tuple[Operation, ...]:
        """The schedule's log of ``obj``: the operations of :meth:`arrange`."""
        return tuple(entry.operation for entry in self.arrange(engine, obj, entries))

    def delays(self, engine: EngineView) -> tuple[float, ...]:
        """Per reconfiguration: request time to the last update applied."""
        return tuple(engine.last_applied(rid) - engine.request_time[rid]
                     for rid in range(1, len(engine.scenario.reconfigurations) + 1))
