"""Structured Streaming front end: a Spark Structured Streaming query whose micro-batches are
processed by the reconfiguration :class:`~spark_impl.reconfig.driver.Executor`.

Why this shape (docs/spark.md, "Structured Streaming front end"): the executor's batch planning
is *offset ranges of a replayable source* that stage-0 tasks read themselves (the driver ships
offsets, never data), and its per-operator Fries logic cannot live inside Structured Streaming's
own stateful operators. So the query owns ingestion and progress tracking of the *input*, and
the executor owns operators, state, reconfiguration and the sink:

1. ``foreachBatch(df, batch_id)``: the batch's rows are written by Spark tasks (one JSON-lines
   file per non-empty partition, ``input/b<batch_id>-p<part>.jsonl``, atomic rename); the driver
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
"""

from __future__ import annotations

import bisect
import json
import os
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Iterator

from spec.errors import InputError
from spec.fries.dataflow import OperatorKind
from spec.jsonio import load_json, write_json_atomic
from spark_impl.reconfig.driver import Executor
from spark_impl.reconfig.model import Job, Request
from spark_impl.reconfig.progress import progress_path

_INDEX_CACHE: dict[str, tuple[list[int], list[str]]] = {}
_FILE_CACHE: dict[str, list[Any]] = {}


def _read_index(path: str) -> list[Any]:
    index = os.path.join(path, "index.json")
    if not os.path.exists(index):
        return []
    return list(load_json(index)["batches"])


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
        return sum(int(c) for _, files in _read_index(self.path) for _, c in files)

    def _layout(self, refresh: bool) -> tuple[list[int], list[str]]:
        cached = _INDEX_CACHE.get(self.path)
        if refresh or cached is None:
            starts: list[int] = []
            names: list[str] = []
            total = 0
            for _, files in _read_index(self.path):
                for name, c in files:
                    starts.append(total)
                    names.append(str(name))
                    total += int(c)
            starts.append(total)
            cached = _INDEX_CACHE[self.path] = (starts, names)
        return cached

    def get(self, index: int) -> tuple[str, str, int, Any]:
        """Tuple ``index``: (source, ``source:index``, key, value)."""
        starts, names = self._layout(refresh=False)
        if index >= starts[-1]:
            starts, names = self._layout(refresh=True)
            if index >= starts[-1]:
                raise IndexError(f"tuple {index} is not in the input log {self.path}")
        f = bisect.bisect_right(starts, index) - 1
        full = os.path.join(self.path, names[f])
        if full not in _FILE_CACHE:
            with open(full, encoding="utf-8") as handle:
                _FILE_CACHE[full] = [json.loads(line) for line in handle if line.strip()]
        key, value = _FILE_CACHE[full][index - starts[f]]
        return self.source, f"{self.source}:{index}", int(key), value


def _partition_writer(path: str, batch_id: int) -> Any:
    """Task side of step 1: write this partition's rows, return (file, count) (no data)."""

    def write(part: int, rows: Iterator[Any]) -> Iterator[tuple[str, int]]:
        name = f"b{batch_id:012d}-p{part:05d}.jsonl"
        tmp = os.path.join(path, f".{name}.{os.getpid()}.tmp")
        n = 0
        with open(tmp, "w", encoding="utf-8") as handle:
            for row in rows:
                handle.write(json.dumps([int(row[0]), row[1]]) + "\n")
                n += 1
        if n == 0:
            os.unlink(tmp)
            return iter(())
        os.replace(tmp, os.path.join(path, name))
        return iter([(name, n)])

    return write


@dataclass
class StreamingRun:
    """A running query and its executor. ``batches``: Structured Streaming batch id ->
    executor batches run for it (this process only)."""

    query: Any
    executor: Executor
    source: BatchLogSource
    batches: dict[int, list[int]] = field(default_factory=dict)
    replayed: list[int] = field(default_factory=list)

    def submit(self, request: Request) -> str | None:
        """Reconfigure the job now (see :meth:`Executor.submit`): None if accepted, else why not."""
        return self.executor.submit(0, request)

    def in_progress(self) -> bool:
        """A request has been accepted and not yet completed."""
        with self.executor.lock:
            st = self.executor.state[0]
            return st.live.active is not None or st.queued is not None

    def stop(self) -> None:
        """Stop the query (the executor keeps its checkpoint; restart with :func:`start_query`)."""
        self.query.stop()


class _BatchHandler:
    """The ``foreachBatch`` function (steps 1 and 2 of the module docstring)."""

    def __init__(self, run_ref: list[StreamingRun], key: str, value: str, settle_steps: int) -> None:
        self.run_ref = run_ref
        self.key = key
        self.value = value
        self.settle_steps = settle_steps
        self.lock = threading.Lock()

    def __call__(self, df: Any, batch_id: int) -> None:
        run = self.run_ref[0]
        with self.lock:
            path = run.source.path
            entries = _read_index(path)
            if any(int(b) == batch_id for b, _ in entries):
                run.replayed.append(batch_id)
            else:
                files = (df.select(self.key, self.value).rdd
                         .mapPartitionsWithIndex(_partition_writer(path, batch_id)).collect())
                entries.append([batch_id, sorted([name, int(n)] for name, n in files)])
                write_json_atomic(os.path.join(path, "index.json"), {"batches": entries}, indent=None)
            self._drive(run, batch_id)

    def _drive(self, run: StreamingRun, batch_id: int) -> None:
        ex = run.executor
        target = run.source.count()
        size = max(1, ex.jobs[0].timing.batch_size)
        budget = (max(0, target - ex.state[0].live.offset) + size - 1) // size + self.settle_steps + 2
        ran = run.batches.setdefault(batch_id, [])
        settle = 0
        while budget > 0:
            behind = ex.state[0].live.offset < target
            if not behind:
                if not run.in_progress() or settle >= self.settle_steps:
                    return
                settle += 1
            ran.append(ex.g)
            ex.step()
            budget -= 1


def start_query(spark: Any, job: Job, source: Any, *, scheduler: str, checkpoint_dir: str,
                key_column: str = "key", value_column: str = "value", faults: frozenset[str] = frozenset(),
                partitions: int | None = None, batch_size: int | None = None, settle_steps: int = 4,
                trigger: dict[str, Any] | None = None) -> StreamingRun:
    """Start a Structured Streaming query over ``source`` (a streaming DataFrame with integer
    ``key_column`` and JSON-able ``value_column``) that runs ``job`` on the executor.

    ``job``'s own source is replaced by the input log (its single source operator names the
    tuples); ``job.planned`` must be empty (use :meth:`StreamingRun.submit`). ``batch_size``
    caps the tuples of one executor batch (default: a whole Structured Streaming batch).
    ``checkpoint_dir`` (storage every executor sees) holds ``query/`` (Structured Streaming's
    checkpoint), ``input/`` (the input log) and ``executor/``; starting again on the same
    directory resumes both (exactly-once, see the module docstring)."""
    if not getattr(source, "isStreaming", False):
        raise InputError("start_query needs a streaming DataFrame (spark.readStream...)")
    missing = [c for c in (key_column, value_column) if c not in source.columns]
    if missing:
        raise InputError(f"the stream has no column(s) {missing} (columns: {source.columns})")
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
    resume = os.path.exists(progress_path(executor_dir))
    ex = Executor(spark, [streaming_job], scheduler, executor_dir, faults=faults, partitions=partitions,
                  resume=resume)
    ref: list[StreamingRun] = []
    handler = _BatchHandler(ref, key_column, value_column, settle_steps)
    writer = (source.writeStream.foreachBatch(handler)
              .option("checkpointLocation", os.path.join(root, "query")))
    if trigger:
        writer = writer.trigger(**trigger)
    run = StreamingRun(None, ex, log)
    ref.append(run)
    run.query = writer.start()
    return run
