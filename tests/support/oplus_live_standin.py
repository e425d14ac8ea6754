"""A live O+ query started for real (:func:`spark_impl.oplus.streaming.start_oplus_query`) on the
pure-Python Spark stand-in (:class:`conformance.standin.spark.LocalSpark`) and a stand-in stream
(:class:`conformance.standin.streaming.Stream`), its ``foreachBatch`` handler called batch by
batch with micro-batches of ``pyspark.sql.Row`` rows, as Structured Streaming would call it; the
sink collects what it is given per batch id. No SparkSession, no query thread.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from pyspark.sql import Row  # a Row needs no SparkSession

from spark_impl.oplus.streaming import OplusStreamingRun, start_oplus_query
from spark_impl.reconfig.sinks import CallbackSink

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import MicroBatch, Stream

COLUMNS = ("job", "source", "seq", "ts", "watermark", "end", "key", "value")
"""The stream's columns (docs/spark.md, "Stream rows")."""

Item = dict[str, Any]


class Batch(MicroBatch):
    """One micro-batch DataFrame: :data:`COLUMNS` and ``rdd`` over ``Row`` s (2 partitions)."""

    columns = list(COLUMNS)


def rows(items: Sequence[Item]) -> list[Any]:
    """Stream rows with the fields of ``items`` (None for the others)."""
    row = Row(*COLUMNS)
    return [row(*(item.get(c) for c in COLUMNS)) for item in items]


@dataclass
class LiveQuery:
    """A started query, its handler and what its sink was given per batch id."""

    run: OplusStreamingRun
    handler: Any
    spark: LocalSpark
    delivered: dict[int, list[tuple[Any, ...]]] = field(default_factory=dict)

    def batch(self, batch_id: int, items: Sequence[Item]) -> None:
        """Structured Streaming calling ``foreachBatch`` with the micro-batch ``items``."""
        self.handler(Batch(self.spark, rows(items)), batch_id)


def start_local(jobs: Sequence[Any], checkpoint_dir: str, **options: Any) -> LiveQuery:
    """Start ``jobs`` on the stand-ins (integer keys and values: a ``long`` sink)."""
    spark = LocalSpark()
    delivered: dict[int, list[tuple[Any, ...]]] = {}
    sink = CallbackSink(lambda df, b: delivered.__setitem__(b, df.collect()), key_type="long", value_type="long")
    stream = Stream(columns=COLUMNS)
    run = start_oplus_query(spark, stream, list(jobs), checkpoint_dir=checkpoint_dir, sink=sink, **options)
    return LiveQuery(run, stream.writeStream.handler, spark, delivered)
