"""The rows of a live DGS micro-batch as items, from either column shape a stream may have.

* A **string** column: one JSON item per row (:mod:`spark_impl.dgs.streaming_input`), events
  as JSON values (arrays become tuples).
* A **struct** column with fields ``stream`` (string), ``ts`` (long), ``event`` (any type
  docs/production/types.md lists), optional ``heartbeat`` (boolean) and ``job`` (int): the
  event reaches the program in the documented form of :mod:`spark_impl.values` (structs and
  arrays as tuples, maps as sorted pairs, decimals, dates, UTC timestamps, bytes), so an event
  read from Parquet or Kafka keeps its real types. A row is a heartbeat when ``heartbeat`` is
  true, else an event (a null ``event`` is the event ``None``).
"""

from __future__ import annotations

from typing import Any

from spec.errors import InputError

from spark_impl.values import column_type, decoder, unsupported

ITEM_FIELDS = ("job", "stream", "ts", "event", "heartbeat")
"""The fields a struct column may have."""


def check_column(source: Any, column: str) -> None:
    """InputError unless ``column`` of the stream is a string or a struct of :data:`ITEM_FIELDS`
    with ``stream`` and ``ts`` and types the encoding covers (a stand-in frame without a
    schema passes: its rows are read as JSON texts)."""
    data_type = column_type(source, column)
    kind = type(data_type).__name__
    if data_type is None or kind == "StringType":
        return
    if kind != "StructType":
        raise InputError(f"column {column!r} is {data_type.simpleString()}: expected a JSON string or a struct "
                         f"with fields {', '.join(ITEM_FIELDS)}")
    names = [f.name for f in data_type.fields]
    extra = [n for n in names if n not in ITEM_FIELDS]
    missing = [n for n in ("stream", "ts") if n not in names]
    if extra or missing:
        raise InputError(f"column {column!r}: a struct item needs fields stream and ts "
                         f"(missing {missing}), and no fields but {', '.join(ITEM_FIELDS)} (unknown {extra})")
    why = unsupported(data_type)
    if why is not None:
        raise InputError(f"column {column!r}: {why} (docs/production/types.md lists the supported types)")


def batch_rows(df: Any, column: str) -> list[Any]:
    """The micro-batch's items of ``column``: JSON texts of a string column, item dicts (the
    JSON item's shape, the event decoded) of a struct column."""
    data_type = column_type(df, column)
    texts = [row[0] for row in df.select(column).collect()]
    if type(data_type).__name__ != "StructType":
        return texts
    event = decoder(data_type["event"].dataType) if "event" in data_type.fieldNames() else None
    items: list[Any] = []
    for row in texts:
        if row is None:
            items.append(None)
            continue
        get = row.asDict(recursive=False)
        item = {n: get[n] for n in ("job", "stream", "ts") if get.get(n) is not None}
        if get.get("heartbeat"):
            item["heartbeat"] = True
        else:
            item["event"] = None if event is None else event(get.get("event"))
        items.append(item)
    return items
