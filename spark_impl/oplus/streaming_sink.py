"""Exactly-once delivery of a live O+ query's committed outputs to a real sink.

The sinks are those of the Fries front end (:mod:`spark_impl.reconfig.sinks`):
:class:`~spark_impl.reconfig.sinks.ParquetSink` (Spark's writer, dynamic partition overwrite
of ``job=<j>/batch=<b>``) or :class:`~spark_impl.reconfig.sinks.CallbackSink`
(``foreachBatch``-style ``function(df, batch_id)``, idempotent by batch id). Each committed
micro-batch ``b`` with outputs is delivered as one DataFrame with columns
``job int, batch long, instance int, ts long, key, value`` (``instance``: the O+ instance that
emitted the row) under batch id ``b``; then a ``delivered`` record
(:meth:`~spark_impl.oplus.streaming_log.Log.mark_delivered`) records it. A crash between the two makes the next batch (or a restart) deliver ``b`` again,
with the same rows (the commit's output files never change) and the same id, so the Parquet
partition is *replaced*: nothing is written twice. Keys and values: a ``string`` column holds
them losslessly (:mod:`spark_impl.result_values`: a string that is not JSON text as is,
anything else - a tuple key, a ScaleJoin match, bytes, a Decimal - as the JSON text of its
typed encoding; the column marked with the layout version). A ``long``, ``double`` or
``boolean`` column that cannot hold an output (a tuple value in a ``long`` column, a string key
in a ``long`` column) fails the delivery with one line naming the sink's ``key_type`` or
``value_type`` and the offending output (:func:`spark_impl.sink_misfit.misfit`: job, event
time and key), an :class:`~spec.errors.InputError` located at ``sink``; nothing of the batch is
delivered or marked delivered.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from spark_impl.oplus.streaming_log import Log, load_part
from spark_impl.reconfig.sinks import Sink, column_converter, mark_values
from spark_impl.sink_misfit import delivering, fitted, shown


def _rows(location: str, batch: int, key_type: str, value_type: str) -> Callable[[int], Iterator[tuple[Any, ...]]]:
    key_of, value_of = column_converter(key_type), column_converter(value_type)

    def row(index: int, job: int, ts: Any, key: Any, value: Any) -> tuple[Any, ...]:
        def where() -> str:
            return f"job {job}, ts {int(ts)}, key {shown(key)}"

        return (job, batch, index, int(ts), fitted(key_of, "key", key_type, key, where),
                fitted(value_of, "value", value_type, value, where))

    def rows(index: int) -> Iterator[tuple[Any, ...]]:
        for job, ts, key, value in load_part(location, "out", batch, index) or []:
            yield row(index, job, ts, key, value)

    return rows


def deliver_pending(spark: Any, log: Log, sink: Sink, before_mark: Callable[[int], None] | None = None) -> list[int]:
    """Deliver every committed batch after the last delivered one, in order; the batch ids
    delivered (``before_mark(b)`` runs between the sink's write and the record: a test hook)."""
    delivered = log.delivered()
    done: list[int] = []
    for batch in log.committed():
        if batch <= delivered:
            continue
        record = log.commit(batch)
        if record.outputs:
            schema = f"job int, batch long, instance int, ts long, key {sink.key_type}, value {sink.value_type}"
            rdd = spark.sparkContext.parallelize(range(record.partitions), max(1, min(record.partitions, 4))).flatMap(
                _rows(log.location, batch, sink.key_type, sink.value_type))
            with delivering():  # an output a column cannot hold: one line, nothing marked delivered
                sink.deliver(mark_values(spark.createDataFrame(rdd, schema), ("key", "value"),
                                         (sink.key_type, sink.value_type)), batch)
        if before_mark is not None:
            before_mark(batch)
        log.mark_delivered(batch)
        done.append(batch)
    return done
