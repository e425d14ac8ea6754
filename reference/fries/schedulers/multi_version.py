"""The FCM multi-version scheduler (Fries §4.1, Figure 4) - our reading.

The paper: "The controller first sends an FCM to each reconfiguration operator. Each operator
keeps both the old configuration and the new one. After all operators have received the FCM,
each source operator increments its version number, which is tagged to each source tuple.
For each input tuple, an operator checks the tuple's tagged version number, chooses the
corresponding configuration version to process the tuple, and tags the same version number
to the output tuples."

Our reading, in the simulator:

* versions are reconfiguration counts: a tuple tagged ``v`` is processed with the function
  the operator has after reconfigurations R1..Rv; tuples derived from it keep the tag;
* on the FCM of Rj an object *installs* the new version (the update u(O) of the log). A tuple
  tagged ``v`` is processed with version ``v``'s function and adds to version ``v``'s copy of
  the state - the paper's "two sets of states", one sum per version here. The state of a key
  is the fold of its copies in version order, T_j applied at Rj to what older versions built
  (:meth:`MultiVersionScheduler.state_of`); a blocking flush and the final states read it;
* once every reconfigured object has installed Rj, the controller sends an FCM to every
  source object; from then on it tags ``j``. Rj is then complete for the controller (the
  next request may start);
* the schedule: a multi-version run is equivalent to the single-version schedule in which
  each object's update comes after every operation that read the old version and before
  every operation that read the new one (the standard version-order mapping of multiversion
  schedules). Each object's log is therefore its data operations grouped by version, in
  execution order within a version, with u(O) between the versions;
* the delay of Rj is the time from the request until the new configuration is the only one in
  use: the sources have switched and every object of Rj has processed its last tuple of an
  older version. That is the high delay the paper points out (old-tagged in-flight tuples).
"""

from __future__ import annotations

from typing import Iterable

from spec.fries.scenario import Function

from reference.fries.schedulers.base import EngineView, LogEntry, Scheduler
from reference.fries.messages import Data


class MultiVersionScheduler(Scheduler):
    """Version tags at the sources; every operator keeps every version (see the module)."""

    name = "multi-version"

    def __init__(self) -> None:
        self._version: dict[str, int] = {}
        self._switched: dict[int, set[str]] = {}
        self._switch_time: dict[int, float] = {}
        self._last_old: dict[int, float] = {}
        self._functions: dict[tuple[str, int], Function] = {}
        self._sums: dict[tuple[str, int], dict[int, int]] = {}

    def start(self, engine: EngineView, rid: int) -> None:
        self._switched[rid] = set()
        for obj in sorted(engine.reconfigured_objects(rid)):
            engine.send_fcm(obj, ("install", rid))

    def on_all_applied(self, engine: EngineView, rid: int) -> None:
        for source in engine.topology.sources:
            engine.send_fcm(source, ("switch", rid))

    def on_fcm(self, engine: EngineView, obj: str, payload: object) -> None:
        assert isinstance(payload, tuple)
        kind, rid = payload
        if kind == "install":
            engine.apply_update(obj, rid)
            return
        self._version[obj] = rid
        switched = self._switched[rid]
        switched.add(obj)
        if len(switched) == len(engine.topology.sources):
            self._switch_time[rid] = engine.now
            engine.control_delivered(rid)
            engine.complete(rid)

    def source_version(self, engine: EngineView, source_obj: str | None) -> int:
        if source_obj is None:
            return len(engine.completed)
        return self._version.get(source_obj, 0)

    def function_for(self, engine: EngineView, obj: str, msg: Data) -> Function:
        key = (obj, msg.version)
        if key not in self._functions:
            op = engine.topology.operator_of[obj]
            function = engine.scenario.functions[op]
            for reconfiguration in engine.scenario.reconfigurations[:msg.version]:
                if op in reconfiguration.updates:
                    function = reconfiguration.updates[op].function
            self._functions[key] = function
        return self._functions[key]

    def add_state(self, engine: EngineView, op: str, msg: Data) -> None:
        buckets = self._sums.setdefault((op, msg.key), {})
        buckets[msg.version] = buckets.get(msg.version, 0) + msg.value

    def state_of(self, engine: EngineView, op: str, key: int) -> int:
        """Fold the per-version sums as the serial order would: T_j applies, at Rj, to the
        state of a key some older-version tuple created."""
        buckets = self._sums[(op, key)]
        state, exists = 0, False
        for version in range(len(engine.scenario.reconfigurations) + 1):
            update = engine.scenario.reconfigurations[version - 1].updates.get(op) if version else None
            if update is not None and exists:
                state = update.state.apply(state)
            if version in buckets:
                state += buckets[version]
                exists = True
        return state

    def final_states(self, engine: EngineView) -> dict[tuple[str, int], int]:
        return {key: self.state_of(engine, *key) for key in self._sums}

    def on_processed(self, engine: EngineView, obj: str, msg: Data) -> None:
        for rid in engine.applied_ids(obj):
            if rid > msg.version:
                self._last_old[rid] = max(self._last_old.get(rid, 0.0), engine.now)

    def arrange(self, engine: EngineView, obj: str, entries: Iterable[LogEntry]) -> list[LogEntry]:
        def rank(entry: LogEntry) -> int:
            return 2 * entry.version - 1 if entry.operation.update else 2 * entry.version
        return sorted(entries, key=rank)

    def delays(self, engine: EngineView) -> tuple[float, ...]:
        out = []
        for rid in range(1, len(engine.scenario.reconfigurations) + 1):
            end = max(engine.last_applied(rid), self._switch_time[rid], self._last_old.get(rid, 0.0))
            out.append(end - engine.request_time[rid])
        return tuple(out)
