"""Structured Streaming front end: a Spark Structured Streaming query whose micro-batches are
processed by the reconfiguration :class:`~spark_impl.reconfig.driver.Executor`.

Why this shape (docs/spark.md, "Structured Streaming front end"): the executor's batch planning
is *offset ranges of a replayable source* that stage-0 tasks read themselves (the driver ships
offsets, never data), and its per-operator Fries logic cannot live inside Structured Streaming's
own stateful operators. So the query owns ingestion and progress tracking of the *input*, and
the executor owns operators, state, reconfiguration and the sink:

1. ``foreachBatch(df, batch_id)``: the batch's rows are written by Spark tasks (one JSON-lines
   file per non-empty partition, ``input/b<batch_id>-p<part>.v2.jsonl``, atomic rename); the driver
   receives only ``(file, row count)`` per partition and appends them to ``input/index.json``
   under ``batch_id``. That index entry is the batch's commit point in the input log: a batch
   already in the index is never written again, so its tuples keep their positions (tuple ``i``
   of :class:`BatchLogSource` never changes: the executor's source contract).
2. The driver then steps the executor until it has ingested every indexed tuple and - bounded
   by ``settle_steps`` - until no reconfiguration request is in progress, so the executor
   normally commits (Fries §7.3 rule) before Structured Streaming commits ``batch_id``.

Exactly-once on restart: Structured Streaming re-runs a batch whose commit it had not logged
with the same offsets; the input log skips it if already indexed (idempotent by
``batch_id``), and the executor resumes (``resume=True``) from its last commit and re-ingests
whatever it had not committed. The visible sink is the executor's committed batches
(idempotent by the executor's batch number). ``StreamingRun.batches`` maps each Structured
Streaming batch id to the executor batches it ran.

Requests: :meth:`StreamingRun.submit` may be called from any thread while the query runs; it
is :meth:`Executor.submit` (made at once if an executor batch is running, else at the start of
the next one), with the same fries / epoch / naive semantics.

Keys and values of any Spark type reach the job in the documented form of
:mod:`spark_impl.values` (structs and arrays as tuples, maps as sorted pairs, decimals, dates,
UTC timestamps, bytes; docs/production/types.md) and keys are routed
by :func:`spark_impl.keys.route`. With a ``retention`` the input log is bounded too: after each
Structured Streaming batch, files wholly below the executor's committed offset are deleted and
the index keeps ``base`` (tuples before its first file) and ``last`` (the last batch id
indexed), so tuple positions never change.

Two hooks for a test harness (``conformance.fries.streaming_path``; docs/spark.md): a
:class:`StepHook` (``start_query(step_hook=...)``) runs around every executor step the front
end makes - the conformance harness owns the control-message clock with it and releases a
request's heads micro-batches apart -, and :meth:`StreamingRun.crash_before_commit` makes one
executor batch run its tasks and then "crash" the driver before the commit (:class:`DriverCrash`
leaves ``foreachBatch``, the query fails, nothing of that batch is committed; the next
``start_query`` on the same directory recovers).
"""

from __future__ import annotations

import bisect
import json
import os
import re
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Iterator, Protocol

from spec.errors import InputError
from spec.fries.dataflow import OperatorKind
from spec.jsonio import load_json, write_json_atomic
from spark_impl.lifecycle import LiveRun
from spark_impl.observe import BatchReport, Observer
from spark_impl.lru import LRU
from spark_impl.reconfig.driver import Executor
from spark_impl.reconfig.model import Job, Request
from spark_impl.reconfig.progress import has_progress
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.sinks import Sink
from spark_impl.values import column_type, decoder, from_json, normalize, to_json, unsupported
from spark_impl.reconfig.status import fries_status
from spark_impl.run_status import Status

INDEX_CACHE: LRU[str, tuple[list[int], list[str]]] = LRU(16)
"""Per Python worker (bounded): the layout of each input log a reader used, (first tuple of
every file, file names). Indexed files never change, so a cached layout stays right for every
tuple it covers; :class:`BatchLogSource` reads the index again for a tuple past its end."""
_FILE_CACHE: LRU[str, list[Any]] = LRU(16)
_ROLLED_BACK = re.compile(r"^R\d+ rejected: ")  # a request made, then rolled back (Executor._absorb)
REMEMBERED = 1000
"""``StreamingRun.batches`` / ``batch_ms`` keep the last this many batches (bounded memory)."""


class DriverCrash(RuntimeError):
    """A simulated driver crash (:meth:`StreamingRun.crash_before_commit`): raised after an
    executor batch's tasks wrote their files and before the executor commits it."""


class StepHook(Protocol):
    """Called around every executor step the front end (or :meth:`StreamingRun.step`) makes:
    ``before`` with the executor's lock held, ``after`` with ``before``'s result once the step
    returned (not after a :class:`DriverCrash`)."""

    def before(self, executor: Executor) -> Any:
        """Before the step (the executor's lock is held)."""

    def after(self, executor: Executor, token: Any) -> None:
        """After the step."""


class StreamStopped(RuntimeError):
    """Raised by a batch that starts after :meth:`StreamingRun.stop`: Structured Streaming does
    not commit it, so a restart replays it (nothing is lost)."""


@dataclass
class InputIndex:
    """``input/index.json``: ``batches`` = [[batch id, [[file, rows], ...]], ...] in order,
    ``base`` = tuples in files already deleted, ``last`` = last batch id indexed (-1: none)."""

    batches: list[Any] = field(default_factory=list)
    base: int = 0
    last: int = -1

    def count(self) -> int:
        """Tuples ever indexed (deleted files included: positions never change)."""
        return self.base + sum(int(c) for _, files in self.batches for _, c in files)

    def write(self, path: str) -> None:
        """Atomic rewrite: the commit point of the input log."""
        write_json_atomic(os.path.join(path, "index.json"),
                          {"batches": self.batches, "base": self.base, "last": self.last}, indent=None)

    def drop_below(self, path: str, offset: int) -> bool:
        """Delete the leading files whose tuples all lie below ``offset``; True if any."""
        dropped = False
        while self.batches:
            batch_id, files = self.batches[0]
            if not files:
                self.batches.pop(0)
                continue
            name, rows = files[0]
            if self.base + int(rows) > offset:
                break
            try:
                os.unlink(os.path.join(path, str(name)))
            except FileNotFoundError:
                pass
            self.base += int(rows)
            self.batches[0] = [batch_id, files[1:]]
            dropped = True
        return dropped


def read_index(path: str) -> InputIndex:
    """The input log's index in the directory ``path`` (an empty one if none was written)."""
    index = os.path.join(path, "index.json")
    if not os.path.exists(index):
        return InputIndex()
    raw = load_json(index)
    batches = list(raw["batches"])
    last = int(raw.get("last", max((int(b) for b, _ in batches), default=-1)))
    return InputIndex(batches, int(raw.get("base", 0)), last)




@dataclass(frozen=True)
class BatchLogSource:
    """The executor's replayable source over the input log written by ``foreachBatch``.

    ``count()`` (driver) reads only the index (file names and row counts); ``get(i)`` (tasks)
    finds tuple ``i``'s file by bisection on cumulative counts and reads that file (cached per
    Python worker; indexed files never change). Transaction ids are ``source:i``."""

    source: str
    path: str

    def count(self) -> int:
        """Tuples in the indexed batches."""
        return read_index(self.path).count()

    def _layout(self, refresh: bool) -> tuple[list[int], list[str]]:
        cached = INDEX_CACHE.get(self.path)
        if refresh or cached is None:
            starts: list[int] = []
            names: list[str] = []
            index = read_index(self.path)
            total = index.base
            for _, files in index.batches:
                for name, c in files:
                    starts.append(total)
                    names.append(str(name))
                    total += int(c)
            starts.append(total)
            cached = (starts, names)
            INDEX_CACHE.put(self.path, cached)
        return cached

    def get(self, index: int) -> tuple[str, str, Any, Any]:
        """Tuple ``index``: (source, ``source:index``, key, value)."""
        starts, names = self._layout(refresh=False)
        if index >= starts[-1]:
            starts, names = self._layout(refresh=True)
            if index >= starts[-1]:
                raise IndexError(f"tuple {index} is not in the input log {self.path}")
        f = bisect.bisect_right(starts, index) - 1
        if f < 0:
            raise IndexError(f"tuple {index} was deleted from the input log {self.path} (below the committed offset)")
        full = os.path.join(self.path, names[f])

        key, value = _FILE_CACHE.get_or_load(full, lambda: read_log_file(full))[index - starts[f]]
        return self.source, f"{self.source}:{index}", key, value


LOG_SUFFIX = ".v2.jsonl"
"""Input-log files of the current format: one ``[key, value]`` line per tuple in the persisted
encoding of :mod:`spark_impl.values` (values come back exactly as the user's function first
saw them). A file ending in plain ``.jsonl`` is of the first format (``json.dumps`` with
``default=str``), still read (lists become tuples) so a checkpoint written before resumes."""


def read_log_file(full: str) -> list[tuple[Any, Any]]:
    """The ``(key, value)`` tuples of one input-log file, in their documented form."""
    current = full.endswith(LOG_SUFFIX)
    with open(full, encoding="utf-8") as handle:
        pairs = [json.loads(line) for line in handle if line.strip()]
    if current:
        return [(from_json(k), from_json(v)) for k, v in pairs]
    return [(normalize(k), normalize(v)) for k, v in pairs]


def _partition_writer(path: str, batch_id: int, key_type: Any, value_type: Any) -> Any:
    """Task side of step 1: write this partition's rows (decoded by the columns' Spark types,
    :mod:`spark_impl.values`), return (file, count) (no data)."""
    key_of, value_of = decoder(key_type), decoder(value_type)

    def write(part: int, rows: Iterator[Any]) -> Iterator[tuple[str, int]]:
        name = f"b{batch_id:012d}-p{part:05d}{LOG_SUFFIX}"
        tmp = os.path.join(path, f".{name}.{os.getpid()}.tmp")
        n = 0
        with open(tmp, "w", encoding="utf-8") as handle:
            for row in rows:
                line = [to_json(key_of(row[0])), to_json(value_of(row[1]))]
                handle.write(json.dumps(line, allow_nan=False, separators=(",", ":")) + "\n")
                n += 1
        if n == 0:
            os.unlink(tmp)
            return iter(())
        os.replace(tmp, os.path.join(path, name))
        return iter([(name, n)])

    return write


@dataclass
class StreamingRun(LiveRun):
    """A running query and its executor. ``batches``: Structured Streaming batch id ->
    executor batches run for it; ``batch_ms``: batch id -> wall time of its ``foreachBatch``
    call (both for this process only, the last :data:`REMEMBERED` batches). Waits, ``with``
    and signals: :class:`spark_impl.lifecycle.LiveRun`."""

    query: Any
    executor: Executor
    source: BatchLogSource
    batches: dict[int, list[int]] = field(default_factory=dict)
    batch_ms: dict[int, float] = field(default_factory=dict)
    replayed: list[int] = field(default_factory=list)
    busy: threading.Lock = field(default_factory=threading.Lock)
    stopping: threading.Event = field(default_factory=threading.Event)
    hook: StepHook | None = None
    crash_offset: int | None = None
    crashed: str | None = None
    checkpoint_dir: str = ""
    observer: Observer = field(default_factory=lambda: Observer("fries"))
    outputs: Any = None
    """A Spark accumulator of the rows delivered to the sink (``rows out`` of the batch log line)."""
    rejections_seen: int = 0
    """How many of the executor's rejections were looked at for WARNING lines."""

    def submit(self, request: Request) -> str | None:
        """Reconfigure the job now (see :meth:`Executor.submit`): None if accepted, else why not
        (also logged as a WARNING, :mod:`spark_impl.observe`)."""
        answer = self.executor.submit(0, request)
        if answer is not None:
            self.observer.warn("refused", f"request refused: {answer}", reason=answer)
        return answer

    def status(self) -> Status:
        """The query's status (:mod:`spark_impl.status`): committed batch, every operator's
        active version, every request's state (this driver's uncommitted ones ``pending``)."""
        ex = self.executor
        with ex.lock:
            committed, live = ex.state[0].committed.snapshot(), ex.state[0].live.snapshot()
            queued = ex.state[0].queued is not None
        return fries_status(self.checkpoint_dir, committed=committed, live=live, queued=queued)

    def run_status(self) -> Status:
        """The same as :meth:`status` (the name every live front end's run handle has)."""
        return self.status()

    def in_progress(self) -> bool:
        """A request has been accepted and not yet completed. Raises
        :class:`~spark_impl.lifecycle.QueryFailed` once the query has failed and
        :class:`~spark_impl.lifecycle.QueryStopped` once a signal stopped it, so a
        ``while run.in_progress()`` loop ends with the query (a query stopped by :meth:`stop`
        still answers: its executor may be stepped, :meth:`step`)."""
        self.check_alive()
        with self.executor.lock:
            st = self.executor.state[0]
            return st.live.active is not None or st.queued is not None

    def stop(self) -> None:
        """Stop the query at a batch boundary: a batch running now finishes (the executor and
        Structured Streaming commit it); one that starts afterwards raises
        :class:`StreamStopped` before doing anything (not committed: replayed after a restart).
        The executor keeps its checkpoint; restart with :func:`start_query`. The metrics
        server, if any, stops too."""
        self.stopping.set()
        with self.busy:
            pass
        self.settle_stream()
        self.query.stop()
        self.observer.close()

    def expected_failure(self) -> bool:
        """The query died of the armed simulated crash (:meth:`crash_before_commit`)."""
        return self.crashed is not None

    def crash_before_commit(self, offset: int) -> None:
        """Arm a one-shot simulated driver crash (a test hook): the first executor batch whose
        input reaches ``offset`` tuples runs its tasks (outputs, state, switches are written),
        then :class:`DriverCrash` is raised where the executor would commit
        (``Executor.before_commit``). It leaves ``foreachBatch``, so the query fails and
        Structured Streaming does not commit its batch either; ``crashed`` says what happened.
        Start again with :func:`start_query` on the same ``checkpoint_dir``: it recovers from
        the last commits, as after a real crash. ``crash_offset = None`` disarms it."""
        self.crash_offset = offset
        self.executor.before_commit = self._crash_if_reached

    def _crash_if_reached(self, plan: Any) -> None:
        offset = self.crash_offset
        reached = plan.ranges.get(0, (0, 0))[1]
        if offset is None or reached < offset:
            return
        self.crash_offset = None
        self.executor.before_commit = None
        self.crashed = (f"simulated driver crash after executor batch {plan.g}'s tasks (tuples up to {reached}) "
                        "and before its commit")
        raise DriverCrash(self.crashed)

    def step(self) -> None:
        """One executor step with the :class:`StepHook` around it (the ``foreachBatch``
        handler's steps; a harness may step a stopped query's executor)."""
        ex = self.executor
        token = None
        if self.hook is not None:
            with ex.lock:
                token = self.hook.before(ex)
        ex.step()
        if self.hook is not None:
            self.hook.after(ex, token)


class _BatchHandler:
    """The ``foreachBatch`` function (steps 1 and 2 of the module docstring)."""

    def __init__(self, run_ref: list[StreamingRun], key: str, value: str, settle_steps: int,
                 bounded: bool) -> None:
        self.run_ref = run_ref
        self.key = key
        self.value = value
        self.settle_steps = settle_steps
        self.bounded = bounded

    def __call__(self, df: Any, batch_id: int) -> None:
        run = self.run_ref[0]
        with run.busy:
            if run.stopping.is_set():
                raise StreamStopped(f"batch {batch_id} started after stop(); it is replayed after a restart")
            started = time.perf_counter()
            out_before = run.outputs.value if run.outputs is not None else 0
            path = run.source.path
            index = read_index(path)
            rows_in = 0
            replayed = batch_id <= index.last
            if replayed:
                run.replayed.append(batch_id)
            else:
                types = (column_type(df, self.key), column_type(df, self.value))
                files = (df.select(self.key, self.value).rdd
                         .mapPartitionsWithIndex(_partition_writer(path, batch_id, *types)).collect())
                index.batches.append([batch_id, sorted([name, int(n)] for name, n in files)])
                index.last = batch_id
                index.write(path)
                rows_in = sum(int(n) for _, n in files)
            self._drive(run, batch_id)
            committed = run.executor.state[0].committed.offset
            if self.bounded and index.drop_below(path, committed):
                index.write(path)
            elapsed = time.perf_counter() - started
            _remember(run.batch_ms, batch_id, elapsed * 1000.0)
            rows_out = None if run.outputs is None else int(run.outputs.value - out_before)
            rejected = run.executor.state[0].live.rejected
            for message in rejected[run.rejections_seen:]:
                if _ROLLED_BACK.match(message):  # submit() warned about the others itself
                    run.observer.warn("refused", f"request rejected: {message}", reason=message)
            run.rejections_seen = len(rejected)
            run.observer.batch(BatchReport(batch_id, rows_in, rows_out, 0, elapsed,
                                           max(0, index.count() - committed), replayed))

    def _drive(self, run: StreamingRun, batch_id: int) -> None:
        ex = run.executor
        target = run.source.count()
        size = max(1, ex.jobs[0].timing.batch_size)
        budget = (max(0, target - ex.state[0].live.offset) + size - 1) // size + self.settle_steps + 2
        ran: list[int] = []
        _remember(run.batches, batch_id, ran)
        settle = 0
        while budget > 0:
            behind = ex.state[0].live.offset < target
            if not behind:
                if not run.in_progress() or settle >= self.settle_steps:
                    return
                settle += 1
            ran.append(ex.g)
            run.step()
            budget -= 1


def _remember(table: dict[int, Any], key: int, value: Any) -> None:
    table[key] = value
    while len(table) > REMEMBERED:
        del table[next(iter(table))]


remember = _remember
"""Set ``table[key] = value`` and keep only the last :data:`REMEMBERED` keys (the bounded
bookkeeping of a run, shared with :mod:`spark_impl.dgs.streaming`)."""


def start_query(spark: Any, job: Job, source: Any, *, scheduler: str, checkpoint_dir: str,
                key_column: str = "key", value_column: str = "value", faults: frozenset[str] = frozenset(),
                partitions: int | None = None, batch_size: int | None = None, settle_steps: int = 4,
                trigger: dict[str, Any] | None = None, sink: Sink | None = None,
                retention: Retention | None = None, step_hook: StepHook | None = None) -> StreamingRun:
    """Start a Structured Streaming query over ``source`` (a streaming DataFrame with
    ``key_column`` and ``value_column`` of any type docs/production/types.md lists; values reach
    the job in that page's documented form) that runs ``job`` on the executor.

    ``job``'s own source is replaced by the input log (its single source operator names the
    tuples); ``job.planned`` must be empty (use :meth:`StreamingRun.submit`). ``batch_size``
    caps the tuples of one executor batch (default: a whole Structured Streaming batch).
    ``checkpoint_dir`` (storage every executor sees) holds ``query/`` (Structured Streaming's
    checkpoint), ``input/`` (the input log) and ``executor/``; starting again on the same
    directory resumes both (exactly-once, see the module docstring). ``sink`` receives the
    committed outputs (:mod:`spark_impl.reconfig.sinks`); ``retention`` bounds the executor's
    storage and the input log (:mod:`spark_impl.reconfig.retention`). ``step_hook`` runs
    around every executor step (:class:`StepHook`; a test harness's)."""
    if not getattr(source, "isStreaming", False):
        raise InputError("start_query needs a streaming DataFrame (spark.readStream...)")
    missing = [c for c in (key_column, value_column) if c not in source.columns]
    if missing:
        raise InputError(f"the stream has no column(s) {missing} (columns: {source.columns})")
    for column in (key_column, value_column):
        bad = unsupported(column_type(source, column))
        if bad is not None:
            raise InputError(f"column {column!r}: {bad} (docs/production/types.md lists the supported types)")
    if job.planned:
        raise InputError("a streaming job takes requests through submit(), not planned requests")
    sources = [n for n in job.dataflow.names if job.dataflow.kind(n) is OperatorKind.SOURCE]
    if len(sources) != 1:
        raise InputError(f"a streaming job needs exactly one source operator (found {sources})")
    root = os.path.abspath(checkpoint_dir)
    input_dir = os.path.join(root, "input")
    executor_dir = os.path.join(root, "executor")
    os.makedirs(input_dir, exist_ok=True)
    log = BatchLogSource(sources[0], input_dir)
    timing = replace(job.timing, batch_size=batch_size or (1 << 30))
    streaming_job = replace(job, source=log, unbounded=True, timing=timing)
    resume = has_progress(executor_dir)
    ex = Executor(spark, [streaming_job], scheduler, executor_dir, faults=faults, partitions=partitions,
                  resume=resume, sink=sink, retention=retention)
    ref: list[StreamingRun] = []
    handler = _BatchHandler(ref, key_column, value_column, settle_steps, retention is not None)
    writer = (source.writeStream.foreachBatch(handler)
              .option("checkpointLocation", os.path.join(root, "query")))
    if trigger:
        writer = writer.trigger(**trigger)
    run = StreamingRun(None, ex, log, hook=step_hook, checkpoint_dir=root)
    if sink is not None:
        run.outputs = ex.output_counter = spark.sparkContext.accumulator(0)
    run.observer.status = run.status
    run.rejections_seen = len(ex.state[0].live.rejected)
    ref.append(run)
    run.query = writer.start()
    return run
