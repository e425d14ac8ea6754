"""The sinks' ``string`` columns hold every user value losslessly and the documented reader
gives it back (spark_impl/result_values.py, docs/production/types.md "Results", docs/spark.md
"Sinks"); tables of the first layout (unmarked) are still read, their text as is. No Spark
session: the tables here are written by pyarrow as ``ObjectStoreSink`` parts are."""

from __future__ import annotations

import datetime as dt
import json
import math
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import given, strategies as st

from spark_impl.readers import read_result_rows
from spark_impl.reconfig.sinks import column_converter
from spark_impl.result_values import FORMAT_KEY, VALUES_FORMAT, from_text, is_json_text
from support.values import UTC, documented, same


def _strict(name: str) -> Any:
    raise ValueError(name)


@given(documented, st.booleans())
def test_a_string_sink_column_reads_back_every_documented_value_exactly(value: Any, quote: bool) -> None:
    """docs/production/types.md "Results": what the sink writes in a ``string`` column,
    ``from_text`` reads back as the same value (types included, NaN as NaN), and the text is
    strict JSON (no bare NaN) unless it is a string written as is."""
    text = column_converter("string", quote_strings=quote)(value)
    assert same(from_text(text), value), (value, text)
    if text is not None and not (isinstance(value, str) and text == value):
        json.loads(text, parse_constant=_strict)


def test_the_values_the_old_layout_lost_read_back_exactly() -> None:
    """docs/spark.md "Sinks": bytes, Decimal, an aware datetime and NaN came back as other
    values (``"b'user-1'"``, ``"1.50"``, a string, a bare ``NaN``) before the typed layout."""
    convert = column_converter("string")
    for value in (b"user-1", Decimal("1.50"), dt.datetime(2024, 1, 1, tzinfo=UTC), math.nan, math.inf,
                  dt.date(2024, 2, 29), ("u1", (b"\x00", Decimal("-0.0")), None), "3", '["a", 1]', "true", "null"):
        text = convert(value)
        assert same(from_text(text), value), (value, text)
        assert "NaN" not in text and "Infinity" not in text


@given(st.one_of(st.integers(), st.floats(allow_nan=False, allow_infinity=False), st.booleans(),
                 st.text().filter(lambda s: not is_json_text(s)),
                 st.lists(st.one_of(st.integers(), st.text(), st.booleans()), max_size=4).map(tuple)))
def test_values_the_old_layout_held_exactly_are_written_as_before(value: Any) -> None:
    """result_values module docstring: plain strings (not JSON text) as is, ints, finite floats,
    booleans and tuples of them as the same JSON text as the first layout."""
    old = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    assert column_converter("string")(value) == old


def _part(path: Path, keys: list[Any], values: list[Any], marked: bool) -> None:
    meta = {FORMAT_KEY: str(VALUES_FORMAT)} if marked else None
    schema = pa.schema([pa.field("operator", pa.string()), pa.field("txn", pa.string()),
                        pa.field("key", pa.string(), metadata=meta), pa.field("value", pa.string(), metadata=meta)])
    path.mkdir(parents=True)
    pq.write_table(pa.table({"operator": ["M"] * len(keys), "txn": [f"S:{i}" for i in range(len(keys))],
                             "key": keys, "value": values}, schema=schema), str(path / "part-0.parquet"))


def test_read_result_rows_decodes_the_marked_layout_and_keeps_old_text(tmp_path: Path) -> None:
    """spark_impl.readers: ``decode=True`` gives marked files' values back and an unmarked
    (first layout) file's text as is, in one table; without ``decode`` every text is as is."""
    convert = column_converter("string")
    old_keys, old_values = ["u1", '["u1", 3]'], ["b'user-1'", "NaN"]
    new_keys = [b"user-1", ("u1", 3)]
    new_values = [(Decimal("1.50"), dt.datetime(2024, 1, 1, tzinfo=UTC)), math.nan]
    _part(tmp_path / "t" / "job=0" / "batch=1", old_keys, old_values, marked=False)
    _part(tmp_path / "t" / "job=0" / "batch=2", [convert(k) for k in new_keys], [convert(v) for v in new_values],
          marked=True)
    rows = read_result_rows(str(tmp_path / "t"), decode=True)
    assert [r["batch"] for r in rows] == [1, 1, 2, 2]
    assert [(r["key"], r["value"]) for r in rows[:2]] == list(zip(old_keys, old_values))
    assert all(same(r["key"], k) and same(r["value"], v) for r, k, v in zip(rows[2:], new_keys, new_values))
    raw = read_result_rows(str(tmp_path / "t"))
    assert [r["key"] for r in raw] == old_keys + [convert(k) for k in new_keys]
