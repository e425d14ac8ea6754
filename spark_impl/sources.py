"""Streaming sources for the live front ends: Kafka records decoded into the columns a front
end reads, and a scripted stream of given micro-batches (docs/production/sources.md).

Every live front end (Fries ``start_query``, O+ ``start_oplus_query``, DGS
``start_dgs_query``) takes *any* streaming DataFrame with the columns it reads; Spark's Kafka
source gives binary ``key`` / ``value`` plus ``topic``, ``partition``, ``offset``,
``timestamp`` (and ``timestampType``). :func:`from_kafka` is the parsing step between the two:

    raw = spark.readStream.format("kafka").option("subscribe", "payments")...load()
    rows = from_kafka(raw, "amount long", key="user", event_time="ts")   # user, amount, ts
    run = start_oplus_query(spark, rows.withColumnRenamed("user", "key")
                            .withColumnRenamed("amount", "value"), [job], ...)

**Nothing is dropped or nulled silently.** A value that is not a JSON object of
``value_schema`` (not JSON, a field of the wrong type), a tombstone (null value), a null key
when ``key`` is asked for, or a message without a required field makes the query fail with one
line naming the topic, partition and offset (Spark's ``raise_error``, inside a filter Spark
cannot prune away however few columns the front end selects), instead of reaching a front end
as nulls. Fields listed in ``optional`` may be absent (null).

:func:`list_stream` is a non-file stream whose micro-batch ``i`` is the ``i``-th list of rows
given (PySpark has no ``MemoryStream``; this is a Python data source, Spark 4's
``pyspark.sql.datasource`` API): replayable, bounded, so ``processAllAvailable()`` returns -
for trying and testing a job on exact batches.

:func:`kafka_package` names the ``spark-sql-kafka-0-10`` artifact matching the installed
PySpark (the Kafka source is not part of PySpark's jars: ``spark-submit --packages`` or
``spark.jars.packages``).
"""

from __future__ import annotations

import glob
import json
import os
import re
from typing import Any, Iterable, Iterator, Sequence

from spec.errors import InputError

__all__ = ["KAFKA_COLUMNS", "LIST_STREAM", "from_kafka", "kafka_package", "list_stream"]

KAFKA_COLUMNS = ("key", "value", "topic", "partition", "offset", "timestamp")
"""The columns of Spark's Kafka source that :func:`from_kafka` reads (a Kafka-shaped
DataFrame has them; ``timestampType`` and ``headers`` may be there too and are ignored)."""

_BAD = "_streamproof_bad_record"
"""The corrupt-record column of the JSON parse (never in the result)."""


def kafka_package(spark_version: str | None = None, scala_version: str | None = None) -> str:
    """The Maven coordinate of Spark's Kafka source for ``spark-submit --packages`` or the
    ``spark.jars.packages`` setting, e.g. ``org.apache.spark:spark-sql-kafka-0-10_2.13:4.3.0``.

    It must match the Spark and Scala versions the job runs on (a mismatch fails at class
    loading), so the defaults are read from the installed PySpark: its version, and the Scala
    version of its ``spark-sql_<scala>-<version>.jar`` (Spark 4 is built for Scala 2.13 only,
    the fallback when the jars are not beside the package)."""
    if spark_version is None:
        import pyspark

        spark_version = str(pyspark.__version__)
    if scala_version is None:
        scala_version = _installed_scala() or ("2.13" if int(spark_version.split(".")[0]) >= 4 else "2.12")
    if not re.fullmatch(r"\d+\.\d+\.\d+\S*", spark_version):
        raise InputError(f"not a Spark version: {spark_version!r}", "spark_version")
    if not re.fullmatch(r"\d+\.\d+", scala_version):
        raise InputError(f"not a Scala binary version (like 2.13): {scala_version!r}", "scala_version")
    return f"org.apache.spark:spark-sql-kafka-0-10_{scala_version}:{spark_version}"


def _installed_scala() -> str | None:
    """The Scala binary version of the installed PySpark's jars, or None when absent."""
    try:
        import pyspark
    except ImportError:
        return None
    for path in glob.glob(os.path.join(os.path.dirname(pyspark.__file__), "jars", "spark-sql_*.jar")):
        found = re.match(r"spark-sql_(\d+\.\d+)-", os.path.basename(path))
        if found:
            return found.group(1)
    return None


def from_kafka(df: Any, value_schema: Any, *, key: str | None = None, event_time: str | None = None,
               keep: Iterable[str] = (), optional: Iterable[str] = (), options: dict[str, str] | None = None) -> Any:
    """Decode a Kafka-shaped DataFrame (streaming or not; columns :data:`KAFKA_COLUMNS`) into
    the typed columns a live front end reads.

    * ``value_schema``: the JSON object every message value holds, as a DDL string
      (``"amount long, note string"``) or a ``StructType``: its fields become columns with
      those types. ``None``: the value is kept as one UTF-8 text column ``value`` (the DGS
      front end reads JSON text items itself).
    * ``key``: the name of a column that receives the message key as UTF-8 text (None: the
      key is not used).
    * ``event_time``: the name of a column that receives the record's Kafka timestamp as a
      long in **milliseconds** since the epoch (the O+ ``ts`` or a DGS item's time; None: not
      used). An event time inside the value is simply a field of ``value_schema``.
    * ``keep``: Kafka columns passed through unchanged (e.g. ``("partition", "offset")``).
    * ``optional``: output columns that may be null (a field absent from the JSON, a null
      key); every other output column is required.
    * ``options``: extra options of Spark's ``from_json`` (e.g. ``timestampFormat``).

    The result has exactly the columns ``key``, the value's fields, ``event_time`` and
    ``keep``, in that order. A message that does not fit (module docstring) fails the query
    with a line naming its topic, partition and offset. InputError (at once, not in the
    query) when the DataFrame is not Kafka-shaped or a column name is used twice."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import StructType

    missing = [c for c in KAFKA_COLUMNS if c not in df.columns]
    if missing:
        raise InputError(f"not a Kafka-shaped DataFrame: no column(s) {missing} (columns: {df.columns})", "df")
    kept = list(keep)
    unknown = [c for c in kept if c not in df.columns]
    if unknown:
        raise InputError(f"cannot keep column(s) {unknown}: not in the DataFrame (columns: {df.columns})", "keep")
    text = F.col("value").cast("string")
    where = F.concat(F.lit("topic "), F.coalesce(F.col("topic").cast("string"), F.lit("?")),
                     F.lit(", partition "), F.coalesce(F.col("partition").cast("string"), F.lit("?")),
                     F.lit(", offset "), F.coalesce(F.col("offset").cast("string"), F.lit("?")), F.lit(": "))
    problems: list[tuple[Any, Any]] = [(F.col("value").isNull(), F.lit("the value is null (a tombstone)"))]
    if value_schema is None:
        fields: list[tuple[str, Any]] = [("value", text)]
    else:
        schema = StructType.fromDDL(value_schema) if isinstance(value_schema, str) else value_schema
        if not isinstance(schema, StructType):
            raise InputError(f"expected a DDL string or a StructType, got {type(value_schema).__name__}", "value_schema")
        if _BAD in schema.fieldNames():
            raise InputError(f"the field name {_BAD!r} is reserved", "value_schema")
        parse = dict(options or {}, mode="PERMISSIVE", columnNameOfCorruptRecord=_BAD)
        parsed = F.from_json(text, StructType(list(schema.fields)).add(_BAD, "string"), parse)
        problems.append((parsed[_BAD].isNotNull(),
                         F.concat(F.lit(f"the value is not a JSON object of schema <{schema.simpleString()}>: "),
                                  F.substring(text, 1, 200))))
        fields = [(name, parsed[name]) for name in schema.fieldNames()]
    if key is not None:
        fields.insert(0, (key, F.col("key").cast("string")))
    if event_time is not None:
        fields.append((event_time, F.unix_millis(F.col("timestamp"))))
    fields.extend((name, F.col(name)) for name in kept)
    names = [name for name, _ in fields]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise InputError(f"column name(s) {twice} used twice (key / value fields / event_time / keep)", "from_kafka")
    maybe_null = set(optional)
    strange = sorted(maybe_null - set(names))
    if strange:
        raise InputError(f"optional names {strange} are not result columns {names}", "optional")
    for name, column in fields:
        if name not in maybe_null and name not in kept:
            problems.append((column.isNull(), F.lit(f"no {name!r} (null or absent; list it in optional= to allow)")))
    verdict = F.lit(True)
    for condition, message in reversed(problems):
        verdict = F.when(condition, F.raise_error(F.concat(F.lit("from_kafka: "), where, message))).otherwise(verdict)
    return df.where(verdict).select(*[column.alias(name) for name, column in fields])


LIST_STREAM = "streamproof_list"
"""The format name :func:`list_stream` registers (``spark.readStream.format(LIST_STREAM)``)."""


def list_stream(spark: Any, schema: str, batches: Sequence[Sequence[Sequence[Any]]]) -> Any:
    """A streaming DataFrame of columns ``schema`` (DDL) whose micro-batch ``i`` holds exactly
    the rows ``batches[i]`` (each row a sequence of column values: JSON-able, arrays as lists,
    structs as dicts or lists), one listed batch per trigger; an empty list is an empty batch.

    Offsets are listed-batch numbers in Structured Streaming's checkpoint, so the stream is
    replayable: a query restarted on its checkpoint with the same list, or with more batches
    appended (as if more data arrived), continues after the last batch it committed. Once every
    listed batch is taken there is no new data and ``processAllAvailable()`` returns. The rows
    travel in the reader's options (JSON): meant for tests and trials, not for volume."""
    from pyspark.sql.types import StructType

    rows = [[list(row) for row in batch] for batch in batches]
    StructType.fromDDL(schema)  # a bad schema fails here, not in the query
    spark.dataSource.register(_list_stream_class())
    return (spark.readStream.format(LIST_STREAM).option("schema", schema)
            .option("batches", json.dumps(rows)).load())


def _list_stream_class() -> Any:
    """The Python data source behind :func:`list_stream` (defined here, not at module level, so
    that importing this module does not import pyspark; Spark ships it to its Python workers
    by value)."""
    from pyspark.sql.datasource import DataSource, DataSourceStreamReader, InputPartition

    class ListStreamReader(DataSourceStreamReader):
        """Offset ``{"batch": k}``: the first ``k`` listed batches were taken."""

        def __init__(self, batches: list[list[list[Any]]]) -> None:
            self.batches = batches

        def initialOffset(self) -> dict[str, int]:
            return {"batch": 0}

        def latestOffset(self, start: dict[str, int], limit: Any) -> dict[str, int]:
            return {"batch": min(int(start["batch"]) + 1, len(self.batches))}

        def partitions(self, start: dict[str, int], end: dict[str, int]) -> list[Any]:
            if int(start["batch"]) >= int(end["batch"]):
                return []
            return [InputPartition([int(start["batch"]), int(end["batch"])])]

        def read(self, partition: Any) -> Iterator[tuple[Any, ...]]:
            first, last = partition.value
            for number in range(first, last):
                for row in self.batches[number]:
                    yield tuple(row)

    class ListStream(DataSource):
        """``spark.readStream.format(LIST_STREAM).option("schema", ddl).option("batches", json)``."""

        @classmethod
        def name(cls) -> str:
            return LIST_STREAM

        def schema(self) -> str:
            return str(self.options["schema"])

        def streamReader(self, schema: Any) -> Any:
            return ListStreamReader(json.loads(self.options["batches"]))

    return ListStream
