"""Real sinks, exactly once: committed outputs delivered to a Parquet table (Spark's own
writer) or to a ``foreachBatch``-style callback, idempotent by batch id.

After every micro-batch the executor delivers, per job, the batches committed since the last
delivery (Fries §7.3: only committed batches are visible) as one DataFrame with columns
``job int, batch long, operator string, txn string, key, value``; ``batch`` is the delivery's
*batch id*: the last committed executor batch it contains. Then it records the delivery in
``sink.json``. A crash between the write and that record makes a restarted executor deliver
the same batches again under the same batch id (committed task files never change, and the
group is "everything committed after the recorded delivery", which the crash did not extend):

* :class:`ParquetSink` writes the delivery to the partition ``job=<s>/batch=<id>`` of a
  Parquet table with dynamic partition overwrite, so a repeated delivery *replaces* its
  partition: nothing is written twice. Read it with ``spark.read.parquet(path)``.
* :class:`CallbackSink` calls ``function(df, batch_id)``, like Structured Streaming's
  ``foreachBatch``: the function must be idempotent by ``batch_id`` (e.g. skip an id it has
  seen), which is the same contract Spark gives.

The rows are read from the task files by Spark tasks (the driver ships file names, never
data). Keys and values of any type: a ``"string"`` column holds every value losslessly in
layout :data:`~spark_impl.result_values.VALUES_FORMAT` of :mod:`spark_impl.result_values` (a
string that is not JSON text as is, anything else as the JSON text of its typed encoding; the
column is marked with that layout version in its field metadata, which Spark's Parquet writer
keeps in every file; :func:`spark_impl.readers.read_result_rows` with ``decode=True`` or
:func:`spark_impl.result_values.from_text` read it back); ``"long"``, ``"double"`` and
``"boolean"`` columns convert (lossy by the user's choice of column type). An output such a
column cannot hold (a string or a tuple in a ``long`` column) fails the delivery with one line
naming the column, the output and where it came from (job, batch id, operator, transaction,
key): :mod:`spark_impl.sink_misfit`, an :class:`~spec.errors.InputError` located at ``sink``;
nothing of the delivery is written or recorded, so a restart with a sink whose columns hold
the outputs delivers those batches, once.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Iterator, Protocol, Sequence

from spec.errors import InputError
from spark_impl.reconfig.progress import Progress
from spark_impl.reconfig.storage import read_task_file, task_path
from spark_impl.records import read_json_record, write_json_record
from spark_impl.result_values import FORMAT_KEY, VALUES_FORMAT, to_text
from spark_impl.sink_misfit import LONG_RANGE, delivering, fitted, shown
from spark_impl.store import open_store

COLUMN_TYPES = ("string", "long", "double", "boolean")


def column_converter(kind: str, quote_strings: bool = False) -> Callable[[Any], Any]:
    """The conversion of a key or value into a sink column of type ``kind`` (one of
    :data:`COLUMN_TYPES`; the module docstring): None stays None; a ``"string"`` column gets
    :func:`spark_impl.result_values.to_text` (``quote_strings``: every string quoted, the DGS
    sink's convention). A value the column cannot hold raises ``TypeError``, ``ValueError`` or
    ``OverflowError`` (a ``long`` beyond 64 bits too: Spark's and Arrow's ``long`` is 64 bits)."""
    if kind == "long":
        return _long
    if kind == "double":
        return lambda v: None if v is None else float(v)
    if kind == "boolean":
        return lambda v: None if v is None else bool(v)
    return lambda v: to_text(v, quote_strings)


def mark_values(df: Any, columns: Sequence[str], kinds: Sequence[str]) -> Any:
    """``df`` with each ``"string"`` column of ``columns`` (of types ``kinds``) marked with
    the layout version of its text (field metadata ``{FORMAT_KEY: VALUES_FORMAT}``), so a
    reader tells this layout from the unmarked first one per file. A stand-in DataFrame
    without column metadata (no ``withMetadata``: an in-memory test double) is returned as is."""
    if getattr(df, "withMetadata", None) is None:
        return df
    for column, kind in zip(columns, kinds):
        if kind == "string":
            df = df.withMetadata(column, {FORMAT_KEY: VALUES_FORMAT})
    return df


def _long(value: Any) -> int | None:
    if value is None:
        return None
    number = int(value)
    if not LONG_RANGE[0] <= number <= LONG_RANGE[1]:
        raise OverflowError(f"{number} is out of a long's range")
    return number


_convert = column_converter  # the name this module's calls use


class Sink(Protocol):
    """Receives each job's newly committed outputs (see the module docstring)."""

    @property
    def key_type(self) -> str:
        """Column type of ``key`` (one of :data:`COLUMN_TYPES`)."""
        ...

    @property
    def value_type(self) -> str:
        """Column type of ``value``."""
        ...

    def deliver(self, df: Any, batch_id: int) -> None:
        """Write ``df`` idempotently under ``batch_id``."""
        ...


@dataclass(frozen=True)
class ParquetSink:
    """A Parquet table partitioned by ``job`` and ``batch`` (module docstring)."""

    path: str
    key_type: str = "string"
    value_type: str = "string"

    def __post_init__(self) -> None:
        check_types(self.key_type, self.value_type)

    def deliver(self, df: Any, batch_id: int) -> None:
        """Overwrite exactly this delivery's partition (idempotent by batch id)."""
        (df.write.mode("overwrite").option("partitionOverwriteMode", "dynamic")
         .partitionBy("job", "batch").parquet(self.path))


@dataclass(frozen=True)
class CallbackSink:
    """``function(df, batch_id)`` for any other sink; it must be idempotent by batch id."""

    function: Callable[[Any, int], None]
    key_type: str = "string"
    value_type: str = "string"

    def __post_init__(self) -> None:
        check_types(self.key_type, self.value_type)

    def deliver(self, df: Any, batch_id: int) -> None:
        """Call the user's function."""
        self.function(df, batch_id)


def check_types(*kinds: str) -> None:
    """Refuse a column type not in :data:`COLUMN_TYPES` (bad input)."""
    for kind in kinds:
        if kind not in COLUMN_TYPES:
            raise InputError(f"unknown sink column type {kind!r} (expected one of {', '.join(COLUMN_TYPES)})")


SINK_STATE = "sink.json"  # framed and checksummed (spark_impl.records), on the checkpoint's store


def read_delivered(directory: str) -> dict[int, int]:
    """Job -> the last batch delivered to the sink (absent: none)."""
    raw = read_json_record(open_store(directory), SINK_STATE)
    return {} if raw is None else {int(s): int(g) for s, g in raw["delivered"].items()}


def _rows(directory: str, depth: int, partitions: int, s: int, batch_id: int, key_type: str,
          value_type: str, counter: Any = None) -> Callable[[Any], Iterator[tuple[Any, ...]]]:
    key_of, value_of = _convert(key_type), _convert(value_type)

    def row(op: str, txn: str, key: Any, value: Any) -> tuple[Any, ...]:
        def where() -> str:
            return f"job {s}, batch {batch_id}, operator {op!r}, txn {txn!r}, key {shown(key)}"

        return (s, batch_id, op, txn, fitted(key_of, "key", key_type, key, where),
                fitted(value_of, "value", value_type, value, where))

    def rows(g: int) -> Iterator[tuple[Any, ...]]:
        n = 0
        for level in range(1, depth + 1):
            for part in range(partitions):
                content = read_task_file(task_path(directory, g, level, part))
                if content is None:
                    continue
                for js, op, txn, key, value in content.outputs:
                    if js == s:
                        n += 1
                        yield row(op, txn, key, value)
        if counter is not None:
            counter.add(n)

    return rows


class DeliveredJob(Protocol):
    """What the delivery reads of one job's progress in the executor."""

    @property
    def committed(self) -> Progress:
        """The job's progress as of the last commit."""
        ...


class DeliveringExecutor(Protocol):
    """What :func:`deliver` reads of the executor (:class:`spark_impl.reconfig.driver.Executor`,
    which calls it after every commit)."""

    @property
    def directory(self) -> str:
        """The checkpoint's location."""
        ...

    @property
    def state(self) -> Sequence[DeliveredJob]:
        """Per job, its progress."""
        ...

    @property
    def output_counter(self) -> Any:
        """A Spark accumulator counting the rows delivered, or None."""
        ...

    @property
    def depth(self) -> int:
        """The number of operator levels of the deepest job."""
        ...

    @property
    def partitions(self) -> int:
        """The number of Spark partitions per stage."""
        ...

    @property
    def sc(self) -> Any:
        """The SparkContext."""
        ...

    @property
    def spark(self) -> Any:
        """The SparkSession."""
        ...


def deliver(ex: DeliveringExecutor, sink: Sink) -> dict[int, int]:
    """Deliver every job's committed, not yet delivered batches; return the delivered marks."""
    delivered = read_delivered(ex.directory)
    changed = False
    for s, st in enumerate(ex.state):
        fresh = [g for g in st.committed.history if g > delivered.get(s, -1)]
        if not fresh:
            continue
        batch_id = fresh[-1]
        schema = (f"job int, batch long, operator string, txn string, key {sink.key_type}, "
                  f"value {sink.value_type}")
        rdd = ex.sc.parallelize(fresh, max(1, min(len(fresh), ex.partitions))).flatMap(
            _rows(ex.directory, ex.depth, ex.partitions, s, batch_id, sink.key_type, sink.value_type,
                  ex.output_counter))
        df = mark_values(ex.spark.createDataFrame(rdd, schema), ("key", "value"), (sink.key_type, sink.value_type))
        with delivering():  # an output a column cannot hold: one line, nothing recorded
            sink.deliver(df, batch_id)
        delivered[s] = batch_id
        changed = True
    if changed:
        write_json_record(open_store(ex.directory), SINK_STATE, {"delivered": {str(s): g for s, g in delivered.items()}})
    return delivered
