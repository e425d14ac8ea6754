"""When has the job recovered from a fault? One :class:`Watch` per injected fault, checked
every time the nemesis polls (faults may overlap: the nemesis does not wait for one recovery
before the next fault).

* executor kill / pause, worker restart: a *new* executor JVM runs, every executor is
  registered with the driver again, and the driver has finished more work after that;
* Python worker kill: the driver has finished more work, with every executor registered;
* driver kill: the new driver has registered its executors and finished work;
* damaged state file: its round has reported its result (time to detection).

Work is the driver's monotone count of finished Spark jobs and tasks (``beat`` events of
:mod:`conformance.cluster.nemesis_job`); a new driver counts from zero.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from conformance.cluster.nemesis_events import Beat, EventLog
from conformance.cluster.nemesis_faults import STATE_FAULTS

REPLACING = frozenset({"executor-kill", "executor-pause", "worker-restart"})


@dataclass
class Watch:
    """One fault's recovery in progress: the fault's record (gets ``recovery_ms``), when it
    was injected and what the cluster looked like then."""

    record: dict[str, Any]
    t0: float
    executors_before: set[int]
    beat_before: Beat | None
    drivers_before: int
    replaced_at: float | None = None
    done: bool = field(default=False)

    def check(self, events: EventLog, executors_now: set[int], workers: int, now: float) -> float | None:
        """The time of recovery once it happened (module docstring), else None."""
        fault = self.record["fault"]
        if fault in STATE_FAULTS:
            result = events.result_of(int(self.record["round"]), self.t0)
            return None if result is None else float(result["t"])
        if fault == "driver-kill":
            if len(events.drivers) <= self.drivers_before:
                return None
            beat = events.last_beat(int(events.drivers[-1]["pid"]))
            return beat.t if beat is not None and _progressed(beat, None, workers, self.t0) else None
        since, before = self.t0, self.beat_before
        if fault in REPLACING:
            if self.replaced_at is None:
                if len(executors_now) >= workers and executors_now - self.executors_before:
                    self.replaced_at = now
                    self.beat_before = events.last_beat()
                return None
            since, before = self.replaced_at, self.beat_before
        beat = events.last_beat()
        return beat.t if beat is not None and _progressed(beat, before, workers, since) else None


def _progressed(beat: Beat | None, before: Beat | None, workers: int, since: float) -> bool:
    """``beat`` is after ``since``, sees every executor and more work than ``before`` (any
    work, when ``before`` is of another driver or missing)."""
    if beat is None or beat.t <= since or beat.executors < workers:
        return False
    baseline = before.work if before is not None and before.pid == beat.pid else 0
    return beat.work > baseline
