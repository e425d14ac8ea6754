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
``value_type`` and the offending output (:func:`misfit`), an :class:`~spec.errors.InputError`
located at ``sink``; nothing of the batch is delivered or marked delivered.
"""

from __future__ import annotations

import re
from typing import Any, Callable, Iterator

from spec.errors import InputError

from spark_impl.oplus.streaming_log import Log, load_part
from spark_impl.reconfig.sinks import Sink, column_converter, mark_values

_MISFIT = re.compile(r"the sink's (?:key|value)_type '\w+' cannot hold .*")


def misfit(column: str, kind: str, value: Any, job: int, ts: int, key: Any) -> InputError:
    """The one-line error of an output the sink's ``<column>_type`` ``kind`` cannot hold."""
    shown = repr(value) if len(repr(value)) <= 80 else repr(value)[:77] + "..."
    return InputError(f"the sink's {column}_type {kind!r} cannot hold the {column} {shown} (job {job}, ts {ts}, "
                      f"key {key!r}): give the sink {column}_type='string', which holds every value", "sink")


def _rows(location: str, batch: int, key_type: str, value_type: str) -> Callable[[int], Iterator[tuple[Any, ...]]]:
    key_of, value_of = column_converter(key_type), column_converter(value_type)

    def rows(index: int) -> Iterator[tuple[Any, ...]]:
        for job, ts, key, value in load_part(location, "out", batch, index) or []:
            try:
                converted_key = key_of(key)
            except (TypeError, ValueError, OverflowError):
                raise misfit("key", key_type, key, job, int(ts), key) from None
            try:
                converted_value = value_of(value)
            except (TypeError, ValueError, OverflowError):
                raise misfit("value", value_type, value, job, int(ts), key) from None
            yield job, batch, index, int(ts), converted_key, converted_value

    return rows


def _one_line(error: Exception) -> InputError | None:
    """The :func:`misfit` line inside ``error`` (raised in a Spark task, so wrapped in Spark's
    multi-line ``PythonException``), as an InputError of its own; None for any other error."""
    found = _MISFIT.search(str(error))
    return None if found is None else InputError(found.group(0), "sink")


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
            try:
                sink.deliver(mark_values(spark.createDataFrame(rdd, schema), ("key", "value"),
                                         (sink.key_type, sink.value_type)), batch)
            except Exception as error:
                line = _one_line(error)
                if line is None:
                    raise
                raise line from None
        if before_mark is not None:
            before_mark(batch)
        log.mark_delivered(batch)
        done.append(batch)
    return done
