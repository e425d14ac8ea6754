"""Reading the exactly-once result tables of the live front ends without a Spark session
(docs/production/operating.md, "Reading the results").

A :class:`~spark_impl.reconfig.sinks.ParquetSink` table (Fries, O+ and DGS alike) is Parquet
partitioned by ``job`` and ``batch`` (hive layout ``job=<j>/batch=<b>/``); a delivery replaces
its whole ``batch`` partition, so every row in the table is there exactly once. Spark's own
bookkeeping (``_SUCCESS``, ``_temporary``, ``.spark-staging-*`` of a delivery in progress) starts
with ``_`` or ``.`` and is never read: ``pyarrow.dataset`` skips those names. Reading a small
table takes about a second in a fresh process (pyarrow's import included) where starting a Spark
session to read it took 30 s (docs/production/operating.md gives the measurement).

The path is local or a :mod:`spark_impl.store` URI (``s3://...``), read with pyarrow's
filesystems.

``read_result_rows(path, decode=True)`` gives the ``string`` key and value columns back as the
Python values the user's functions returned (:mod:`spark_impl.result_values`), file by file by
the layout version each file's column is marked with: a file of the first, unmarked layout
keeps its text as is (its text cannot be told from JSON reliably).
"""

from __future__ import annotations

import json
import os
from typing import Any, Sequence

from spec.errors import InputError

from spark_impl.result_values import FORMAT_KEY, column_format, from_text
from spark_impl.store import display, is_uri, resolve

__all__ = ["read_result_rows", "read_result_table", "value_formats"]


def read_result_table(path: str, columns: Sequence[str] | None = None) -> Any:
    """The table at ``path`` as a ``pyarrow.Table`` (``columns``: only these; the partition
    columns ``job`` and ``batch`` included), rows ordered by ``batch`` then file order.
    InputError when ``path`` holds no table; an empty table when nothing was delivered yet
    (the directory exists but holds no Parquet file)."""
    dataset = _dataset(path)
    table = dataset.to_table(columns=list(columns) if columns is not None else None)
    if table.num_rows and "batch" in table.column_names:
        table = table.sort_by([("batch", "ascending")])
    return table


def _dataset(path: str) -> Any:
    import pyarrow as pa
    import pyarrow.dataset as pads

    if is_uri(path):
        filesystem, inner = resolve(path)
    else:
        filesystem, inner = None, os.path.abspath(path)
        if not os.path.isdir(inner):
            raise InputError(f"no result table at {path} (not a directory)", "path")
    try:
        return pads.dataset(inner, filesystem=filesystem, format="parquet", partitioning="hive")
    except (OSError, ValueError, pa.ArrowInvalid) as error:
        raise InputError(f"cannot read the result table at {display(path)}: {str(error).splitlines()[0]}",
                         "path") from None


_SPARK_SCHEMA = b"org.apache.spark.sql.parquet.row.metadata"


def value_formats(schema: Any) -> dict[str, int]:
    """Column -> layout version (:func:`spark_impl.result_values.column_format`) of the marked
    columns of one Parquet file's ``pyarrow.Schema``: the mark is read from the Arrow field
    metadata (pyarrow writers) or from the Spark schema Spark's writer stores in the file."""
    found: dict[str, int] = {}
    for field in schema:
        meta = {k.decode(): v.decode() for k, v in (field.metadata or {}).items()}
        if FORMAT_KEY in meta:
            found[field.name] = column_format(meta)
    spark_schema = (schema.metadata or {}).get(_SPARK_SCHEMA)
    if spark_schema is not None:
        for field in json.loads(spark_schema.decode("utf-8")).get("fields", []):
            if FORMAT_KEY in (field.get("metadata") or {}):
                found[str(field["name"])] = column_format(field["metadata"])
    return found


def read_result_rows(path: str, columns: Sequence[str] | None = None, *, decode: bool = False) -> list[dict[str, Any]]:
    """:func:`read_result_table` as a list of dicts, one per row (batch order). ``decode``:
    the marked ``string`` columns (``key``, ``value``) as the values the user's functions
    returned (module docstring); a file of the unmarked first layout keeps its text."""
    if not decode:
        rows: list[dict[str, Any]] = read_result_table(path, columns).to_pylist()
        return rows
    scanner = _dataset(path).scanner(columns=list(columns) if columns is not None else None)
    decoded: list[dict[str, Any]] = []
    for tagged in scanner.scan_batches():
        marked = [c for c, version in value_formats(tagged.fragment.physical_schema).items() if version >= 2]
        for row in tagged.record_batch.to_pylist():
            for column in marked:
                if column in row:
                    row[column] = from_text(row[column])
            decoded.append(row)
    return sorted(decoded, key=lambda r: r["batch"]) if decoded and "batch" in decoded[0] else decoded
