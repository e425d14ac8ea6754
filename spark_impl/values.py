"""The one encoding of user values on every live front end (docs/production/types.md).

A value of a user's column reaches the user's functions (Fries operators, O+ tuple fields and
keys, DGS events) in one documented Python form, whatever Spark type the column has and
whichever front end reads it, and it is persisted (the Fries input log) in a form that gives
exactly that value back after a restart:

=========================================  ==================================================
Spark type                                 Python value (the *documented form*)
=========================================  ==================================================
struct                                     ``tuple`` of its fields' values, in field order
array                                      ``tuple`` of its elements
map                                        ``tuple`` of ``(key, value)`` pairs sorted by
                                           :func:`value_order` of the key
decimal                                    ``decimal.Decimal``
date                                       ``datetime.date``
timestamp                                  ``datetime.datetime``, timezone-aware, in UTC
timestamp_ntz                              ``datetime.datetime``, naive (wall-clock time)
time                                       ``datetime.time`` (naive)
day-time interval                          ``datetime.timedelta``
binary                                     ``bytes``
string                                     ``str``
boolean, byte, short, int, long            ``bool`` / ``int``
float, double                              ``float``
null (any type)                            ``None``
=========================================  ==================================================

Every documented form is hashable and equal values are equal in Python, so any of them can be
a key; :mod:`spark_impl.keys` routes each stably (its hash covers every type above) and
:func:`spark_impl.keys.key_order` orders keys of mixed types.

Why a map is a sorted tuple of pairs: a key must be hashable and must not depend on the order
Spark happens to hand a map's entries over (two equal maps must be one key). A tuple of pairs
sorted by key is hashable, already routed by the stable hash (no new hash tag, so no format
change), ordered, and ``dict(pairs)`` gives a dictionary back. A frozen mapping type would
need a dependency or a new hash tag and is not orderable.

Why timestamps are UTC-aware: Spark stores a timestamp as an instant; PySpark hands it to
Python as a naive datetime in the *worker process's* local zone, so the same row would reach a
function as different values on two machines. The instant, in UTC, is the same everywhere.

:func:`decode` turns Spark's Python value of a column (what ``Row`` holds) into the documented
form, given the column's Spark type; :func:`normalize` does it without a type (lists, rows,
dicts, bytearrays as above). :func:`to_json` / :func:`from_json` are the persisted encoding: a
JSON value from which the documented form comes back exactly (``from_json(to_json(x)) == x``,
types included). :func:`as_received` is what a live front end does to a value end to end (the
function a test harness calls to feed a job exactly what it gets live).
"""

from __future__ import annotations

import base64
import datetime as dt
import math
from decimal import Decimal
from typing import Any, Callable

__all__ = ["as_received", "column_type", "decode", "decoder", "from_json", "normalize", "to_json", "unsupported", "value_order"]

_UTC = dt.timezone.utc


def _type_name(spark_type: Any) -> str:
    """The Spark type's class name (``StructType``...): pyspark is not imported here."""
    return type(spark_type).__name__


def decoder(spark_type: Any) -> Callable[[Any], Any]:
    """A function from Spark's Python value of a column of ``spark_type`` (a
    ``pyspark.sql.types.DataType``; None: unknown, :func:`normalize`) to its documented form.
    Built once per column and applied per row (the type dispatch is done here, not per value)."""
    name = _type_name(spark_type)
    if spark_type is None:
        return normalize
    if name == "StructType":
        fields = [decoder(f.dataType) for f in spark_type.fields]

        def struct(value: Any) -> Any:
            if value is None:
                return None
            return tuple(f(v) for f, v in zip(fields, value))

        return struct
    if name == "ArrayType":
        element = decoder(spark_type.elementType)
        return lambda value: None if value is None else tuple(element(v) for v in value)
    if name == "MapType":
        keys, values = decoder(spark_type.keyType), decoder(spark_type.valueType)
        return lambda value: None if value is None else _pairs((keys(k), values(v)) for k, v in value.items())
    if name == "TimestampType":
        return _instant
    if name == "BinaryType":
        return lambda value: None if value is None else bytes(value)
    if name in ("StringType", "CharType", "VarcharType", "BooleanType", "ByteType", "ShortType", "IntegerType",
                "LongType", "FloatType", "DoubleType", "DecimalType", "DateType", "TimestampNTZType",
                "TimeType", "DayTimeIntervalType", "NullType"):
        return _same
    return normalize  # a user-defined or newer type: by its Python value


_CHILDREN: dict[str, Callable[[Any], list[Any]]] = {
    "StructType": lambda t: [f.dataType for f in t.fields], "ArrayType": lambda t: [t.elementType],
    "MapType": lambda t: [t.keyType, t.valueType],
}
_REFUSED = ("CalendarIntervalType", "VariantType", "GeographyType", "GeometryType", "UserDefinedType")


def unsupported(spark_type: Any) -> str | None:
    """Why a column of ``spark_type`` cannot reach a user function in a documented form (a
    calendar interval, variant, spatial or user-defined type, at any depth: their Python
    objects are neither hashable nor persisted exactly; select their fields instead), or None
    when it can. A front end refuses such a column when its query starts rather than when the
    first row of it arrives."""
    name = _type_name(spark_type)
    if name in _REFUSED or callable(getattr(spark_type, "sqlType", None)):
        return f"the Spark type {spark_type.simpleString()} has no documented Python form"
    children = _CHILDREN.get(name)
    for child in children(spark_type) if children else []:
        found = unsupported(child)
        if found is not None:
            return found
    return None


def column_type(df: Any, name: str) -> Any:
    """The Spark type of column ``name`` of DataFrame ``df``, or None when ``df`` carries no
    schema (a stand-in that only has rows): its values are then decoded by their Python value
    (:func:`normalize`)."""
    schema = getattr(df, "schema", None)
    if schema is None or isinstance(schema, str):
        return None
    return schema[name].dataType


def decode(value: Any, spark_type: Any) -> Any:
    """``value`` (from a Spark ``Row``, a column of ``spark_type``) in its documented form
    (module docstring). ``decoder(spark_type)`` once per column is faster for many rows."""
    return decoder(spark_type)(value)


def _same(value: Any) -> Any:
    return value


def _instant(value: Any) -> Any:
    """A Spark timestamp: PySpark gives a naive datetime in the process's local zone
    (``datetime.fromtimestamp``, fold set); ``astimezone`` inverts exactly that."""
    if value is None:
        return None
    return value.astimezone(_UTC)


def _pairs(items: Any) -> tuple[tuple[Any, Any], ...]:
    return tuple(sorted(items, key=lambda kv: value_order(kv[0])))


def normalize(value: Any) -> Any:
    """``value`` in its documented form without its Spark type: lists and tuples (rows
    included) become tuples and dicts sorted pairs, recursively; a ``bytearray`` or
    ``memoryview`` becomes ``bytes``; an aware datetime is moved to UTC; anything else is kept
    (a naive datetime stays naive: without the type it cannot be told from timestamp_ntz)."""
    if isinstance(value, (list, tuple)):
        return tuple(normalize(v) for v in value)
    if isinstance(value, dict):
        return _pairs((normalize(k), normalize(v)) for k, v in value.items())
    if isinstance(value, (bytearray, memoryview)):
        return bytes(value)
    if isinstance(value, dt.datetime) and value.tzinfo is not None:
        return value.astimezone(_UTC)
    return value


_RANKS: tuple[tuple[type, int], ...] = (
    (bool, 1), (int, 1), (float, 1), (Decimal, 1), (str, 2), (bytes, 3), (dt.datetime, 5), (dt.date, 4),
    (dt.time, 7), (dt.timedelta, 8), (tuple, 9))


def value_order(value: Any) -> tuple[Any, ...]:
    """A total order on documented forms, natural within each type (numbers numerically, NaN
    last among them; strings and bytes lexicographically; dates, times and durations
    chronologically; tuples item by item) and by type otherwise (None first, then numbers,
    strings, bytes, dates, aware datetimes, naive datetimes, times, durations, tuples). Used to
    sort a map's pairs, so equal maps give equal tuples."""
    if value is None:
        return (0,)
    rank = next((r for kind, r in _RANKS if isinstance(value, kind)), 0)
    if rank == 0:
        raise TypeError(f"a value of type {type(value).__name__} has no documented form "
                        "(docs/production/types.md)")
    if rank == 1:
        return (1, 1, 0) if isinstance(value, (float, Decimal)) and math.isnan(value) else (1, 0, value)  # NaN last
    if rank == 5 and value.tzinfo is None:
        return (6, value)
    if rank == 9:
        return (9, tuple(value_order(v) for v in value))
    return (rank, value)


def to_json(value: Any) -> Any:
    """The persisted form of a documented value: a JSON value (``json.dumps`` with
    ``allow_nan=False`` accepts it). ``None``, booleans, integers, finite floats and strings are
    themselves; a tuple is an array; every other type is an object with one tag:
    ``{"f": "nan"|"inf"|"-inf"}``, ``{"d": "1.50"}`` (Decimal, its exact string),
    ``{"D": "2024-02-29"}``, ``{"Z": "...+00:00"}`` (aware datetime, ISO 8601 with its offset),
    ``{"W": "..."}`` (naive datetime), ``{"H": "..."}`` (time), ``{"I": [days, seconds,
    microseconds]}`` (timedelta), ``{"b": base64}`` (bytes). TypeError on anything else (a list
    or dict is not a documented form: :func:`normalize` it first)."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else {"f": repr(value)}
    if isinstance(value, tuple):
        return [to_json(v) for v in value]
    if isinstance(value, Decimal):
        return {"d": str(value)}
    if isinstance(value, dt.datetime):
        return {"W" if value.tzinfo is None else "Z": value.isoformat()}
    if isinstance(value, dt.date):
        return {"D": value.isoformat()}
    if isinstance(value, dt.time) and value.tzinfo is None:
        return {"H": value.isoformat()}
    if isinstance(value, dt.timedelta):
        return {"I": [value.days, value.seconds, value.microseconds]}
    if isinstance(value, bytes):
        return {"b": base64.b64encode(value).decode("ascii")}
    raise TypeError(f"a value of type {type(value).__name__} has no documented form (docs/production/types.md)")


_TAGS: dict[str, Callable[[Any], Any]] = {
    "f": float, "d": Decimal, "D": dt.date.fromisoformat, "Z": dt.datetime.fromisoformat,
    "W": dt.datetime.fromisoformat, "H": dt.time.fromisoformat,
    "I": lambda raw: dt.timedelta(days=raw[0], seconds=raw[1], microseconds=raw[2]),
    "b": lambda raw: base64.b64decode(raw.encode("ascii"), validate=True),
}


def from_json(raw: Any) -> Any:
    """The inverse of :func:`to_json` (ValueError on a JSON value it does not write)."""
    if isinstance(raw, list):
        return tuple(from_json(v) for v in raw)
    if isinstance(raw, dict):
        if len(raw) != 1:
            raise ValueError(f"not a persisted value: an object with keys {sorted(raw)}")
        ((tag, body),) = raw.items()
        parse = _TAGS.get(tag)
        if parse is None:
            raise ValueError(f"not a persisted value: unknown tag {tag!r}")
        return parse(body)
    return raw


def as_received(value: Any, spark_type: Any = None) -> Any:
    """What a user function receives for ``value`` on a live front end: decoded by its Spark
    type (None: :func:`normalize`), then through the persisted encoding and back, exactly as
    the Fries input log does. A harness feeding a job in memory calls this on every key and
    value so the job meets what it will meet live."""
    return from_json(to_json(decode(value, spark_type)))
