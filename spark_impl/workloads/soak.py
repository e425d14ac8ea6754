"""The soak workload (``streamproof soak``): a steady live stream through the Structured
Streaming front end, reconfigured every few batches, with bounded storage and an
exactly-once Parquet sink; measures whether disk, memory and batch latency stay flat.

Pipeline ``S -> M (2 workers) -> T``, string keys ``k0 .. k<keys-1>``. Input: Spark's
``rate-micro-batch`` source (``rowsPerBatch`` rows per batch, values 0, 1, 2, ... with no gap,
so a lost or duplicated input row is visible in the output). ``M`` counts tuples per key and
emits ``[value, version]``; every ``every`` batches the driver asks, while the query runs, to
replace ``M`` by the next version (state kept: ``transform`` is the identity). ``T`` forwards
to the sink.

Figures (the contract of ``streamproof soak --json``): ``_start`` is sampled when the first
10% of the batches are done, ``_end`` is the largest sample over the last 10% (disk, RSS);
``batch_ms_p50_start`` is the median ``foreachBatch`` wall time of the second 10% of batches
(the first 10% warm up), ``batch_ms_p50_end`` that of the last 10%. ``lost`` / ``duplicated``
are read back from the Parquet table with Spark after the query stopped: every value below
the committed input must appear under exactly one transaction, and every transaction once.
"""

from __future__ import annotations

import functools
import math
import os
import statistics
import time
from dataclasses import asdict, dataclass, replace
from typing import Any, Callable

from spec.fries.dataflow import dataflow
from spark_impl.reconfig.model import (
    GeneratedSource, Job, ListSource, Request, Timing, UserOperator, user_job, user_update,
)
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.sinks import ParquetSink, deliver
from spark_impl.reconfig.streaming import start_query
from spark_impl.workloads.footprint import disk_bytes, tree_rss_bytes

LONG_RUNNING_CONF = {
    # Spark's driver keeps per-job/stage/task/SQL-execution records for its status store (also
    # with the UI off); the defaults (1000 jobs, 100000 tasks, 1000 executions) take hours of
    # micro-batches to fill, so memory grows for hours before it is flat. A month-long driver
    # keeps fewer:
    "spark.ui.retainedJobs": "100",
    "spark.ui.retainedStages": "100",
    "spark.ui.retainedTasks": "2000",
    "spark.sql.ui.retainedExecutions": "20",
    # A heap sized by its live set, not by the machine's load. G1 (the default) sizes the heap
    # by its GC time, and on a loaded machine every pause looks long (the GC threads wait for
    # a CPU): in the first minutes of a soak at load 20 its committed heap moved between 300
    # and 600 MB around a live heap of 65 MB, and it returns memory only when it rarely
    # collects. The serial collector (what the JVM itself picks on a small machine) sizes the
    # old generation to the live set at each full collection (free between 10% and 30%), keeps
    # the young generation's size, and uses no GC threads.
    "spark.driver.extraJavaOptions": "-XX:+UseSerialGC -XX:MaxHeapFreeRatio=30 -XX:MinHeapFreeRatio=10",
}
"""Settings for a long-running driver (the soak's session; docs/spark.md, "Soak")."""

FLOW = dataflow([("S", "source"), ("M", "one-to-one"), ("T", "one-to-one")], [("S", "M"), ("M", "T")])


class Tagger:
    """``M`` at ``version``: count the key's tuples, emit ``[value, version]``."""

    def __init__(self, version: int) -> None:
        self.version = version

    def __call__(self, state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        return (state or 0) + 1, [(key, [value, self.version])]


def forward(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    """``T``: count and forward."""
    return (state or 0) + 1, [(key, value)]


def keep(state: Any) -> Any:
    """The state transformation of every request: keep the count."""
    return state


def soak_job() -> Job:
    """The job (its source is replaced by the front end's input log)."""
    return user_job(FLOW, {"M": UserOperator(FLOW.kind("M"), Tagger(0)), "T": UserOperator(FLOW.kind("T"), forward)},
                    ListSource(()), parallelism={"M": 2})


def event(keys: int, index: int) -> tuple[Any, Any]:
    """Tuple ``index`` of :func:`generated_job`: key ``k<index mod keys>``, value ``index``."""
    return f"k{index % keys}", index


def generated_job(tuples: int, batch_size: int, keys: int = 7) -> Job:
    """The same pipeline over a finite generated source (tests of the executor on its own)."""
    return replace(soak_job(), source=GeneratedSource("S", tuples, functools.partial(event, keys)),
                   timing=Timing(batch_size=batch_size))


def swap(version: int) -> Request:
    """The request that makes ``M`` emit ``version``."""
    return Request({"M": user_update(FLOW, "M", Tagger(version), keep)})


@dataclass(frozen=True)
class SoakResult:
    """The figures of one soak run (module docstring); ``requests``: reconfigurations made."""

    batches: int
    disk_bytes_start: int
    disk_bytes_end: int
    rss_bytes_start: int
    rss_bytes_end: int
    batch_ms_p50_start: float
    batch_ms_p50_end: float
    lost: int
    duplicated: int
    requests: int

    def contract(self) -> dict[str, Any]:
        """The JSON object ``streamproof soak --json`` prints (exactly these keys)."""
        raw = asdict(self)
        del raw["requests"]
        return raw


def _median(values: list[float]) -> float:
    return round(statistics.median(values), 1) if values else 0.0


class BatchTimes:
    """Every Structured Streaming batch's ``foreachBatch`` time (ms) below ``limit``, copied
    from the front end's ``batch_ms`` as batches finish. That map keeps only the last
    ``spark_impl.reconfig.streaming.REMEMBERED`` (1000) batches, so a longer soak keeps its own
    copy (counting that map's entries, a 2,000-batch soak never got past 1000 batches)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.ms: dict[int, float] = {}

    def poll(self, table: dict[int, float]) -> int:
        """Copy the new entries of ``table``; the number of batches seen so far."""
        for batch, ms in dict(table).items():
            if batch < self.limit:
                self.ms.setdefault(batch, ms)
        return len(self.ms)

    def durations(self) -> list[float]:
        """The times in batch order."""
        return [self.ms[b] for b in sorted(self.ms)]


@dataclass
class Measured:
    """What :func:`measure` saw: ``start`` = (disk, RSS) after the first 10% of the batches,
    ``end`` = the samples over the last 10%, every batch's time, the requests made."""

    start: tuple[int, int]
    end: list[tuple[int, int]]
    durations: list[float]
    requests: int


def measure(run: Any, batches: int, ckpt: str, *, every: int, request: Callable[[int], Any],
            stall_s: float = 900.0, on_batch: Callable[[int], None] | None = None,
            sample: Callable[[], tuple[int, int]] | None = None) -> Measured:
    """Watch a running query until ``batches`` batches are done (``run``: a front end's run
    with ``query``, ``batch_ms``, ``in_progress()`` and ``submit``), sampling disk and RSS and
    making ``request(version)`` every ``every`` batches while no request is in progress.
    RuntimeError if the query fails or no batch finishes for ``stall_s`` seconds."""
    def footprint() -> tuple[int, int]:
        return (disk_bytes(ckpt), tree_rss_bytes())

    sample = sample or footprint
    window = max(1, math.ceil(batches * 0.1))
    times = BatchTimes(batches)
    start: tuple[int, int] | None = None
    end: list[tuple[int, int]] = []
    version = 0
    seen = 0
    last_progress = time.monotonic()
    while seen < batches:
        if run.query.exception() is not None:
            raise RuntimeError(f"the soak query failed: {run.query.exception()}")
        done = times.poll(run.batch_ms)
        if done == seen:
            if time.monotonic() - last_progress > stall_s:
                raise RuntimeError(f"no batch finished for {stall_s:.0f} s (at batch {seen} of {batches})")
            time.sleep(0.02)
            continue
        seen, last_progress = done, time.monotonic()
        if on_batch is not None:
            on_batch(seen)
        if start is None and seen >= window:
            start = sample()
        if seen > batches - window:
            end.append(sample())
        if seen // every > version and not run.in_progress() and seen < batches:
            if run.submit(request(version + 1)) is None:
                version += 1
    assert start is not None and end
    return Measured(start, end, times.durations(), version)


def rate_stream(spark: Any, rows_per_batch: int, keys: int) -> Any:
    """Spark's ``rate-micro-batch`` source as ``key`` (``k<value mod keys>``), ``value``."""
    from pyspark.sql import functions as F

    return (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
            .option("numPartitions", 2).load()
            .select(F.concat(F.lit("k"), (F.col("value") % keys).cast("string")).alias("key"), "value"))


def run_soak(spark: Any, batches: int, directory: str, *, rows_per_batch: int = 200, keys: int = 50,
             every: int = 5, scheduler: str = "fries", stall_s: float = 900.0,
             on_batch: Callable[[int], None] | None = None) -> SoakResult:
    """Run the soak for ``batches`` Structured Streaming batches under ``directory``
    (``ckpt/``: the measured checkpoint; ``table/``: the Parquet sink)."""
    # Structured Streaming keeps the metadata of this many batches in its own checkpoint
    # (offsets/, commits/; Spark's default is 100): bounded either way, 10 keeps it small.
    spark.conf.set("spark.sql.streaming.minBatchesToRetain", "10")
    ckpt, table = os.path.join(directory, "ckpt"), os.path.join(directory, "table")
    sink = ParquetSink(table)
    run = start_query(spark, soak_job(), rate_stream(spark, rows_per_batch, keys), scheduler=scheduler,
                      checkpoint_dir=ckpt, sink=sink, retention=Retention(batches=2))
    try:
        seen = measure(run, batches, ckpt, every=every, request=swap, stall_s=stall_s, on_batch=on_batch)
    finally:
        run.stop()
    deliver(run.executor, sink)  # what a restart does first: committed batches reach the sink
    lost, duplicated = check_table(spark, table, run.executor.state[0].committed.offset)
    return summarize(batches, seen, lost, duplicated)


def summarize(batches: int, seen: Measured, lost: int, duplicated: int) -> SoakResult:
    """The contract's figures (module docstring) from what :func:`measure` saw."""
    window = max(1, math.ceil(batches * 0.1))
    durations = seen.durations
    return SoakResult(
        batches, seen.start[0], max(d for d, _ in seen.end), seen.start[1], max(r for _, r in seen.end),
        _median(durations[window:2 * window]), _median(durations[-window:]), lost, duplicated, seen.requests)


def check_table(spark: Any, table: str, committed: int) -> tuple[int, int]:
    """(lost, duplicated) in the Parquet table of a run whose first ``committed`` input tuples
    were committed (values ``0 .. committed-1`` of the rate source)."""
    from pyspark.sql import functions as F

    df = spark.read.parquet(table).select("txn", F.from_json("value", "array<long>")[0].alias("v"))
    row = df.agg(F.count(F.lit(1)).alias("rows"), F.countDistinct("txn").alias("txns"),
                 F.countDistinct("v").alias("values"),
                 F.countDistinct(F.when(F.col("v") < committed, F.col("v"))).alias("inside")).collect()[0]
    rows, txns, values, inside = (int(row[name]) for name in ("rows", "txns", "values", "inside"))
    # every committed input value must be there; a transaction twice, or one input value under
    # two transactions (the input log repeating a row), is a duplicate
    lost = committed - inside
    duplicated = (rows - txns) + (txns - values)
    return lost, duplicated
