"""A Jepsen-style nemesis for spark_impl on a real Spark standalone cluster.

:class:`Nemesis` submits :mod:`conformance.cluster.nemesis_job` (rounds of Fries jobs with
random reconfigurations, O+ jobs with rescales and DGS jobs, every run judged by the suites'
oracles) to a :class:`~conformance.cluster.standalone.LocalCluster` whose heartbeat timeout
is short (:data:`SPARK_CONF`), and for ``minutes`` minutes injects the faults of
:mod:`conformance.cluster.nemesis_faults` one at a time: it waits a random gap, draws a fault
that is applicable now and a moment (at once, or as soon as a Fries request / an O+ handover
is in progress, reported by the driver's events) and injects it (:mod:`.nemesis_inject`; a
killed driver is replaced at once by one that resumes the round in progress - a Fries round
from its checkpoint, ``Executor(resume=True)``; O+ and DGS have no checkpoint and rerun the
round). It does not wait for the job to recover before the next fault (at most
:data:`MAX_OPEN` unrecovered at once); each recovery is timed by a
:class:`~conformance.cluster.nemesis_recovery.Watch`.

A fault not recovered from within ``recovery_timeout_s`` is a violation, and so is a driver
that exits on its own. Afterwards the driver finishes its round and stops; the report comes
from :mod:`.nemesis_report`.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from dataclasses import dataclass
from typing import Any, Callable

import conformance.cluster.nemesis_job as job
from conformance.cluster import nemesis_inject as inject
from conformance.cluster import processes as proc
from conformance.cluster.nemesis_events import EventLog
from conformance.cluster.nemesis_faults import STATE_FAULTS, FaultPlan
from conformance.cluster.nemesis_recovery import Watch

HEARTBEAT_TIMEOUT_S = 10
SPARK_CONF = {
    # an executor that stops answering is declared lost after 10 s (default 120 s), checked
    # every second (default 60 s), heartbeats every second (default 10 s)
    "spark.network.timeout": f"{HEARTBEAT_TIMEOUT_S}s",
    "spark.network.timeoutInterval": "1s",
    "spark.executor.heartbeatInterval": "1s",
    # ... but RPC calls on this loaded machine keep their generous limits
    "spark.rpc.askTimeout": "120s",
    "spark.rpc.lookupTimeout": "120s",
    # Spark counts a task's attempts lost with a killed executor as its failures (exit 137 looks
    # like a task that crashed its JVM): with a fault every ~10 s on two executors, 4 attempts
    # (the default) ran out once (nemesis seed 5). Where executors die often, allow more.
    "spark.task.maxFailures": "10",
    "spark.stage.maxConsecutiveAttempts": "10",
}
PAUSE_S = HEARTBEAT_TIMEOUT_S + 5.0
MAX_OPEN = 5
OUTAGES = frozenset({"executor-kill", "executor-pause", "worker-restart", "driver-kill"})
MAX_OPEN_OUTAGES = 2
"""At most this many faults not yet recovered from, of which at most this many take a JVM
away; the next fault waits (so the job keeps moving)."""
MOMENT_WAIT_S = 20.0
"""How long an armed fault waits for a reconfiguration or rescale before it fires anyway."""


@dataclass
class NemesisConfig:
    """What to run: fault window, faults, seed, cases per round, limits."""

    minutes: float
    faults: tuple[str, ...]
    seed: int = 0
    cases: int = 3
    jobs: tuple[str, ...] = ("fries", "oplus", "dgs")
    recovery_timeout_s: float = 300.0
    drain_timeout_s: float = 900.0
    start_timeout_s: float = 600.0


class Nemesis:
    """Drives one nemesis run on a started cluster (module docstring)."""

    def __init__(self, cluster: Any, config: NemesisConfig, say: Callable[[str], None] = lambda _: None) -> None:
        self.cluster = cluster
        self.config = config
        self.say = say
        self.plan = FaultPlan(config.faults, config.seed)
        self.out = os.path.join(cluster.shared_dir, "nemesis")
        os.makedirs(self.out, exist_ok=True)
        self.events = EventLog(os.path.join(self.out, "events.jsonl"))
        self.driver: "subprocess.Popen[bytes] | None" = None
        self.injections: list[dict[str, Any]] = []
        self.problems: list[str] = []
        self.watches: list[Watch] = []
        self.paused: list[tuple[int, float]] = []
        self.began = time.time()

    # -- the driver ---------------------------------------------------------------------
    def launch(self, start_round: int, resume: bool) -> None:
        """Submit a driver that starts at ``start_round`` (resuming it from its checkpoint)."""
        arguments = ["--out", self.out, "--seed", str(self.config.seed), "--cases", str(self.config.cases),
                     "--executors", str(self.cluster.workers), "--start-round", str(start_round),
                     "--jobs", ",".join(self.config.jobs)]
        self.driver = self.cluster.launch(job.__file__, arguments + (["--resume"] if resume else []),
                                          conf=SPARK_CONF)
        self.say(f"driver {self.driver.pid} launched at round {start_round}{' (resume)' if resume else ''}")

    def relaunch(self) -> None:
        """A new driver for the round in progress (resumed if it is a Fries round)."""
        current = self.events.current
        if current is not None:
            self.launch(int(current["round"]), current["job"] == "fries")
        else:
            self.launch(self.events.next_round, False)

    def driver_alive(self) -> bool:
        """True while the driver runs; a driver that exited on its own (not after ``stop``)
        is a violation and is replaced."""
        if self.driver is None:
            return False
        if self.driver.poll() is None:
            return True
        self.events.poll()
        if self.events.stopped:
            return False
        log = self.cluster.driver_log(self.driver)
        self.problems.append(f"the driver exited on its own with code {self.driver.returncode} (log {log}): "
                             f"{_last_error(log)}")
        self.relaunch()
        return True

    def wait_for(self, condition: Callable[[], bool], timeout_s: float) -> bool:
        """Poll events (and the driver) until ``condition`` or the timeout."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.events.poll()
            self.driver_alive()
            self.resume_paused()
            self.check_watches()
            if condition():
                return True
            time.sleep(0.05)
        return False

    def wait_for_driver(self, count: int) -> bool:
        """Until more than ``count`` drivers have registered their executors."""
        return self.wait_for(lambda: len(self.events.drivers) > count, self.config.start_timeout_s)

    # -- the run ------------------------------------------------------------------------
    def run(self) -> None:
        """Launch the driver, inject faults for the configured minutes, let it finish."""
        try:
            self._run()
        finally:
            self.resume_paused(everything=True)

    def _run(self) -> None:
        self.launch(0, False)
        if not self.wait_for_driver(0):
            log = self.cluster.driver_log(self.driver)
            raise RuntimeError(f"the nemesis driver did not start within {self.config.start_timeout_s:.0f} s "
                               f"(log {log}: {_last_error(log)})")
        deadline = time.monotonic() + 60.0 * self.config.minutes
        while time.monotonic() < deadline:
            self.wait_for(lambda: False, min(self.plan.gap_s(), max(0.0, deadline - time.monotonic())))
            if len(self.watches) >= MAX_OPEN or time.monotonic() >= deadline:
                continue
            fault = self.plan.next_fault(self.applicable())
            if fault is None:
                continue
            job = self.events.current["job"] if self.events.current is not None else "dgs"
            target = {"reconfiguration": "reconfiguring", "rescale": "rescaling"}.get(self.plan.moment(job))
            if target is not None:
                self.wait_for(lambda: self.events.phase() == target,  # noqa: B023 - waited on within this iteration
                              min(MOMENT_WAIT_S, deadline - time.monotonic()))
            if fault in self.applicable():
                self.inject(fault)
        with open(os.path.join(self.out, "stop"), "w", encoding="utf-8"):
            pass
        self.say("fault window over; the driver finishes its round")
        if not self.wait_for(lambda: self.events.stopped, self.config.drain_timeout_s):
            self.problems.append(f"the driver did not finish its last round within {self.config.drain_timeout_s:.0f} s")
        for watch in self.watches:  # the run ended before the job had work left to show recovery
            watch.record["recovery_ms"] = None
        if self.driver is not None:
            proc.kill_tree([self.driver.pid], grace_s=30.0)
            proc.reap(self.driver)

    def applicable(self) -> list[str]:
        """Faults that can hit something now: a driver must be running; while a new one starts
        after a driver kill only JVM outages (its executors start meanwhile); at most
        :data:`MAX_OPEN_OUTAGES` unrecovered JVM outages; one damaged state file per Fries
        round, before its results are read. Faults between two rounds are allowed (the next
        round meets them)."""
        current = self.events.current
        if self.driver is None or self.driver.poll() is not None or not self.events.drivers:
            return []
        starting = any(w.record["fault"] == "driver-kill" for w in self.watches)
        found = [] if starting else ["python-kill"]
        if sum(w.record["fault"] in OUTAGES for w in self.watches) < MAX_OPEN_OUTAGES:
            found += ["executor-kill", "executor-pause", "worker-restart"] + ([] if starting else ["driver-kill"])
        if not starting and current is not None and current["job"] == "fries" and int(current["round"]) not in self.events.collecting \
                and not any(r["fault"] in STATE_FAULTS and r["round"] == current["round"] for r in self.injections) \
                and inject.committed_state_files(current["dir"]):
            found += sorted(STATE_FAULTS)
        return found

    def inject(self, fault: str) -> None:
        """Inject ``fault`` now and start watching for the recovery."""
        current = self.events.current or {}
        record: dict[str, Any] = {"fault": fault, "at_s": round(time.time() - self.began, 1),
                                  "phase": self.events.phase(), "round": current.get("round"),
                                  "job": current.get("job"), "counted": False, "recovery_ms": None}
        watch = Watch(record, time.time(), set(inject.executor_pids(self.cluster)), self.events.last_beat(),
                      len(self.events.drivers))
        if fault == "executor-kill":
            hit = inject.kill_executor(self.cluster, self.plan)
        elif fault == "python-kill":
            hit = inject.kill_python_worker(self.cluster, self.plan)
        elif fault == "executor-pause":
            hit = self.pause_executor()
        elif fault == "worker-restart":
            hit = inject.restart_worker(self.cluster, self.plan)
        elif fault == "driver-kill":
            hit = self.kill_driver()
        else:
            hit = inject.damage_state_file(str(current["dir"]), self.plan, fault == "state-truncate")
            record["path"] = hit.split(" ")[0] if hit else None
        if hit is None:
            return
        record.update(target=hit, counted=True)
        self.injections.append(record)
        self.watches.append(watch)
        self.say(f"[{record['at_s']:7.1f} s] {fault} during {record['phase']}: {hit}")

    def pause_executor(self) -> str | None:
        """SIGSTOP of an executor JVM; SIGCONT follows past the heartbeat timeout."""
        pids = sorted(inject.executor_pids(self.cluster))
        if not pids:
            return None
        pid = self.plan.pick(pids)
        os.kill(pid, signal.SIGSTOP)
        self.paused.append((pid, time.monotonic() + PAUSE_S))
        return f"executor JVM {pid} stopped for {PAUSE_S:.0f} s"

    def resume_paused(self, everything: bool = False) -> None:
        """SIGCONT every paused executor whose time is up (all of them with ``everything``)."""
        now = time.monotonic()
        for pid, until in list(self.paused):
            if everything or now >= until:
                self.paused.remove((pid, until))
                try:
                    os.kill(pid, signal.SIGCONT)
                except OSError:
                    pass  # the worker killed it meanwhile

    def kill_driver(self) -> str | None:
        """``kill -9`` of the driver's whole tree, then a new driver resuming the round."""
        if self.driver is None or self.driver.poll() is not None:
            return None
        pid = self.driver.pid
        killed = proc.kill_now([pid])
        proc.reap(self.driver)
        self.relaunch()
        return f"driver {pid} and its {len(killed) - 1} descendant(s) killed; new driver {self.driver.pid}"

    def check_watches(self) -> None:
        """Close the watches whose fault the job has recovered from; a fault not recovered
        from within the limit is a violation."""
        if not self.watches:
            return
        now = time.time()
        executors = set(inject.executor_pids(self.cluster))
        for watch in list(self.watches):
            recovered = watch.check(self.events, executors, self.cluster.workers, now)
            record = watch.record
            if recovered is not None:
                record["recovery_ms"] = round((recovered - watch.t0) * 1000.0)
                self.watches.remove(watch)
                self.say(f"           {record['fault']} at {record['at_s']} s: recovered after {record['recovery_ms']} ms")
            elif now - watch.t0 > self.config.recovery_timeout_s:
                self.watches.remove(watch)
                self.problems.append(f"no recovery within {self.config.recovery_timeout_s:.0f} s after "
                                     f"{record['fault']} ({record['target']}) during {record['phase']}")


def _last_error(log: str) -> str:
    try:
        with open(log, encoding="utf-8", errors="replace") as handle:
            lines = [line.strip() for line in handle if "Error" in line or "Exception" in line]
    except OSError:
        return "(no log)"
    return lines[-1][:300] if lines else "(no error line in its log)"
