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
"""

from __future__ import annotations

import os
from typing import Any, Sequence

from spec.errors import InputError

from spark_impl.store import display, is_uri, resolve

__all__ = ["read_result_rows", "read_result_table"]


def read_result_table(path: str, columns: Sequence[str] | None = None) -> Any:
    """The table at ``path`` as a ``pyarrow.Table`` (``columns``: only these; the partition
    columns ``job`` and ``batch`` included), rows ordered by ``batch`` then file order.
    InputError when ``path`` holds no table; an empty table when nothing was delivered yet
    (the directory exists but holds no Parquet file)."""
    import pyarrow as pa
    import pyarrow.dataset as pads

    if is_uri(path):
        filesystem, inner = resolve(path)
    else:
        filesystem, inner = None, os.path.abspath(path)
        if not os.path.isdir(inner):
            raise InputError(f"no result table at {path} (not a directory)", "path")
    try:
        dataset = pads.dataset(inner, filesystem=filesystem, format="parquet", partitioning="hive")
    except (OSError, ValueError, pa.ArrowInvalid) as error:
        raise InputError(f"cannot read the result table at {display(path)}: {str(error).splitlines()[0]}",
                         "path") from None
    table = dataset.to_table(columns=list(columns) if columns is not None else None)
    if table.num_rows and "batch" in table.column_names:
        table = table.sort_by([("batch", "ascending")])
    return table


def read_result_rows(path: str, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """:func:`read_result_table` as a list of dicts, one per row (batch order)."""
    rows: list[dict[str, Any]] = read_result_table(path, columns).to_pylist()
    return rows
