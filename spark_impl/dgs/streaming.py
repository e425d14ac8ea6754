"""DGS synchronization plans on live input streams: a Structured Streaming query whose
micro-batches run a user's program under a plan (docs/spark.md, "DGS on a live stream").

The shape follows the Fries executor's front end (:mod:`spark_impl.reconfig.streaming`): the
query owns the input's ingestion and progress; this module owns the plan, the state and the
sink. ``foreachBatch(df, batch_id)`` on the driver (which releases events as DGS §3.4's mailboxes do):

1. reads the batch's rows (JSON items, :mod:`spark_impl.dgs.streaming_input`) and puts them in
   each job's mailbox, each stream's items taken in timestamp order within the query's
   ``allowed_lateness``; a late event goes to the ``late_policy`` (:mod:`spark_impl.lateness`:
   fail - the default -, drop and count, or a late sink) before anything
   is committed; the events no earlier dependent event can still precede are released;
2. runs the released events as one tick of the Spark DGS executor (:mod:`spark_impl.dgs.driver`:
   leaf segments in place, synchronizing events gathered, joined, processed and forked back)
   over the leaf states loaded from the last commit, and has the tasks save the new states;
3. commits (a commit record: batch id, states, mailboxes), then delivers the batch's outputs to
   the sink under ``batch_id`` and records the delivery (:mod:`spark_impl.dgs.streaming_store`).

Exactly once across a driver kill: Structured Streaming replays the batches it had not
committed, with the same offsets. A replayed batch that was committed is skipped (its delivery
is repeated if it was not recorded: idempotent by batch id); one that was not is computed
again from the previous commit. State lives in files, not in Spark's memory, so it also
survives the loss of an executor; every batch reads it back (no lineage grows). Those files
(``<checkpoint_dir>/dgs``) may be on a local disk or any filesystem :mod:`spark_impl.store`
opens (S3, GCS, HDFS): no rename, write-once objects and commit records; Structured
Streaming's own checkpoint (``query_checkpoint``) stays on a path Spark's Hadoop filesystems
reach (docs/spark.md, "Checkpoints on an object store: the live front ends").

Several jobs (program, plan) can share one query: a row's ``"job"`` field picks one, leaf
``i`` of every job lives in partition ``i`` (:class:`spark_impl.dgs.tasks.Layout`), and a
micro-batch is one chain of Spark stages for all of them. A user function that raises (on the
driver, e.g. ``tag``, or in a task) stops the query; :meth:`DgsStreamingRun.process_all`
raises it as the program's one-line :class:`~spec.errors.InputError`.
"""

from __future__ import annotations

import copy
import json
import os
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence, TypeVar

from spec.dgs.loader import load_program
from spec.dgs.plan import Plan, plan_from_json
from spec.dgs.program import Program
from spec.dgs.streams import StreamEvent
from spec.errors import InputError

from spark_impl.dgs.driver import (DgsRun, combined_step, identity_partition, inline_short_segments, steps_of,
                                   user_error)
from spark_impl.dgs.streaming_input import Mailbox, backlog, split_rows, take
from spark_impl.dgs.streaming_replan import fresh_name, migrate, remap_mailbox
from spark_impl.dgs.streaming_rows import batch_rows, check_column
from spark_impl.dgs.streaming_sink import deliver_batch
from spark_impl.dgs.streaming_store import INITIAL, Commit, Store, check_layout, load_states, save_states
from spark_impl.dgs.tasks import Layout, collect_slots, final_states, gather, initial_states
from spark_impl.dgs.topology import Topology, topology
from spark_impl.lateness import (DEFAULT_LATE_POLICY, LateEvent, LateEventError, LatePolicy, apply_late_policy,
                                 check_allowed_lateness, first_event, late_event_frame, log_late)
from spark_impl.lateness import late_policy as late_policy_of
from spark_impl.lifecycle import LiveRun
from spark_impl.observe import BatchReport, Observer
from spark_impl.reconfig.sinks import Sink
from spark_impl.reconfig.streaming import REMEMBERED, StreamStopped, remember
from spark_impl.dgs.status import dgs_status
from spark_impl.run_status import Status
from spark_impl.store import display, is_uri, join

T = TypeVar("T")

CRASH_POINTS = ("before-commit", "after-commit", "after-deliver")
"""Where ``crash_at`` simulates a driver kill (tests): after the states are saved, after the
commit, after the sink got the batch but before the delivery is recorded."""


class DriverKilled(RuntimeError):
    """Raised at a ``crash_at`` point: the query dies there as if its driver had been killed."""


@dataclass(frozen=True)
class LiveJob:
    """One program ``file.py:NAME`` under one plan (object or JSON); ``inline_below`` is the
    executor's runtime optimization (:func:`spark_impl.dgs.driver.inline_short_segments`)."""

    target: str
    plan: Plan | Mapping[str, Any]
    inline_below: int = 0


@dataclass
class DgsStreamingRun(LiveRun):
    """A running query. ``batches``: batch ids this process computed; ``replayed``: batch ids
    it found already committed (a restart's replay); ``replanned``: ``(batch, job)`` of the
    re-plans applied; ``batch_ms``: batch id -> wall time of its ``foreachBatch`` call. Each
    keeps the last :data:`~spark_impl.reconfig.streaming.REMEMBERED` entries (bounded memory
    on a stream that runs for months). Waits, ``with`` and signals:
    :class:`spark_impl.lifecycle.LiveRun`."""

    spark: Any
    store: Store
    layout: Layout
    programs: list[Program]
    jobs: list[LiveJob]
    sink: Sink | None
    keep_records: bool
    crash_at: str | None = None
    query: Any = None
    error: InputError | None = None
    batches: list[int] = field(default_factory=list)
    replayed: list[int] = field(default_factory=list)
    busy: threading.Lock = field(default_factory=threading.Lock)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    pending: dict[int, Plan] = field(default_factory=dict)
    replanned: list[tuple[int, int]] = field(default_factory=list)
    batch_ms: dict[int, float] = field(default_factory=dict)
    last: Commit | None = None
    """The newest commit this process wrote or read (it is the only writer while it runs)."""
    allowed_lateness: int = 0
    """Bounded out-of-orderness in event-time units (:mod:`spark_impl.dgs.streaming_input`)."""
    late_policy: LatePolicy = LatePolicy(DEFAULT_LATE_POLICY)
    """What happens to a late event (:mod:`spark_impl.lateness`)."""

    def late_count(self, job: int | None = None, stream: str | None = None) -> int:
        """Late events so far (committed: exactly once across restarts; every policy counts
        them, ``"fail"`` only in the batch it fails, which never commits), of ``job`` and
        ``stream`` when given, else of all."""
        boxes = self.committed().mailboxes
        return sum(n for j, box in enumerate(boxes) if job is None or j == job
                   for s, n in box.late.items() if stream is None or s == stream)

    def late(self) -> dict[int, int]:
        """Per job (its index in ``jobs``, as ``late_count(job=)`` and the ``job <j>`` of
        :meth:`status`), the late events since the query started (dropped, or sent to the late
        sink), as the last commit recorded them - also right after a start or a restart, before
        any micro-batch: every job of the query is present, with 0 while it has none, so the
        shape never depends on how far the query got (as the O+ front end's ``late()``). The
        values add up to ``late_count()`` and ``status().late``; ``late_count(job=, stream=)``
        splits a job's count by stream."""
        counts = {job: 0 for job in range(len(self.jobs))}
        for job, box in enumerate(self.committed().mailboxes):
            counts[job] = sum(box.late.values())
        return counts
    checkpoint_dir: str = ""
    query_checkpoint: str | None = None
    observer: Observer = field(default_factory=lambda: Observer("dgs"))
    refused: list[str] = field(default_factory=list)
    """Why this process refused re-plans (the last :data:`REMEMBERED` ones)."""
    outputs: Any = None
    """A Spark accumulator of the rows delivered to the sink (``rows out`` of the batch log line)."""
    rows_in: int = 0

    def replan(self, plan: Plan | Mapping[str, Any], *, job: int = 0) -> None:
        """Run ``job`` under another plan (object or JSON) from the next micro-batch on, while
        the query runs (any thread). The plan is checked P-valid now (InputError); at the start
        of the next batch the job's leaf states are joined by the old plan and forked by the
        new one (:mod:`spark_impl.dgs.streaming_replan`) and a commit records the new plan
        (``replanned`` lists ``(batch, job)``). Not durable until then: a driver killed
        before it resumes on the committed plan."""
        try:
            if not 0 <= job < len(self.jobs):
                raise InputError(f"no job {job} (the query has {len(self.jobs)})", "job")
            parsed = plan if isinstance(plan, Plan) else plan_from_json(plan)
            topology(self.programs[job], parsed)  # P-valid for the program, else InputError
        except InputError as error:
            _keep_last(self.refused, str(error))
            self.observer.warn("refused", f"re-plan refused: {error}", reason=str(error))
            raise
        with self.lock:
            self.pending[job] = parsed

    def status(self) -> Status:
        """The query's status (:mod:`spark_impl.status`): committed batch, every job's plan
        version, re-plans applied by this driver, pending and refused."""
        with self.lock:
            pending = dict(self.pending)
        return dgs_status(self.checkpoint_dir, pending=pending, applied=list(self.replanned),
                          refused=list(self.refused), query_checkpoint=self.query_checkpoint)

    def run_status(self) -> Status:
        """The same as :meth:`status` (the name every live front end's run handle has)."""
        return self.status()

    def process_all(self) -> None:
        """``processAllAvailable()``; a user error that stopped the query is raised as the
        program's InputError."""
        try:
            self.query.processAllAvailable()
        except Exception:
            if self.error is not None:
                raise self.error from None
            raise

    def stop(self) -> None:
        """Stop at a batch boundary (as :meth:`spark_impl.reconfig.streaming.StreamingRun.stop`):
        the checkpoint stays; :func:`start_dgs_query` on it resumes."""
        self.stopping.set()
        with self.busy:
            pass
        self.settle_stream()
        self.query.stop()
        self.observer.close()

    def expected_failure(self) -> bool:
        """The query died at the ``crash_at`` point asked for."""
        error = self.query.exception() if self.query is not None else None
        return error is not None and "DriverKilled" in str(error)

    def committed(self) -> Commit:
        """The last commit (this process's; read from the store before the first)."""
        if self.last is None:
            self.last = self.store.read()
        assert self.last is not None  # written by start_dgs_query
        return self.last

    def commit(self, commit: Commit) -> None:
        """Write ``commit`` (the commit point) and remember it."""
        self.store.write(commit)
        self.last = commit

    def final_states(self) -> list[Any]:
        """Each job's state now: its committed leaf states joined back into the root."""
        layout, total = self.layout, self.layout.partitions
        roots = {slot: layout.host(j, t.plan.root.id) for j, t in enumerate(layout.topos)
                 for slot in layout.members(j, t.plan.root.id)}
        states = self._states(self.committed().states)
        joined = _user_action(lambda: states.mapPartitionsWithIndex(gather(roots)).partitionBy(total, identity_partition)
                              .mapPartitionsWithIndex(final_states(layout)).collect())
        result: list[Any] = [None] * len(self.jobs)
        for job, state in joined:
            result[job] = state
        return result

    def results(self) -> list[DgsRun]:
        """Outputs, processed events (key order) and final state of every job, in the batch
        executor's formats. Complete only with ``keep_records=True`` (else the records of
        delivered batches are gone: read the sink)."""
        runs = [DgsRun([], len(t.leaves)) for t in self.layout.topos]
        for _, records in self.store.records(self.committed().batch):
            for job, kind, value in records:
                (runs[job].outputs if kind == "out" else runs[job].processed).append(value)
        for run, state in zip(runs, self.final_states()):
            run.processed.sort(key=lambda entry: entry[1])
            run.final_state = state
        return runs

    def _states(self, name: str) -> Any:
        total = self.layout.partitions
        return self.spark.sparkContext.parallelize(range(total), total).mapPartitions(
            load_states(self.store.states_dir(name)))

    def _crash(self, point: str) -> None:
        if self.crash_at == point:
            raise DriverKilled(f"simulated driver kill at {point}")

    def handle(self, df: Any, batch_id: int, column: str) -> None:
        """The ``foreachBatch`` function (module docstring)."""
        with self.busy:
            if self.stopping.is_set():
                raise StreamStopped(f"batch {batch_id} started after stop(); it is replayed after a restart")
            started = time.perf_counter()
            out_before = self.outputs.value if self.outputs is not None else 0
            replayed = batch_id <= self.committed().batch
            late_before = _late_total(self.committed())
            self.rows_in = 0
            try:
                self._batch(df, batch_id, column)
            except InputError as error:
                self.error = error
                raise
            elapsed = time.perf_counter() - started
            remember(self.batch_ms, batch_id, elapsed * 1000.0)
            commit = self.committed()
            self.observer.batch(BatchReport(
                batch_id, self.rows_in, None if self.outputs is None else int(self.outputs.value - out_before),
                max(0, _late_total(commit) - late_before), elapsed, backlog(commit.mailboxes),
                replayed))

    def _batch(self, df: Any, batch_id: int, column: str) -> None:
        commit = self.committed()
        if batch_id <= commit.batch:
            _keep_last(self.replayed, batch_id)
            self.deliver(commit)
            return
        rows = batch_rows(df, column)
        self.rows_in = len(rows)
        grouped, texts = split_rows(rows, len(self.jobs), batch_id)
        with self.lock:
            wanted, self.pending = self.pending, {}
        if wanted:
            commit = self.switch_plans(commit, wanted)
            for j in sorted(wanted):
                _keep_last(self.replanned, (batch_id, j))
        mailboxes = copy.deepcopy(commit.mailboxes)  # receive() fills them; the commit keeps its own
        plans = {}
        late: list[LateEvent] = []
        for j, items in enumerate(grouped):
            topo = self.layout.topos[j]
            released, behind = take(self.programs[j], topo, mailboxes[j], items, self.allowed_lateness,
                                    f"batch {batch_id}, job {j}")
            late += [self._late_event(j, items[b.index], texts[j][b.index], b.watermark) for b in behind
                     if isinstance(items[b.index][1], StreamEvent)]
            if released:
                plans[j] = inline_short_segments(topo, steps_of(topo, released), self.jobs[j].inline_below)
        if late:
            apply_late_policy(self.late_policy, batch_id,
                              LateEventError(batch_id, first_event(late), len(late), self.allowed_lateness),
                              lambda: late_event_frame(self.spark, column, late))
        states = commit.states
        if plans:
            records = self.store.fresh(self.store.records_dir(batch_id))
            rdd = self._states(commit.states)
            for index in range(max(len(p) for p in plans.values())):
                rdd = combined_step(self.spark.sparkContext, self.layout, rdd,
                            {j: p[index] for j, p in plans.items() if index < len(p)}, records, f"s{index:05d}")
            states = f"b{batch_id:012d}"
            target = self.store.fresh(self.store.states_dir(states))
            _user_action(lambda: rdd.mapPartitionsWithIndex(save_states(target)).count())
        self._crash("before-commit")
        commit = Commit(commit.jobs, batch_id, states, mailboxes, commit.delivered)
        self.commit(commit)
        _keep_last(self.batches, batch_id)
        if late:
            log_late(self.observer.log, batch_id, len(late), first_event(late), self.late_policy,
                     self.allowed_lateness, "event")
        self._crash("after-commit")
        self.deliver(commit)

    def _late_event(self, job: int, entry: tuple[str, Any], row: str, watermark: int) -> LateEvent:
        stream, item = entry
        try:
            tag = self.programs[job].tag(item.payload)
        except Exception as error:  # noqa: BLE001 - the message names the event even if tag() fails on it
            tag = f"<tag() raised {type(error).__name__}>"
        return LateEvent(item.ts, job, stream, row, watermark, item.payload, tag)

    def switch_plans(self, commit: Commit, plans: Mapping[int, Plan]) -> Commit:
        """Re-plan the committed state (:mod:`spark_impl.dgs.streaming_replan`) and commit it
        under the new plans; the run goes on with the new layout."""
        old = self.layout
        topos = list(old.topos)
        for job, plan in plans.items():
            topos[job] = topology(self.programs[job], plan)
        new = Layout(old.targets, tuple(topos))
        name = fresh_name()
        target = self.store.fresh(self.store.states_dir(name))
        _user_action(lambda: migrate(self.spark, load_states(self.store.states_dir(commit.states)),
                                     save_states(target), old, new, self.programs, frozenset(plans)))
        jobs = [replace(job, plan=plans[j]) if j in plans else job for j, job in enumerate(self.jobs)]
        mailboxes = [remap_mailbox(box, new.topos[j]) if j in plans else box
                     for j, box in enumerate(commit.mailboxes)]
        switched = Commit([_signature(j, t) for j, t in zip(jobs, new.topos)], commit.batch, name, mailboxes,
                          commit.delivered)
        self.commit(switched)
        self.layout, self.jobs = new, jobs
        self.store.prune(switched, self.keep_records)
        return switched

    def deliver(self, commit: Commit) -> None:
        """Deliver the committed batch if not yet recorded as delivered, record it, prune."""
        if commit.delivered >= commit.batch:
            return
        if self.sink is not None:
            deliver_batch(self.spark, self.store.records_dir(commit.batch), commit.batch, self.sink, self.outputs)
        self._crash("after-deliver")
        self.commit(replace(commit, delivered=commit.batch))
        self.store.prune(self.committed(), self.keep_records)


def _late_total(commit: Commit) -> int:
    """Late events the commit counts since the query started, every job and stream (the
    mailboxes' counts, :mod:`spark_impl.dgs.streaming_input`)."""
    return sum(n for box in commit.mailboxes for n in box.late.values())


def _keep_last(entries: list[T], entry: T) -> None:
    entries.append(entry)
    if len(entries) > REMEMBERED:
        del entries[:-REMEMBERED]


def _user_action(action: Callable[[], T]) -> T:
    """Run a Spark action; a user function's exception in a task becomes its InputError."""
    try:
        return action()
    except Exception as error:  # noqa: BLE001 - Py4J wraps the task's exception
        problem = user_error(str(error))
        if problem is None:
            raise
        raise InputError(problem) from None


def _signature(job: LiveJob, topo: Topology) -> tuple[str, Any, int]:
    return job.target, json.loads(json.dumps(topo.plan.to_json())), job.inline_below


def start_dgs_query(spark: Any, jobs: Sequence[LiveJob], source: Any, *, checkpoint_dir: str,
                    column: str = "value", sink: Sink | None = None, keep_records: bool = False,
                    trigger: dict[str, Any] | None = None, crash_at: str | None = None,
                    query_checkpoint: str | None = None, allowed_lateness: int = 0,
                    late_policy: Any = DEFAULT_LATE_POLICY) -> DgsStreamingRun:
    """Start a query running ``jobs`` on ``source`` (a streaming DataFrame whose ``column``
    holds one item per row: a JSON text, :mod:`spark_impl.dgs.streaming_input`, or a struct
    whose event keeps its Spark types, :mod:`spark_impl.dgs.streaming_rows`); the outputs go to
    ``sink`` (:mod:`spark_impl.reconfig.sinks`). ``checkpoint_dir`` (storage every executor
    sees: a local path or a :mod:`spark_impl.store` URI such as ``s3://...``) holds ``dgs/``,
    the DGS checkpoint (:mod:`spark_impl.dgs.streaming_store`). ``query_checkpoint`` is
    Structured Streaming's own checkpoint, a path Spark's Hadoop filesystems reach (local,
    ``hdfs://``, ``s3a://`` with the hadoop-aws jars); default ``<checkpoint_dir>/query`` for a
    local ``checkpoint_dir``, required for a URI. Starting again on both resumes exactly once.
    ``allowed_lateness`` (event-time units, an int >= 0) is how far a stream's items may come
    behind a newer item of the stream and still be taken in timestamp order
    (:mod:`spark_impl.dgs.streaming_input`); ``late_policy`` (``"fail"``, the default of every
    front end, ``"drop"`` or a sink) says what happens to an event later than that
    (:mod:`spark_impl.lateness`); both
    may change from one start to the next. Every job is validated (program, plan) first;
    InputError on bad input."""
    if not getattr(source, "isStreaming", False):
        raise InputError("start_dgs_query needs a streaming DataFrame (spark.readStream...)")
    if column not in source.columns:
        raise InputError(f"the stream has no column {column!r} (columns: {source.columns})")
    check_column(source, column)
    if not jobs:
        raise InputError("a DGS query needs at least one job")
    lateness = check_allowed_lateness(allowed_lateness)
    policy = late_policy_of(late_policy)
    if crash_at is not None and crash_at not in CRASH_POINTS:
        raise InputError(f"unknown crash point {crash_at!r} (expected one of {', '.join(CRASH_POINTS)})")
    programs: list[Program] = []
    topos: list[Topology] = []
    for index, job in enumerate(jobs):
        try:
            programs.append(load_program(job.target))
            topos.append(topology(programs[-1], job.plan if isinstance(job.plan, Plan) else plan_from_json(job.plan)))
        except InputError as error:
            raise (error if len(jobs) == 1 else error.located(f"jobs[{index}]")) from None
    root = checkpoint_dir if is_uri(checkpoint_dir) else os.path.abspath(checkpoint_dir)
    if query_checkpoint is None and is_uri(root):
        raise InputError(f"checkpoint_dir {display(root)} is a filesystem URI: give query_checkpoint= too, "
                         "Structured Streaming's own checkpoint (a local or HDFS path, or s3a:// with the "
                         "hadoop-aws jars; docs/spark.md)", "query_checkpoint")
    query = query_checkpoint or os.path.join(root, "query")
    state = join(root, "dgs")
    try:
        store = Store(state)
        store.location.make_root()
    except (OSError, ValueError) as error:  # pyarrow: an unknown scheme, a bad URI, no such bucket
        raise InputError(f"cannot open {display(state)}: {str(error).splitlines()[0]}", "checkpoint_dir") from None
    check_layout(state)
    layout = Layout(tuple(j.target for j in jobs), tuple(topos))
    run = DgsStreamingRun(spark, store, layout, programs, list(jobs), sink, keep_records, crash_at,
                          allowed_lateness=lateness, late_policy=policy, checkpoint_dir=root, query_checkpoint=query)
    run.observer.status = run.status
    if sink is not None:
        run.outputs = spark.sparkContext.accumulator(0)
    signature = [_signature(j, t) for j, t in zip(jobs, topos)]
    commit = run.store.read()
    if commit is None:
        _initial(run)
        run.commit(Commit(signature, mailboxes=[Mailbox() for _ in jobs]))
    elif [(t, i) for t, _, i in commit.jobs] != [(t, i) for t, _, i in signature]:
        raise InputError("the checkpoint directory belongs to a query with other jobs (programs or "
                         "inline_below differ)", display(root))
    else:
        run.last = commit
        run.deliver(commit)  # a kill between the commit and the recorded delivery
        if commit.jobs != signature:  # restarted with other plans: re-plan the committed state
            run.layout = Layout(layout.targets, tuple(topology(p, plan_from_json(j[1]))
                                                      for p, j in zip(programs, commit.jobs)))
            run.jobs = [replace(job, plan=plan_from_json(j[1])) for job, j in zip(jobs, commit.jobs)]
            run.switch_plans(run.committed(), {i: t.plan for i, t in enumerate(topos) if commit.jobs[i] != signature[i]})
    writer = (source.writeStream.foreachBatch(lambda df, batch_id: run.handle(df, batch_id, column))
              .option("checkpointLocation", query))
    if trigger:
        writer = writer.trigger(**trigger)
    run.query = writer.start()
    return run


def _initial(run: DgsStreamingRun) -> None:
    """``init()`` of every job forked to its leaves, saved as the states ``init``."""
    layout, total = run.layout, run.layout.partitions
    target = run.store.fresh(run.store.states_dir(INITIAL))
    _user_action(lambda: run.spark.sparkContext.parallelize(range(len(run.jobs)), len(run.jobs))
                 .flatMap(lambda job: initial_states(layout, job)).partitionBy(total, identity_partition)
                 .mapPartitions(collect_slots).mapPartitionsWithIndex(save_states(target)).count())
