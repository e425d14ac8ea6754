"""The controller: plans micro-batches, makes reconfiguration requests, commits checkpoints.

One :class:`Executor` runs many jobs (e.g. many scenarios) in the *same* Spark jobs: a
micro-batch is one Spark job with one stage per operator level, every stage holding the
objects of every job at that level (the sources are read by the first level's tasks
themselves, :data:`FUSE_MAX_PARTITIONS`). The driver only coordinates: it ships offsets and
the batch plan, never data; tasks read sources, state and write their own files.

Requests: a job's planned request ``j`` is made once ``at`` tuples were ingested (ingestion
pauses at ``at`` while an earlier request of the job is still in progress, so ``at`` keeps its
meaning), during the batch that ingests up to ``at``, as soon as its first operator tasks
started - i.e. while the in-flight tuples are being processed; :meth:`Executor.submit` makes a request at once, even while a batch runs. The
request becomes a control-store entry (the FCM) that running tasks poll.

Checkpoints (Fries §7.3): after each batch the driver commits every job whose state is
consistent, *except* a job whose active request has a component head that has not yet
received its FCM - that is the paper's rule ("no checkpoint between a request and the moment
all heads have their FCM"). A commit covers the job's pending batches (sink outputs, schedule,
state). ``timing.restarts``: the batch in which a job's ingestion reaches a listed count runs,
then the job "crashes" before its commit and recovers from its last commit (state, offset,
requests: a request made after that commit is made again, as attempt + 1).
"""

from __future__ import annotations

import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from spec.errors import InputError
from spark_impl.reconfig.control import ControlEntry, control_log, write_control
from spark_impl.reconfig.layout import (
    layout, partition_of, roles, save_jobs, save_request,
)
from spark_impl.reconfig.model import Job, Request
from spark_impl.reconfig.progress import Active, Progress, read_progress, write_progress
from spark_impl.reconfig.results import read_states_for
from spark_impl.reconfig.retention import Retention, collect_garbage
from spark_impl.reconfig.sinks import Sink, deliver
from spark_impl.reconfig.storage import batches_on
from spark_impl.reconfig.task import STATS, BatchPlan, ensure_dirs, stage_function, started_name, write_plan
from spark_impl.store import display, open_store
from spark_impl.reconfig.validate import validate_request

SCHEDULERS = ("fries", "epoch", "naive")
FUSE_MAX_PARTITIONS = 8
"""Up to this many partitions the source is read by the first operator stage itself (every
task reads the batch's source tuples and keeps its own: one Spark stage less per batch);
above it a source stage reads each job's tuples once and shuffles them.
``Executor(fuse_source=...)`` overrides the choice."""


@dataclass
class _Job:
    job: Job
    live: Progress
    committed: Progress
    restarts_done: set[int]
    attempts: dict[int, int]
    queued: Request | None = None


class Executor:
    """Runs jobs batch by batch (see the module docstring)."""

    def __init__(self, spark: Any, jobs: Sequence[Job], scheduler: str, checkpoint_dir: str, *,
                 faults: frozenset[str] = frozenset(), partitions: int | None = None, resume: bool = False,
                 sink: Sink | None = None, retention: Retention | None = None,
                 fuse_source: bool | None = None) -> None:
        if scheduler not in SCHEDULERS:
            raise InputError(f"unknown scheduler {scheduler!r} (expected one of {', '.join(SCHEDULERS)})")
        self.spark = spark
        self.sc = spark.sparkContext
        if str(self.sc.getConf().get("spark.speculation", "false")).lower() == "true":
            raise InputError("spark_impl needs spark.speculation=false: two speculative attempts of a task "
                             "could see a control message at different tuples (docs/spark.md)")
        self.jobs = list(jobs)
        for s, job in enumerate(self.jobs):  # 0 workers: no object holds a key (routing divides by 0)
            bad = {op: p for op, p in job.parallelism.items() if p < 1}
            if bad:
                raise InputError(f"parallelism {bad} of job {s}: every operator needs at least 1 worker")
        self.sink = sink  # committed outputs delivered after every batch (spark_impl.reconfig.sinks)
        self.output_counter: Any = None  # a Spark accumulator counting the rows delivered, if set
        self.retention = retention  # bounded storage (spark_impl.reconfig.retention); None: keep all
        self.scheduler = "naive" if scheduler == "fries" and "naive" in faults else scheduler
        self.faults = frozenset(faults)
        # a local path or a filesystem URI, e.g. s3://key:secret@bucket/ckpt?endpoint_override=...
        # (spark_impl.store; docs/spark.md "Checkpoints on an object store")
        self.store = open_store(checkpoint_dir)
        self.directory = self.store.location
        if self.store.exists("progress.json"):  # resuming it would silently start from scratch
            raise InputError("holds a checkpoint in the layout before the record logs (progress.json); finish "
                             "it with the streamproof that wrote it, or use a new directory", display(self.directory))
        self.store.make_root()
        self.partitions = partitions or max(1, int(self.sc.defaultParallelism))
        self.layouts = [layout(job) for job in self.jobs]
        self.depth = max((lay.depth for lay in self.layouts), default=0)
        self.jobs_path = save_jobs(self.directory, self.jobs)
        self.jobs_stamp = self._jobs_stamp()
        self.lock = threading.RLock()
        self.g = 0
        self.running = False
        self._step_error: list[BaseException] = []
        self._user_made: set[int] = set()
        self._making: set[int] = set()  # jobs whose planned request the running batch makes (see _plan)
        self._published: list[ControlEntry] | None = None  # last control record written
        self.control = control_log(self.directory)
        self._empty: Any = None
        self._next: tuple[int, Any] | None = None  # (batch, its Spark job) built ahead
        # test seam: called with the plan after a batch's tasks ran, right before its commit;
        # an exception it raises propagates and nothing of the batch is committed (a driver crash)
        self.before_commit: Callable[[BatchPlan], None] | None = None
        self.fuse_source = self.partitions <= FUSE_MAX_PARTITIONS if fuse_source is None else fuse_source
        self.state: list[_Job] = []
        restored = read_progress(self.directory) if resume else None
        base: dict[int, int] = {}
        if restored is not None:
            last, committed = restored
            self.g = max(last, self._last_batch_on_disk()) + 1
            for s, (job, prog) in enumerate(zip(self.jobs, committed)):
                self.state.append(_Job(job, prog.snapshot(), prog, set(), {}))
                base[s] = prog.history[-1] if prog.history else -1
        else:
            # a resume with nothing committed (a crash before the first commit) still never
            # reuses a batch number that ran, and loads no state from those batches
            self.g = self._last_batch_on_disk() + 1 if resume else 1
            base = {s: -1 for s in range(len(self.jobs))} if self.g > 1 else {}
            self.state = [_Job(job, Progress(), Progress(), set(), {}) for job in self.jobs]
        self._base = base
        self._publish()
        if restored is not None and self.sink is not None:
            # first the delivery a crash may have interrupted, with the same batches and batch
            # id as before the crash (the sink overwrites it: exactly once)
            deliver(self, self.sink)

    # --- requests --------------------------------------------------------------------------

    def submit(self, s: int, request: Request) -> str | None:
        """Ask for a reconfiguration of job ``s`` now. Returns None if accepted, else the
        rejection message (also recorded; the stream keeps running)."""
        with self.lock:
            st = self.state[s]
            problem = validate_request(st.job, request, self._committed_states(s, request))
            if problem is None and st.live.phase != "stream":
                # flushing or done: no batch would ever make the request (it stayed queued
                # and silently never happened)
                problem = f"job {s} has reached the end of its input; nothing left to reconfigure"
            if problem is None and (st.live.active is not None or st.queued is not None or s in self._making):
                busy = st.live.active.j if st.live.active is not None else st.live.made + 1
                problem = f"reconfiguration R{busy} of job {s} is still in progress; one at a time (Fries §2.2)"
            if problem is not None:
                st.live.rejected.append(problem)
                return problem
            if self.running:
                self._make(s, request, self.g, user=True)
                self._publish()
            else:
                st.queued = request
            return None

    def _make(self, s: int, request: Request, g: int, user: bool = False) -> None:
        st = self.state[s]
        j = st.live.made + 1
        st.live.made = j
        st.attempts[j] = st.attempts.get(j, 0) + 1
        save_request(self.directory, s, j, request)
        fries = self.scheduler == "fries"
        role = roles(st.job, s, request, fries)
        heads = sorted(o for o, r in role.items() if r.head)
        reconf = sorted(o for o, r in role.items() if r.reconfigured)
        st.live.active = Active(j, st.attempts[j], time.time(), g + 1, heads if self.scheduler != "epoch" else [],
                                sorted(role), reconf, user=user)

    def _publish(self) -> None:
        entries = []
        for s, st in enumerate(self.state):
            a = st.live.active
            if a is None:
                continue
            t = st.job.timing
            entries.append(ControlEntry(s, a.j, a.attempt, a.issued, a.epoch_batch, t.fcm_delay[0], t.fcm_delay[1], t.seed))
        if entries == self._published:
            return  # unchanged: tasks would re-read the same entries (most batches have none)
        write_control(self.control, entries)
        self._published = entries

    # --- one micro-batch -------------------------------------------------------------------

    def done(self) -> bool:
        """Every job finished (flushed and committed)."""
        return all(st.live.phase == "done" for st in self.state)

    def step(self) -> None:
        """Run one micro-batch of every unfinished job, then commit."""
        with self.lock:
            plan, make_now = self._plan()
        ensure_dirs(plan)
        write_plan(plan)
        ready, self._next = self._next, None
        rdd = ready[1] if ready is not None and ready[0] == plan.g else self._job(plan.g)
        result: list[Any] = []
        error: list[BaseException] = []

        def run() -> None:
            try:
                result.extend(rdd.collect())
            except BaseException as exc:  # noqa: BLE001 - re-raised in the driver thread
                error.append(exc)

        worker = threading.Thread(target=run, daemon=True)
        with self.lock:
            self.running = True
            worker.start()
        if make_now:
            self._wait_for_tasks(plan, worker)
        with self.lock:
            for s, request in make_now:
                self._make(s, request, plan.g, user=s in self._user_made)
                if self.state[s].queued is request:
                    self.state[s].queued = None  # only now: it was queued until made (see _plan)
            self._user_made.clear()
            self._making.clear()
            self._publish()
        if worker.is_alive():  # build the next batch's job while this one runs
            self._next = (plan.g + 1, self._job(plan.g + 1))
        worker.join()
        with self.lock:
            self.running = False
            if error:
                raise error[0]
            if self.before_commit is not None:
                self.before_commit(plan)
            self._absorb(plan, result)
            self.g += 1
        self._maintain()

    def _job(self, g: int) -> Any:
        """The RDD whose ``collect`` runs batch ``g`` (its tasks read ``plan.pkl``): one stage
        per operator level, the source read by the first (fused) or by a stage of its own. A
        new RDD every batch: Spark would skip the stages of an RDD's shuffles that already
        ran."""
        if self._empty is None:  # P empty partitions, the first stage's input (built once)
            self._empty = self.sc.parallelize([], self.partitions)
        rdd = self._empty
        first = 1 if self._fused() else 0
        for level in range(first, self.depth + 1):
            fn = stage_function(self.directory, g, level)
            if level == first:
                rdd = rdd.mapPartitionsWithIndex(fn)
            else:
                rdd = rdd.partitionBy(self.partitions, lambda k: k).mapPartitionsWithIndex(fn)
        final = rdd.values().filter(lambda r: r[3] == STATS)
        getattr(final, "_jrdd", None)  # PySpark creates the JVM side lazily: create it now
        return final

    def _fused(self) -> bool:
        return self.fuse_source and self.depth >= 1

    def _maintain(self) -> None:
        """After a batch: deliver newly committed outputs to the sink, then delete what no
        restart or delivery needs (only with a sink / a retention)."""
        delivered = deliver(self, self.sink) if self.sink is not None else None
        if self.retention is not None:
            with self.lock:
                collect_garbage(self, self.retention, delivered)

    def _wait_for_tasks(self, plan: BatchPlan, worker: threading.Thread, timeout_s: float = 30.0) -> None:
        """Block until a task of the first operator level started (or the job ended): the
        batch's requests are then made while its tuples are being processed."""
        names = [started_name(plan.g, 1, part) for part in range(self.partitions)]
        deadline = time.monotonic() + timeout_s
        while worker.is_alive() and time.monotonic() < deadline:
            if any(self.store.exists(name) for name in names):
                return
            time.sleep(0.005 if self.store.local else 0.02)

    def step_with_request(self, delay_s: float, s: int, request: Request) -> str | None:
        """Run one micro-batch and, ``delay_s`` seconds after it started, submit ``request``
        for job ``s`` (a user asking mid-batch); return :meth:`submit`'s answer."""
        worker = threading.Thread(target=self._guarded_step, daemon=True)
        worker.start()
        time.sleep(delay_s)
        answer = self.submit(s, request)
        worker.join()
        if self._step_error:
            raise self._step_error.pop()
        return answer

    def _guarded_step(self) -> None:
        try:
            self.step()
        except BaseException as error:  # noqa: BLE001 - re-raised by step_with_request
            self._step_error.append(error)

    def _plan(self) -> tuple[BatchPlan, list[tuple[int, Request]]]:
        ranges: dict[int, tuple[int, int]] = {}
        active: set[int] = set()
        flush: set[int] = set()
        make_now: list[tuple[int, Request]] = []
        for s, st in enumerate(self.state):
            prog, job = st.live, st.job
            if prog.phase == "done":
                continue
            active.add(s)
            count = job.source.count()
            nxt = prog.made + 1
            planned = job.planned[nxt - 1] if nxt <= len(job.planned) else None
            limit = count if planned is None else min(planned.at, count)
            lo = prog.offset
            hi = min(lo + max(1, job.timing.batch_size), limit) if lo < limit else lo
            ranges[s] = (lo, hi)
            prog.offset = hi
            if st.queued is not None and prog.active is None:
                # st.queued stays set until step() has made it: in between (up to
                # _wait_for_tasks) the request must still count as in progress, or submit()
                # accepts a second one that takes its number (Fries live case 4: R1 ran as R2)
                make_now.append((s, st.queued))
                self._user_made.add(s)
            elif planned is not None and hi >= limit and prog.active is None:
                # in progress from now: a user's submit before step() made it would be made
                # first and then overwritten by it (lost, never applied nor rejected)
                make_now.append((s, planned.request))
                self._making.add(s)
            elif (planned is None and prog.active is None and st.queued is None and lo >= count
                  and not job.unbounded):
                prog.phase = "flush"
                flush.add(s)
        base, self._base = self._base, {}
        plan = BatchPlan(self.g, self.directory, self.jobs_path, self.jobs_stamp, self.partitions, self.scheduler,
                         self.faults, ranges, frozenset(active), frozenset(flush), base,
                         fused=self._fused(), announce=bool(make_now), control=self.control.last or 0)
        return plan, make_now

    def _absorb(self, plan: BatchPlan, stats: list[Any]) -> None:
        failed: dict[int, str] = {}
        for rec in stats:
            s, obj, j, attempt, kind = rec[1], rec[2], rec[4], int(rec[5]), rec[6]
            a = self.state[s].live.active
            if a is None or a.j != j or a.attempt != attempt:
                continue
            if kind == "fail":
                failed.setdefault(s, f"R{j} rejected: {rec[8]}")
            else:
                a.switched[obj] = rec[8]
        for s in sorted(plan.active):
            st = self.state[s]
            if s in failed:
                # a transformation raised on an executor: roll the job back to its last
                # commit (taken before the request: user requests block commits until they
                # complete) and reject the request; the stream goes on.
                rejected = st.live.rejected + [failed[s]]
                st.live = st.committed.snapshot()
                st.live.rejected = rejected  # rejections are answers already given: kept
                self._base[s] = st.live.history[-1] if st.live.history else -1
                continue
            prog = st.live
            prog.pending.append(plan.g)
            a = prog.active
            if a is not None and set(a.required) <= set(a.switched):
                applied = [a.switched[o] for o in a.reconfigured]
                prog.delays[a.j] = (max(applied) - a.issued) * 1000.0 if applied else 0.0
                prog.active = None
            if s in plan.flush:
                prog.phase = "done"
            crash = [c for c in st.job.timing.restarts
                     if c not in st.restarts_done and plan.ranges[s][1] >= c and prog.phase != "done"]
            if crash:
                st.restarts_done.update(crash)
                rejected = st.live.rejected
                st.live = st.committed.snapshot()
                st.live.rejected = rejected
                self._base[s] = st.live.history[-1] if st.live.history else -1
                continue
            if a is not None and prog.active is not None and (a.user or not set(a.heads) <= set(a.switched)):
                continue  # Fries §7.3: no checkpoint until every head has its FCM (user requests: until done)
            prog.history.extend(prog.pending)
            prog.pending = []
            st.committed = prog.snapshot()
        write_progress(self.directory, [st.committed for st in self.state], plan.g)
        self._publish()

    def run(self, max_batches: int = 100_000) -> None:
        """Step until every job is done."""
        for _ in range(max_batches):
            if self.done():
                return
            self.step()
        raise RuntimeError(f"jobs not finished after {max_batches} batches")

    # --- helpers ---------------------------------------------------------------------------

    def _last_batch_on_disk(self) -> int:
        return max(batches_on(self.store), default=0)

    def _jobs_stamp(self) -> float:
        """Changes when ``jobs.pkl`` is rewritten (an object store's jobs file is named by its
        digest: no stamp needed)."""
        if not self.store.local:
            return 0.0
        return os.stat(self.jobs_path).st_mtime

    def _committed_states(self, s: int, request: Request) -> dict[tuple[str, Any], Any]:
        history = self.state[s].committed.history
        if not history:
            return {}
        return read_states_for(self.directory, history[-1], s, self.layouts[s], self.partitions,
                               set(request.updates), self.jobs[s])

    def object_partition(self, s: int, obj: str) -> int:
        """Spark partition of an object (for tools)."""
        return partition_of(s, obj, self.partitions)
