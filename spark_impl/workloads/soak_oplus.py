"""The soak through the O+ live front end (``streamproof soak --front-end oplus``): a steady
stream through :func:`spark_impl.oplus.streaming.start_oplus_query`, rescaled every few
batches while it runs, with its bounded checkpoint and an exactly-once Parquet sink; the same
figures as :mod:`spark_impl.workloads.soak` (whose measuring loop it shares).

Input: Spark's ``rate-micro-batch`` source, ``rows`` rows per batch, values 0, 1, 2, ... with
no gap, as tuples ``ts = value``, ``key = "k<value mod keys>"``, ``value``. The job is
``sliding-sum`` with ``WA = rows``, ``WS = 2 * rows`` (WT single, 2 instances), so windows
close every batch. Every ``every`` batches the driver requests a rescale (2 -> 3 -> 2 ...) at
the next batch boundary, while the query runs.

``lost`` / ``duplicated`` (read back from the Parquet table after the query stopped): the
sequential semantics of the committed input, values ``0 .. n - 1`` (:func:`expected_windows`):
every window ``[l * WA, l * WA + WS)`` with ``l * WA + WS <= W`` (``W = n - 1``, the final
watermark) and a tuple of the key must be there once with its sum; a missing row or a wrong
sum is lost, a row more than once (or one no window explains) is duplicated.
"""

from __future__ import annotations

import os
from collections import Counter
from typing import Any, Callable

from spark_impl.oplus.streaming import OplusStreamingRun, start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.reconfig.sinks import ParquetSink
from spark_impl.workloads.soak import SoakResult, measure, summarize

SIZES = (2, 3)
"""The parallelism the soak alternates between (it starts at the first)."""


class Rescales:
    """A live O+ query as :func:`spark_impl.workloads.soak.measure` drives it: ``submit(p)``
    requests a rescale to ``p``; one is in progress until a commit applied it."""

    def __init__(self, run: OplusStreamingRun) -> None:
        self.run = run
        self.query = run.query
        self.batch_ms = run.batch_ms
        self.requested: list[int] = []

    def in_progress(self) -> bool:
        status = self.run.status()  # every request is for job 0, applied in id order
        return (status.rescaled.get(0, 0) if status is not None else 0) < len(self.requested)

    def submit(self, parallelism: int) -> None:
        self.requested.append(self.run.rescale(parallelism))


def rate_tuples(spark: Any, rows_per_batch: int, keys: int) -> Any:
    """``rate-micro-batch`` as O+ tuples (module docstring)."""
    from pyspark.sql import functions as F

    return (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
            .option("numPartitions", 2).load()
            .select(F.col("value").alias("ts"),
                    F.concat(F.lit("k"), (F.col("value") % keys).cast("string")).alias("key"), "value"))


def expected_windows(n: int, keys: int, wa: int, ws: int) -> Counter[tuple[int, str, int]]:
    """``(window end, key, sum)`` of every window closed by watermark ``n - 1`` over the
    tuples ``(ts = v, key = "k<v mod keys>", value = v)`` for ``v < n``."""
    sums: dict[tuple[int, str], int] = {}
    for v in range(n):
        for l in range((v - ws) // wa + 1, v // wa + 1):  # the windows [l*wa, l*wa + ws) holding v
            end = l * wa + ws
            if end <= n - 1:
                key = (end, f"k{v % keys}")
                sums[key] = sums.get(key, 0) + v
    return Counter((end, key, total) for (end, key), total in sums.items())


def check_windows(rows: list[tuple[int, str, int]], n: int, keys: int, wa: int, ws: int) -> tuple[int, int]:
    """(lost, duplicated) of the delivered ``(window end, key, sum)`` rows (module docstring)."""
    want = expected_windows(n, keys, wa, ws)
    got = Counter(rows)
    lost = sum((want - got).values())
    duplicated = sum((got - want).values())
    return lost, duplicated


def run_oplus_soak(spark: Any, batches: int, directory: str, *, rows_per_batch: int = 200, keys: int = 50,
                   every: int = 5, stall_s: float = 900.0,
                   on_batch: Callable[[int], None] | None = None) -> SoakResult:
    """Run the O+ soak for ``batches`` Structured Streaming batches under ``directory``."""
    spark.conf.set("spark.sql.streaming.minBatchesToRetain", "10")
    ckpt, table = os.path.join(directory, "ckpt"), os.path.join(directory, "table")
    wa, ws = rows_per_batch, 2 * rows_per_batch
    job = oplus_job("sliding-sum", wa, ws, WT="single", parallelism=SIZES[0])
    run = start_oplus_query(spark, rate_tuples(spark, rows_per_batch, keys), [job], checkpoint_dir=ckpt,
                            sink=ParquetSink(table, key_type="string", value_type="long"))
    driven = Rescales(run)
    try:
        seen = measure(driven, batches, ckpt, every=every, request=lambda v: SIZES[v % len(SIZES)],
                       stall_s=stall_s, on_batch=on_batch)
    finally:
        run.stop()
    status = run.status()
    assert status is not None
    n = (status.batch + 1) * rows_per_batch  # the committed input: whole rate batches
    rows = [(int(r["ts"]), str(r["key"]), int(r["value"]))
            for r in spark.read.parquet(table).select("ts", "key", "value").collect()]
    lost, duplicated = check_windows(rows, n, keys, wa, ws)
    return summarize(batches, seen, lost, duplicated)
