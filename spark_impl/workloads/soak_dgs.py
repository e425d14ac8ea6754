"""The soak through the DGS live front end (``streamproof soak --front-end dgs``): a steady
stream through :func:`spark_impl.dgs.streaming.start_dgs_query`, re-planned every few batches
while it runs, with its bounded checkpoint and an exactly-once Parquet sink; the same figures
as :mod:`spark_impl.workloads.soak` (whose measuring loop it shares).

Program: :class:`spark_impl.workloads.soak_dgs_program.SoakCounter` (a per-key counter whose
every event is an output ``[key, value, count]``), under the keyed plan of ``2`` leaves
(:func:`spark_impl.dgs.streaming_plan.keyed_plan`, string keys routed by a stable hash).
Input: Spark's ``rate-micro-batch`` source, ``rows`` rows per batch, values 0, 1, 2, ... with
no gap; value ``v`` is the item of stream ``s<v mod 2>`` at timestamp ``v + 1``: a heartbeat
when ``v mod 10 = 9``, else the event ``["n", "k<v mod keys>", v]`` (:func:`item`). Every
``every`` batches the driver re-plans the job to the other of 2 and 3 leaves
(:meth:`~spark_impl.dgs.streaming.DgsStreamingRun.replan`), while the query runs.

``lost`` / ``duplicated`` (read back from the Parquet table after the query stopped): the
sequential semantics of the committed input, values ``0 .. n - 1`` (``n`` = committed batches
x ``rows``), minus the events still waiting in the committed mailbox for a later item of the
other stream (:func:`expected_outputs`): each of a key's processed events must be there once,
with its position in the key's sequence as its count; a missing one is lost, one more than
once (or one no event explains, or with a wrong count) is duplicated.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any, Callable

from spec.dgs.loader import load_program
from spark_impl.dgs.streaming import DgsStreamingRun, LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.reconfig.sinks import ParquetSink
from spark_impl.workloads.soak import SoakResult, measure, summarize

PROGRAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "soak_dgs_program.py") + ":SoakCounter"
STREAMS = ("s0", "s1")
SIZES = (2, 3)
"""The leaves the soak's plans alternate between (it starts with the first)."""
HEARTBEAT = 10
"""Every this many values, one is a heartbeat."""


def item(value: int, keys: int) -> dict[str, Any]:
    """The JSON item of rate value ``value`` (module docstring)."""
    base: dict[str, Any] = {"stream": STREAMS[value % 2], "ts": value + 1}
    if value % HEARTBEAT == HEARTBEAT - 1:
        return {**base, "heartbeat": True}
    return {**base, "event": ["n", f"k{value % keys}", value]}


def item_column(keys: int) -> Any:
    """:func:`item` of column ``value`` as JSON text (a Spark column)."""
    from pyspark.sql import functions as F

    v = F.col("value")
    stream = (v % 2).cast("int")
    heartbeat = F.format_string('{"stream": "s%d", "ts": %d, "heartbeat": true}', stream, v + 1)
    event = F.format_string('{"stream": "s%d", "ts": %d, "event": ["n", "k%d", %d]}', stream, v + 1,
                            (v % keys).cast("int"), v)
    return F.when(v % HEARTBEAT == HEARTBEAT - 1, heartbeat).otherwise(event)


def rate_items(spark: Any, rows_per_batch: int, keys: int) -> Any:
    """``rate-micro-batch`` as one JSON item per row in column ``item`` (:func:`item`)."""
    return (spark.readStream.format("rate-micro-batch").option("rowsPerBatch", rows_per_batch)
            .option("numPartitions", 2).load().select(item_column(keys).alias("item")))


class Replans:
    """A live DGS query as :func:`spark_impl.workloads.soak.measure` drives it: ``submit(n)``
    re-plans the job to ``n`` leaves; one is in progress until a batch applied it."""

    def __init__(self, run: DgsStreamingRun) -> None:
        self.run = run
        self.query = run.query
        self.batch_ms = run.batch_ms

    def in_progress(self) -> bool:
        with self.run.lock:
            return bool(self.run.pending)

    def submit(self, leaves: int) -> None:
        self.run.replan(keyed_plan(self.run.programs[0], STREAMS, leaves))


def expected_outputs(n: int, keys: int, waiting: set[int]) -> Counter[tuple[str, int, int]]:
    """``(key, value, count)`` of every event among values ``0 .. n - 1`` but the ``waiting``
    ones, counted per key in value order (module docstring)."""
    counts: dict[str, int] = {}
    want: Counter[tuple[str, int, int]] = Counter()
    for value in range(n):
        if value % HEARTBEAT == HEARTBEAT - 1 or value in waiting:
            continue
        key = f"k{value % keys}"
        counts[key] = counts.get(key, 0) + 1
        want[(key, value, counts[key])] += 1
    return want


def check_outputs(rows: list[tuple[str, int, int]], n: int, keys: int, waiting: set[int]) -> tuple[int, int]:
    """(lost, duplicated) of the delivered ``(key, value, count)`` rows (module docstring)."""
    want = expected_outputs(n, keys, waiting)
    got = Counter(rows)
    return sum((want - got).values()), sum((got - want).values())


def run_dgs_soak(spark: Any, batches: int, directory: str, *, rows_per_batch: int = 200, keys: int = 50,
                 every: int = 5, stall_s: float = 900.0,
                 on_batch: Callable[[int], None] | None = None) -> SoakResult:
    """Run the DGS soak for ``batches`` Structured Streaming batches under ``directory``
    (``ckpt/``: the measured checkpoint, Structured Streaming's ``query/`` and the DGS
    ``dgs/``; ``table/``: the Parquet sink)."""

    spark.conf.set("spark.sql.streaming.minBatchesToRetain", "10")
    ckpt, table = os.path.join(directory, "ckpt"), os.path.join(directory, "table")
    plan = keyed_plan(load_program(PROGRAM), STREAMS, SIZES[0])
    run = start_dgs_query(spark, [LiveJob(PROGRAM, plan)], rate_items(spark, rows_per_batch, keys),
                          checkpoint_dir=ckpt, column="item", sink=ParquetSink(table))
    try:
        seen = measure(Replans(run), batches, ckpt, every=every, request=lambda v: SIZES[v % len(SIZES)],
                       stall_s=stall_s, on_batch=on_batch)
    finally:
        run.stop()
    commit = run.committed()
    n = (commit.batch + 1) * rows_per_batch  # the committed input: whole rate batches
    waiting = {int(e.payload[2]) for box in commit.mailboxes for e in box.buffered}
    rows = []
    for r in spark.read.parquet(table).select("value").collect():
        key, value, count = json.loads(r["value"])
        rows.append((str(key), int(value), int(count)))
    lost, duplicated = check_outputs(rows, n, keys, waiting)
    return summarize(batches, seen, lost, duplicated)
