"""Delivering a live DGS query's outputs to a real sink, exactly once.

The sinks are those of the Fries executor (:mod:`spark_impl.reconfig.sinks`: ``ParquetSink``,
``CallbackSink``; same protocol, same idempotence by batch id). A committed micro-batch ``b``'s
outputs are one DataFrame with columns ``job int, batch long, value <sink.value_type>`` (a
``string`` column holds every output as the JSON text of its typed encoding, strings quoted,
tuples as arrays, bytes, Decimals and datetimes as tagged objects:
:mod:`spark_impl.result_values`, ``quote_strings``; the column is marked with the layout
version, and ``from_text`` gives the output back exactly), delivered under
batch id ``b``; the Parquet table is partitioned by ``job`` and ``batch``, so a repeated
delivery replaces its partition. Tasks read the records files (the driver ships file names,
never data; the records location is a local path or a :mod:`spark_impl.store` URI, read
through the store). An output's order within a batch is not kept: DGS outputs are a multiset (Def. 3.4).
A ``long``, ``double`` or ``boolean`` column that cannot hold an output (a string or a tuple in
a ``long`` column) fails the delivery with one line naming ``value_type``, the output, its job
and batch (:mod:`spark_impl.sink_misfit`), an :class:`~spec.errors.InputError` located at
``sink``; nothing of the batch is delivered or recorded as delivered.
"""

from __future__ import annotations

from typing import Any, Callable, Iterator

from spark_impl.reconfig.sinks import Sink, column_converter, mark_values
from spark_impl.sink import read_part
from spark_impl.sink_misfit import delivering, fitted
from spark_impl.store import display, open_store


def _rows(directory: str, batch: int, value_type: str, counter: Any) -> Callable[[str], Iterator[tuple[int, int, Any]]]:
    value_of = column_converter(value_type, quote_strings=True)

    def fit(job: int, value: Any) -> Any:
        return fitted(value_of, "value", value_type, value, lambda: f"job {job}, batch {batch}")

    def rows(name: str) -> Iterator[tuple[int, int, Any]]:
        records = read_part(directory, name)
        if records is None:
            raise FileNotFoundError(f"missing DGS records file {display(directory)}/{name}")
        n = 0
        for job, kind, value in records:
            if kind == "out":
                n += 1
                yield job, batch, fit(job, value)
        if counter is not None:
            counter.add(n)
    return rows


def deliver_batch(spark: Any, records_dir: str, batch: int, sink: Sink, counter: Any = None) -> None:
    """Deliver micro-batch ``batch``'s outputs (module docstring); no call when no task of the
    batch processed an event. ``counter`` (a Spark accumulator, optional) counts the rows."""
    names = [n for n in open_store(records_dir).list() if n.endswith(".pkl")]
    if not names:
        return
    rows = spark.sparkContext.parallelize(names, min(len(names), 8)).flatMap(
        _rows(records_dir, batch, sink.value_type, counter))
    df = spark.createDataFrame(rows, f"job int, batch long, value {sink.value_type}")
    with delivering():  # an output the column cannot hold: one line, nothing recorded
        sink.deliver(mark_values(df, ("value",), (sink.value_type,)), batch)
