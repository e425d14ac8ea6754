"""O+ windowed operators on a live stream: a Structured Streaming query whose micro-batches
run the STRETCH O+ instances of :mod:`spark_impl.oplus.instance` (docs/spark.md, "O+ on a
live stream").

    run = start_oplus_query(spark, stream, [oplus_job("sliding-sum", 5, 10, parallelism=2)],
                            checkpoint_dir="/shared/ckpt", sink=ParquetSink("/shared/out", value_type="long"))
    run.rescale(4)                       # any thread, while the query runs
    run.query.processAllAvailable(); run.stop()
    # the O+ state on an object store (spark_impl.store); Spark's own checkpoint stays a Hadoop path:
    #   start_oplus_query(..., checkpoint_dir="s3://key:secret@bucket/ckpt?region=us-east-1",
    #                     query_checkpoint="/shared/query", ...)

A job is a catalogue operator or a user-defined O+ (``oplus_job(OPlus or "file.py:NAME", ...)``,
:mod:`spark_impl.oplus.user_operator`: each key's tuples are applied in event-time order once
the watermark passes them); rescale, restart and exactly-once are the same for both.

Structured Streaming owns the *input* (offsets, batch ids, replay); ``foreachBatch(df, b)``:

1. ``b`` already has a commit record: a replay after a crash. Nothing runs again; only a
   delivery the crash interrupted is made (same rows, same batch id).
2. A summary pass (:func:`~spark_impl.oplus.streaming_jobs.summarize`) gives the driver,
   per job and source, the largest event time or explicit watermark of the batch - never a
   tuple. The job's new watermark is the minimum bound over its sources (event-time
   watermarks from the data).
3. One Spark job runs every instance (:mod:`spark_impl.oplus.streaming_round`): tuples are
   processed under the parallelism in force, then windows with ``L + WS <= W`` are emitted.
   State and outputs go to this batch's files in the checkpoint.
4. **Rescale at a watermark.** Requests (:meth:`OplusStreamingRun.rescale`, each written as
   a record under ``requests/`` when accepted, so a restart keeps them) take effect at the first batch
   boundary whose new watermark reaches the request's watermark (any finite watermark when
   none was given) while the stream still runs: the next batch runs with the new
   parallelism, key states read from the shared state by the new mapping (STRETCH VSN: no
   state is handed between instances). A request the stream reaches only by ending is not
   applied (as in the reference).
5. The commit record is written (the commit point), the committed outputs are delivered to
   the sink (:mod:`spark_impl.oplus.streaming_sink`), old files are pruned.

Exactly-once across a driver crash: whatever the crash interrupted is either committed (then
never re-run, at most re-delivered under the same batch id) or not (then Structured Streaming
replays the batch with the same offsets, and it rewrites the same files from the previous
commit's state).

**Bounded out-of-orderness** (:mod:`spark_impl.lateness`). A source's bound is its largest
event time minus ``allowed_lateness`` (or its largest explicit watermark); the job's watermark,
the minimum bound over its sources, is in every commit record, so a restart continues from it.
A tuple below its job's previous watermark is *late*: counted (``status().late``) and handled
by ``late_policy`` before anything of the batch runs: ``"fail"`` (the default, as on every
front end: the batch raises :class:`~spark_impl.lateness.LateTupleError`, the query stops;
:meth:`OplusStreamingRun.process_all_available` raises it), ``"drop"`` (one WARNING per batch on
the logger ``streamproof.oplus``), or a sink that receives the late rows under the batch id.
Input whose disorder stays within ``allowed_lateness`` has no late tuple, whatever order the
source hands it over in.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from typing import Any, Iterable, Iterator, Sequence

from spec.errors import InputError
from spec.oplus.budget import MAX_PARALLELISM

from spark_impl.faults import check_faults
from spark_impl.lateness import (DEFAULT_LATE_POLICY, LatePolicy, LateTuple, LateTupleError, apply_late_policy,
                                 check_allowed_lateness, log_late)
from spark_impl.lateness import late_policy as late_policy_of
from spark_impl.lifecycle import LiveRun
from spark_impl.observe import BatchReport, Observer
from spark_impl.oplus.instance import ScenarioRound, finite
from spark_impl.oplus.streaming_jobs import OplusJob, Summary, entries_of, route_key, summarize
from spark_impl.oplus.streaming_log import Commit, Log
from spark_impl.oplus.streaming_round import RoundPlan, run_round
from spark_impl.oplus.streaming_sink import deliver_pending
from spark_impl.reconfig.sinks import Sink
from spark_impl.reconfig.streaming import StreamStopped
from spark_impl.oplus.status import oplus_status
from spark_impl.run_status import Status
from spark_impl.store import display, is_uri
from spark_impl.values import column_type, unsupported

__all__ = ["CRASH_POINTS", "LOGGER", "OplusStreamingRun", "SimulatedCrash", "start_oplus_query"]

LOGGER = logging.getLogger("streamproof.oplus")
"""The live O+ front end's logger (a WARNING per batch that drops late tuples)."""

CRASH_POINTS = ("after-round", "after-commit", "after-delivery")
"""Where :meth:`OplusStreamingRun.crash_at` makes the next batch fail, as a driver killed
there would: the round's files written but no commit record; committed but not delivered;
delivered to the sink but not recorded as delivered."""


class SimulatedCrash(RuntimeError):
    """Raised inside ``foreachBatch`` by :meth:`OplusStreamingRun.crash_at` (tests)."""


@dataclass
class OplusStreamingRun(LiveRun):
    """A running live O+ query. ``batch_ms``: wall time of the last 1000 ``foreachBatch``
    calls of this process; ``replayed``: batch ids that arrived already committed;
    ``allowed_lateness`` and ``policy``: the bounded out-of-orderness and the late policy
    (:mod:`spark_impl.lateness`); ``batch_error``: the error a batch raised (the query stopped).
    Waits, ``with`` and signals: :class:`spark_impl.lifecycle.LiveRun`."""

    query: Any
    jobs: list[OplusJob]
    log: Log
    lock: threading.Lock = field(default_factory=threading.Lock)
    busy: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    batch_ms: dict[int, float] = field(default_factory=dict)
    replayed: list[int] = field(default_factory=list)
    crash: str | None = None
    allowed_lateness: int = 0
    policy: LatePolicy = field(default_factory=lambda: late_policy_of(DEFAULT_LATE_POLICY))
    batch_error: BaseException | None = None

    def late(self) -> dict[int, int]:
        """Per job, the late tuples since the query started (dropped, or sent to the late
        sink), as the last commit recorded them (also right after a restart): every job id of
        the query is present, with 0 before any commit (a query that failed before its first
        commit too), so the shape never depends on how far the query got."""
        counts = {job: 0 for job in range(len(self.jobs))}
        last = self.log.latest()
        if last is not None:
            counts.update(last.late)
        return counts

    def process_all_available(self) -> None:
        """``query.processAllAvailable()``; when a batch failed, raises its error itself (a
        :class:`~spark_impl.lateness.LateTupleError` under ``late_policy="fail"``), not
        Spark's wrapper."""
        try:
            self.query.processAllAvailable()
        except Exception as error:
            if self.batch_error is not None:
                raise self.batch_error from error
            raise
    checkpoint_dir: str = ""
    query_checkpoint: str | None = None
    observer: Observer = field(default_factory=lambda: Observer("oplus"))
    refused: list[str] = field(default_factory=list)
    """Why this process refused rescale requests (the last :data:`REMEMBERED_REFUSALS`)."""
    rows_in: int = 0
    late_now: int = 0

    def rescale(self, parallelism: int, *, job: int = 0, watermark: int | None = None) -> int:
        """Request parallelism ``parallelism`` for ``job`` at event time ``watermark`` (None:
        at the next batch boundary with a finite watermark). Durable once this returns; the
        request id (see :meth:`status`: ``applied`` lists the ids applied). A refused request
        (InputError) is also logged as a WARNING and listed by :meth:`run_status`."""
        try:
            return self._rescale(parallelism, job, watermark)
        except InputError as error:
            self.refused.append(str(error))
            del self.refused[:-REMEMBERED_REFUSALS]
            self.observer.warn("refused", f"rescale refused: {error}", reason=str(error))
            raise

    def run_status(self) -> Status:
        """The query's status (:mod:`spark_impl.status`: committed batch, every job's
        parallelism and the request that set it, every request's state, late tuples), the
        same shape on every front end. :meth:`status` stays the last commit record."""
        return oplus_status(self.checkpoint_dir, refused=list(self.refused), query_checkpoint=self.query_checkpoint)

    def _rescale(self, parallelism: int, job: int, watermark: int | None) -> int:
        if not 0 <= job < len(self.jobs):
            raise InputError(f"no job {job} (the query has {len(self.jobs)})", "job")
        if isinstance(parallelism, bool) or not isinstance(parallelism, int) or not 1 <= parallelism <= MAX_PARALLELISM:
            raise InputError(f"must be an integer in 1..{MAX_PARALLELISM}, got {parallelism!r}", "parallelism")
        if watermark is not None and (isinstance(watermark, bool) or not isinstance(watermark, int)):
            raise InputError(f"must be an integer event time or None, got {watermark!r}", "watermark")
        with self.lock:
            return self.log.add_request(job, parallelism, watermark)

    def status(self) -> Commit | None:
        """The last committed batch's record: ``parallelism`` (of the next batch), ``watermark``,
        ``applied`` request ids (the last :data:`KEEP_APPLIED`), ``late`` tuples (dropped or sent to
        the late sink),
        ``rescales`` (the last :data:`KEEP_RESCALES`), ``rescaled`` (per job, every rescale
        applied since the query started)."""
        return self.log.latest()

    def crash_at(self, point: str) -> None:
        """Make the next batch fail at ``point`` (:data:`CRASH_POINTS`), as a killed driver
        would; the query stops with an error and a restart on the same checkpoint resumes."""
        if point not in CRASH_POINTS:
            raise InputError(f"unknown crash point {point!r} (expected one of {', '.join(CRASH_POINTS)})")
        self.crash = point

    def stop(self) -> None:
        """Stop at a batch boundary (a running batch finishes and commits; one that starts
        afterwards raises ``StreamStopped`` before doing anything and is replayed after a
        restart)."""
        self.stopping.set()
        with self.busy:
            pass
        self.settle_stream()
        self.query.stop()
        self.observer.close()

    def expected_failure(self) -> bool:
        """The query died of a crash :meth:`crash_at` asked for."""
        error = self.query.exception() if self.query is not None else None
        return error is not None and "SimulatedCrash" in str(error)

    def _refuse_after_stop(self, batch_id: int) -> None:
        if self.stopping.is_set():
            raise StreamStopped(f"batch {batch_id} started after stop(); it is replayed after a restart")

    def _maybe_crash(self, point: str) -> None:
        if self.crash == point:
            self.crash = None
            raise SimulatedCrash(f"simulated driver crash {point}")


def _initial(jobs: Sequence[OplusJob]) -> Commit:
    sizes = {j: job.parallelism for j, job in enumerate(jobs)}
    return Commit(-1, dict(sizes), dict(sizes), 0, watermark={j: -math.inf for j in sizes})


@contextmanager
def _remember_failure(run: OplusStreamingRun) -> Iterator[None]:
    """Keep the error a batch raises on the run (:meth:`OplusStreamingRun.process_all_available`);
    a batch refused after ``stop()`` is not a failure."""
    try:
        yield
    except Exception as error:
        if not isinstance(error, StreamStopped):
            run.batch_error = error
        raise


class _Handler:
    """The ``foreachBatch`` function (module docstring, steps 1-5)."""

    def __init__(self, run_ref: list[OplusStreamingRun], spark: Any, sink: Sink, faults: frozenset[str],
                 keep: int) -> None:
        self.run_ref = run_ref
        self.spark = spark
        self.sink = sink
        self.off_by_one = "window-off-by-one" in faults
        self.drop = "drop-near-watermark" in faults
        self.keep = keep

    def __call__(self, df: Any, batch_id: int) -> None:
        run, started = self.run_ref[0], time.perf_counter()
        with run.busy, _remember_failure(run):
            run._refuse_after_stop(batch_id)
            last = run.log.latest()
            run.rows_in = run.late_now = 0
            replayed = last is not None and batch_id <= last.batch
            if replayed:
                run.replayed.append(batch_id)
            else:
                last = self._run(run, df, batch_id, last or _initial(run.jobs))
            deliver_pending(self.spark, run.log, self.sink,
                            before_mark=lambda _: run._maybe_crash("after-delivery"))
            run.log.prune(self.keep)
            elapsed = time.perf_counter() - started
            run.batch_ms[batch_id] = elapsed * 1000.0
            while len(run.batch_ms) > 1000:
                del run.batch_ms[next(iter(run.batch_ms))]
            delivered = run.log.delivered()
            backlog = sum(1 for b in run.log.committed() if b > delivered)
            run.observer.batch(BatchReport(batch_id, run.rows_in, 0 if replayed or last is None else last.outputs,
                                           run.late_now, elapsed, backlog, replayed))

    def _run(self, run: OplusStreamingRun, df: Any, batch_id: int, prev: Commit) -> Commit:
        jobs = run.jobs
        entries = df.rdd.map(entries_of(df.columns, getattr(df, "schema", None))).persist()
        try:
            summary = Summary()
            for part in entries.mapPartitions(summarize(jobs, prev.watermark, run.allowed_lateness)).collect():
                summary.merge(part)
            if summary.bad:
                raise InputError(f"batch {batch_id}: {'; '.join(summary.bad)}", "stream")
            if summary.first:
                handle_late(run, df, batch_id, prev, summary.late, min(summary.first.values()))
            bounds = dict(prev.bounds)
            for at, bound in summary.bounds.items():
                bounds[at] = max(bounds.get(at, -math.inf), bound)
            watermark = {j: min(bounds.get((j, s), -math.inf) for s in range(job.sources))
                         for j, job in enumerate(jobs)}
            plans = {j: ScenarioRound(job.config(self.off_by_one), prev.parallelism[j], prev.watermark[j],
                                      watermark[j], self.drop, route_key) for j, job in enumerate(jobs)}
            plans = {j: replace(p, user=jobs[j].user) for j, p in plans.items()}
            moved = frozenset(j for j in plans if prev.parallelism[j] != prev.ran.get(j))
            plan = RoundPlan(plans, max(prev.parallelism.values()), prev.batch if prev.batch >= 0 else None,
                             prev.partitions, moved, run.log.location, batch_id)
            counts = run_round(entries, plan)
        finally:
            entries.unpersist()
        run._maybe_crash("after-round")
        record = commit_batch(run, prev, Commit(batch_id, {}, {}, plan.partitions, bounds, watermark,
                                                late=summary.late, outputs=sum(n for _, n in counts),
                                                lateness={j: run.allowed_lateness for j in watermark}))
        run.rows_in, run.late_now = summary.rows, sum(summary.late.values())
        run._maybe_crash("after-commit")
        return record

    @staticmethod
    def _apply_requests(requests: list[dict[str, Any]], record: Commit) -> None:
        """Step 4: requests whose watermark the batch reached switch the next batch's mapping."""
        done = set(record.applied)
        for request in requests:
            ident, job = int(request["id"]), int(request["job"])
            wanted, at = request["watermark"], record.watermark[job]
            if ident in done or not finite(at) or (wanted is not None and at < wanted):
                continue
            record.rescales.append({"request": ident, "job": job, "batch": record.batch, "watermark": int(at),
                                    "before": record.parallelism[job], "after": int(request["parallelism"])})
            record.parallelism[job] = int(request["parallelism"])
            record.rescaled[job] = record.rescaled.get(job, 0) + 1
            record.applied.append(ident)
            done.add(ident)
        del record.rescales[:-KEEP_RESCALES]


REMEMBERED_REFUSALS = 100
"""Refusals :attr:`OplusStreamingRun.refused` keeps (bounded memory)."""

KEEP_APPLIED = 8
"""Applied rescale requests kept under ``requests/`` (and so in a commit's ``applied``): a
restart needs none of them (only the pending ones and the newest id), they are a short
history for :meth:`OplusStreamingRun.status`. Fixed, so the checkpoint stays flat."""

KEEP_RESCALES = 8
"""Rescales a commit record keeps in ``rescales`` (the newest; ``rescaled`` counts them all)."""


def commit_batch(run: OplusStreamingRun, prev: Commit, batch: Commit) -> Commit:
    """Steps 4-5 after ``batch``'s round (``batch``: its id, partitions, bounds, watermark, the
    late tuples and outputs of this batch alone): the record carries ``prev``'s parallelism,
    late counts and request bookkeeping forward, applies the requests its watermark reached,
    is written (the commit point), and the requests are compacted. Returns the record."""
    record = Commit(batch.batch, dict(prev.parallelism), dict(prev.parallelism), batch.partitions, batch.bounds,
                    batch.watermark, list(prev.applied),
                    {j: prev.late.get(j, 0) + batch.late.get(j, 0) for j in batch.watermark}, batch.outputs,
                    list(prev.rescales), dict(prev.rescaled), dict(batch.lateness))
    settle_requests(run, record)
    run.log.write_commit(record)
    compact_requests(run, record)
    return record


def settle_requests(run: OplusStreamingRun, record: Commit) -> None:
    """Before ``record`` is committed: its ``applied`` keeps the ids still listed under
    ``requests/`` (the others were compacted away, :func:`compact_requests`), and the
    requests its watermark reached are applied (step 4)."""
    with run.lock:
        requests = run.log.requests()
        listed = {int(r["id"]) for r in requests}
        record.applied = [ident for ident in record.applied if ident in listed]
        _Handler._apply_requests(requests, record)


def compact_requests(run: OplusStreamingRun, record: Commit) -> None:
    """After ``record`` is committed: ``requests/`` keeps every request not applied and the
    :data:`KEEP_APPLIED` applied ones with the largest ids (and always the largest id issued,
    which the next id follows), so it and ``applied`` stay flat however many rescales a query
    makes. An applied request dropped here is no longer listed, so it can never be applied
    again (ids are never reused)."""
    with run.lock:
        done = set(record.applied)
        applied = sorted(int(r["id"]) for r in run.log.requests() if int(r["id"]) in done)
        run.log.drop_requests(applied[:max(0, len(applied) - KEEP_APPLIED)])


def start_oplus_query(spark: Any, stream: Any, jobs: Sequence[OplusJob], *, checkpoint_dir: str, sink: Sink,
                      faults: Iterable[str] = (), trigger: dict[str, Any] | None = None,
                      keep: int = 2, query_checkpoint: str | None = None, allowed_lateness: int = 0,
                      late_policy: Any = DEFAULT_LATE_POLICY) -> OplusStreamingRun:
    """Start a Structured Streaming query over ``stream`` (a streaming DataFrame, columns as
    in :mod:`spark_impl.oplus.streaming_jobs`) running ``jobs``; outputs go to ``sink``.

    ``checkpoint_dir`` (storage every executor sees: a local/shared path or a ``pyarrow.fs``
    URI such as ``s3://key:secret@bucket/ckpt?region=...``, :mod:`spark_impl.store`) holds
    ``oplus/`` (commit records, state, requests; :mod:`.streaming_log`). ``query_checkpoint``
    is Structured Streaming's own ``checkpointLocation`` (a Hadoop path: local, ``hdfs://``,
    or ``s3a://`` with the hadoop-aws jars); default ``<checkpoint_dir>/query`` for a local
    ``checkpoint_dir``, required for a URI. Starting again on the same two locations with the
    same jobs resumes exactly once.
    ``faults``: seeded O+ bugs (``spark_impl.faults.OPLUS_FAULTS``) for the conformance suite.
    ``keep``: commit records retained (>= 1).
    ``allowed_lateness`` (event-time units, >= 0) and ``late_policy`` (``"fail"``, the default
    of every front end: a late tuple stops the query, nothing is dropped unless asked for;
    ``"drop"``; or a sink: ``function(df, batch_id)``, an object with ``deliver(df, batch_id)``,
    or a Parquet path): bounded out-of-orderness and what happens to a tuple behind the
    watermark (:mod:`spark_impl.lateness`; docs/production/oplus.md)."""
    if not getattr(stream, "isStreaming", False):
        raise InputError("start_oplus_query needs a streaming DataFrame (spark.readStream...)", "stream")
    if "ts" not in stream.columns:
        raise InputError(f"the stream has no column 'ts' (columns: {stream.columns})", "stream")
    bad = [f"column {c!r}: {why}" for c in stream.columns if (why := unsupported(column_type(stream, c)))]
    if bad:
        raise InputError(f"{bad[0]} (docs/production/types.md lists the supported types)", "stream")
    if not jobs or not all(isinstance(j, OplusJob) for j in jobs):
        raise InputError("expected a non-empty list of jobs built with oplus_job(...)", "jobs")
    if keep < 1:
        raise InputError(f"must be >= 1, got {keep}", "keep")
    if query_checkpoint is None:
        if is_uri(checkpoint_dir):
            raise InputError(f"checkpoint_dir {display(checkpoint_dir)} is a URI: give query_checkpoint= too "
                             "(Structured Streaming's own checkpoint is a Hadoop path: local, hdfs://, or s3a:// "
                             "with the hadoop-aws jars)", "query_checkpoint")
        query_checkpoint = os.path.join(os.path.abspath(checkpoint_dir), "query")
    wanted = frozenset(faults)
    check_faults(wanted)
    lateness, policy = check_allowed_lateness(allowed_lateness), late_policy_of(late_policy)
    log = Log(checkpoint_dir)
    log.check_layout()
    last = log.latest()
    if last is not None and len(last.parallelism) != len(jobs):
        raise InputError(f"the checkpoint {checkpoint_dir} belongs to a query of {len(last.parallelism)} job(s), "
                         f"not {len(jobs)}", "checkpoint_dir")
    ref: list[OplusStreamingRun] = []
    writer = (stream.writeStream.foreachBatch(_Handler(ref, spark, sink, wanted, keep))
              .option("checkpointLocation", query_checkpoint))
    if trigger:
        writer = writer.trigger(**trigger)
    run = OplusStreamingRun(None, list(jobs), log, allowed_lateness=lateness, policy=policy,
                            checkpoint_dir=checkpoint_dir, query_checkpoint=query_checkpoint)
    run.observer.status = run.run_status
    ref.append(run)
    run.query = writer.start()
    return run


def handle_late(run: OplusStreamingRun, df: Any, batch_id: int, prev: Commit, counts: dict[int, int],
                first: LateTuple) -> None:
    """Apply the late policy to a batch with late tuples (``counts`` per job, the ``first``
    one), before anything of it runs: raise (``fail``), deliver them (a sink), then log."""
    count = sum(counts.values())
    apply_late_policy(run.policy, batch_id, LateTupleError(batch_id, first, count, run.allowed_lateness),
                      lambda: late_rows(df, prev.watermark))
    log_late(LOGGER, batch_id, count, first, run.policy, run.allowed_lateness, "tuple")


def late_rows(df: Any, watermark: dict[int, float]) -> Any:
    """The rows of micro-batch ``df`` that are late (a tuple below its job's previous
    watermark, as :func:`~spark_impl.oplus.streaming_jobs.summarize` counts them), with a
    column ``late_watermark``: the watermark each was behind."""
    from pyspark.sql import functions as F  # noqa: N812 - Spark's usual name

    job = F.coalesce(F.col("job"), F.lit(0)) if "job" in df.columns else F.lit(0)
    behind: Any = None
    for j, w in sorted(watermark.items()):
        if finite(w):
            behind = (F.when((job == j) & (F.col("ts") < F.lit(int(w))), F.lit(int(w))) if behind is None
                      else behind.when((job == j) & (F.col("ts") < F.lit(int(w))), F.lit(int(w))))
    if behind is None:
        return df.limit(0).withColumn("late_watermark", F.lit(None).cast("long"))
    return df.withColumn("late_watermark", behind).where(F.col("late_watermark").isNotNull())
