"""An exactly-once sink on storage that has no rename (S3, GCS, ABFS, HDFS, local), through
``pyarrow.fs``: write-once part files plus a committed manifest.

:class:`ObjectStoreSink` is a :class:`~spark_impl.reconfig.sinks.Sink` for a filesystem URI
(``pyarrow.fs.FileSystem.from_uri``: ``s3://key:secret@bucket/table?region=...``,
``gs://...``, ``hdfs://...``, ``file:///...``). Delivering batch id ``b``:

1. if ``_manifest/<b>.json`` exists and parses, ``b`` is already committed: nothing is written
   (idempotent by batch id: a replay after a crash writes nothing twice);
2. Spark tasks write the rows of their partition to ``data/b<b>/part-<i>.parquet`` with
   pyarrow (the driver receives only file names and row counts). The names depend only on
   ``b`` and the partition, so a retried task or a repeated delivery *replaces* the same
   object (an object-store PUT is atomic: a reader sees the old or the new object whole);
3. the driver writes the manifest, one object listing the part files: the commit. A part file
   no manifest lists (a delivery that crashed before its commit) is never read.

Columns: the delivered DataFrame's. The Fries executor's ``job, batch, operator, txn, key,
value`` are written with the sink's ``key_type`` / ``value_type``; any other DataFrame (the DGS
live front end's ``job, batch, value``, the O+ one's) with Arrow types from its Spark schema
(int, bigint, smallint, tinyint, double, float, string, boolean columns). A column the
delivered DataFrame marks with a layout version of its values (field metadata
:data:`spark_impl.result_values.FORMAT_KEY`) keeps the mark in the part files' Arrow schema,
so :func:`spark_impl.readers.value_formats` tells the layouts apart per file.

Readers read only what the manifests list: :func:`read_committed` (pyarrow) returns the
committed rows as a ``pyarrow.Table`` (``.to_pandas()``, or ``spark.createDataFrame`` of it),
the ``string`` key and value columns as the text the sink wrote; :func:`read_committed_rows`
returns them as a list of dicts whose marked ``string`` columns are decoded back to the values
the user's functions returned (tuples, ``Decimal``, dates, bytes, ...), part file by part file,
as :func:`spark_impl.readers.read_result_rows` does for a ``ParquetSink`` table
(docs/production/types.md, "Results"). A table has no single Arrow type for such values, hence
a second function rather than a change of :func:`read_committed`'s documented return type.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from spec.errors import InputError
from spark_impl.readers import value_formats
from spark_impl.reconfig.sinks import COLUMN_TYPES, check_types
from spark_impl.result_values import FORMAT_KEY, from_text
from spark_impl.store import is_uri, resolve

_ARROW_TYPES = {"string": "string", "long": "int64", "double": "float64", "boolean": "bool"}
_SPARK_ARROW = {"int": "int32", "bigint": "int64", "smallint": "int16", "tinyint": "int8", "double": "float64",
                "float": "float32", "string": "string", "boolean": "bool"}
COLUMNS = ("job", "batch", "operator", "txn", "key", "value")
Fields = tuple[tuple[str, str], ...]
"""``((column, Arrow type alias), ...)``: what a part file holds."""


def filesystem(uri: str) -> tuple[Any, str]:
    """``(pyarrow FileSystem, path inside it)`` of ``uri``: :func:`spark_impl.store.resolve`
    (the checkpoint store's, one filesystem per process and endpoint); a plain local path is
    pyarrow's local filesystem."""
    if is_uri(uri):
        return resolve(uri)
    import pyarrow.fs as pafs

    return pafs.LocalFileSystem(), os.path.abspath(uri).rstrip("/")


def _fries_fields(key_type: str, value_type: str) -> Fields:
    return (("job", "int32"), ("batch", "int64"), ("operator", "string"), ("txn", "string"),
            ("key", _ARROW_TYPES[key_type]), ("value", _ARROW_TYPES[value_type]))


def fields_of(df: Any, key_type: str, value_type: str) -> Fields:
    """The part files' columns for delivered DataFrame ``df`` (module docstring)."""
    if tuple(df.columns) == COLUMNS:
        return _fries_fields(key_type, value_type)
    fields = []
    for field in df.schema.fields:
        kind = field.dataType.simpleString()
        if kind not in _SPARK_ARROW:
            raise InputError(f"column {field.name!r} has type {kind}; the sink writes columns of types "
                             f"{', '.join(sorted(_SPARK_ARROW))}", "ObjectStoreSink")
        fields.append((str(field.name), _SPARK_ARROW[kind]))
    return tuple(fields)


def _schema(fields: Fields, marks: dict[str, str] | None = None) -> Any:
    import pyarrow as pa

    return pa.schema([pa.field(name, pa.type_for_alias(kind),
                               metadata={FORMAT_KEY: marks[name]} if marks and name in marks else None)
                      for name, kind in fields])


def _marks(df: Any) -> dict[str, str]:
    """Column -> layout version of ``df``'s marked columns (none for a DataFrame stand-in
    without a schema)."""
    schema = getattr(df, "schema", None)
    return {str(f.name): str(f.metadata[FORMAT_KEY]) for f in getattr(schema, "fields", ())
            if FORMAT_KEY in (getattr(f, "metadata", None) or {})}


def _manifest(root: str, batch_id: int) -> str:
    return f"{root}/_manifest/{batch_id:020d}.json"


def _read_json(fs: Any, path: str) -> Any | None:
    """The object's JSON content, or None if it is absent or incomplete."""
    try:
        with fs.open_input_stream(path) as handle:
            return json.loads(handle.read().decode("utf-8"))
    except (FileNotFoundError, OSError, ValueError):
        return None


def _part_writer(uri: str, batch_id: int, key_type: str, value_type: str, fields: Fields | None = None,
                 marks: dict[str, str] | None = None) -> Callable[[int, Iterator[Any]], Iterator[Any]]:
    layout = fields or _fries_fields(key_type, value_type)

    def write(part: int, rows: Iterator[Any]) -> Iterator[tuple[str, int]]:
        import pyarrow as pa
        import pyarrow.parquet as pq

        columns: dict[str, list[Any]] = {name: [] for name, _ in layout}
        count = 0
        for row in rows:
            count += 1
            for (name, _), value in zip(layout, row):
                columns[name].append(value)
        if not count:
            return iter(())
        fs, root = filesystem(uri)
        name = f"data/b{batch_id:020d}/part-{part:05d}.parquet"
        fs.create_dir(f"{root}/data/b{batch_id:020d}", recursive=True)  # file://, HDFS: a file needs its directory
        pq.write_table(pa.table(columns, schema=_schema(layout, marks)), f"{root}/{name}", filesystem=fs)
        return iter([(name, count)])

    return write


@dataclass(frozen=True)
class ObjectStoreSink:
    """See the module docstring."""

    uri: str
    key_type: str = "string"
    value_type: str = "string"

    def __post_init__(self) -> None:
        check_types(self.key_type, self.value_type)

    def deliver(self, df: Any, batch_id: int) -> None:
        """Write the parts, then commit the manifest (nothing if ``batch_id`` is committed)."""
        fs, root = filesystem(self.uri)
        if _read_json(fs, _manifest(root, batch_id)) is not None:
            return
        fields = fields_of(df, self.key_type, self.value_type)
        marks = _marks(df)
        fs.create_dir(f"{root}/_manifest", recursive=True)  # (and the bucket, if the URI allows it)
        parts = df.rdd.mapPartitionsWithIndex(
            _part_writer(self.uri, batch_id, self.key_type, self.value_type, fields, marks)).collect()
        body = json.dumps({"batch": batch_id, "files": sorted([str(n), int(c)] for n, c in parts)})
        with fs.open_output_stream(_manifest(root, batch_id)) as handle:
            handle.write(body.encode("utf-8"))


def committed_files(uri: str) -> list[str]:
    """The part files the manifests list (paths inside the filesystem), in batch order."""
    import pyarrow.fs as pafs

    fs, root = filesystem(uri)
    infos = fs.get_file_info(pafs.FileSelector(f"{root}/_manifest", allow_not_found=True))
    files: list[str] = []
    for info in sorted(infos, key=lambda i: str(i.path)):
        manifest = _read_json(fs, info.path) if str(info.path).endswith(".json") else None
        if manifest is not None:
            files.extend(f"{root}/{name}" for name, _ in manifest["files"])
    return files


def read_committed(uri: str, key_type: str | None = None, value_type: str | None = None) -> Any:
    """Every committed row as a ``pyarrow.Table``: with ``key_type`` / ``value_type``, in the
    Fries columns of those types; without, in the columns the parts were written with. Empty
    if nothing was committed yet (the Fries columns)."""
    import pyarrow.parquet as pq

    fs, _ = filesystem(uri)
    files = committed_files(uri)
    if files and key_type is None and value_type is None:
        return pq.read_table(files, filesystem=fs)
    schema = _schema(_fries_fields(key_type or "string", value_type or "string"))
    if not files:
        return schema.empty_table()
    return pq.read_table(files, filesystem=fs, schema=schema)


def read_committed_rows(uri: str, key_type: str | None = None, value_type: str | None = None, *,
                        decode: bool = True) -> list[dict[str, Any]]:
    """Every committed row as a dict, in batch order (:func:`read_committed`'s rows, with the
    same ``key_type`` / ``value_type``). ``decode`` (the default; this function exists for
    it): each part file's ``string`` columns marked with layout version 2 or later
    (:func:`spark_impl.readers.value_formats`) are decoded by
    :func:`spark_impl.result_values.from_text` back to the values the user's functions
    returned; a part of the unmarked first layout keeps its text, which cannot be decoded
    reliably. ``decode=False``: the text as written, as :func:`read_committed` gives it."""
    import pyarrow.parquet as pq

    fs, _ = filesystem(uri)
    typed = key_type is not None or value_type is not None
    schema = _schema(_fries_fields(key_type or "string", value_type or "string")) if typed else None
    rows: list[dict[str, Any]] = []
    for path in committed_files(uri):
        part = pq.read_table(path, filesystem=fs, schema=schema)
        marked = [c for c, version in value_formats(pq.read_schema(path, filesystem=fs)).items() if version >= 2]
        for row in part.to_pylist():
            if decode:
                for column in marked:
                    if isinstance(row.get(column), str):
                        row[column] = from_text(row[column])
            rows.append(row)
    return rows


__all__ = ["COLUMN_TYPES", "ObjectStoreSink", "committed_files", "filesystem", "read_committed",
           "read_committed_rows"]
