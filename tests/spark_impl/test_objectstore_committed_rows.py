"""``read_committed_rows`` (spark_impl.reconfig.objectstore, module docstring): the committed
rows of an ``ObjectStoreSink`` table with the marked ``string`` key and value columns decoded back
to the values the user's functions returned, part file by part file, as
``spark_impl.readers.read_result_rows(..., decode=True)`` does for a ``ParquetSink`` table
(docs/production/types.md, "Results"); ``read_committed`` keeps its documented
``pyarrow.Table`` of text. No Spark: a DataFrame stand-in with a real Spark schema (column
metadata included) and partitions, the sink's only calls on it."""

from __future__ import annotations

import datetime
from decimal import Decimal
from pathlib import Path

from pyspark.sql.types import IntegerType, LongType, StringType, StructField, StructType

from spark_impl.reconfig.objectstore import ObjectStoreSink, read_committed, read_committed_rows
from spark_impl.result_values import FORMAT_KEY, VALUES_FORMAT, to_text
from support.partitioned_frame import PartitionedFrame as _Frame

MARK = {FORMAT_KEY: VALUES_FORMAT}
VALUES = [("alice", 2), Decimal("1.10"), b"\x00\xff", "3", datetime.date(2026, 1, 2), None, "plain text"]


def _schema(marked: bool) -> StructType:
    return StructType([StructField("job", IntegerType()), StructField("batch", LongType()),
                       StructField("value", StringType(), metadata=MARK if marked else {})])


def test_marked_values_come_back_as_the_values_the_functions_returned(tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/table"
    rows = [(0, 4, to_text(v)) for v in VALUES]
    ObjectStoreSink(uri).deliver(_Frame(_schema(True), [rows[:3], rows[3:]]), 4)
    got = read_committed_rows(uri)
    assert [r["value"] for r in got] == VALUES
    assert [(r["job"], r["batch"]) for r in got] == [(0, 4)] * len(VALUES)
    assert read_committed(uri).column("value").to_pylist() == [text for _, _, text in rows]  # unchanged: text


def test_a_part_of_the_unmarked_first_layout_keeps_its_text_and_batches_stay_in_order(tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/table"
    sink = ObjectStoreSink(uri)
    sink.deliver(_Frame(_schema(True), [[(0, 12, '["b", 1]')]]), 12)
    sink.deliver(_Frame(_schema(False), [[(0, 3, '["a", 1]')]]), 3)  # written before the mark existed
    got = read_committed_rows(uri)
    assert [(r["batch"], r["value"]) for r in got] == [(3, '["a", 1]'), (12, ("b", 1))]


def test_decode_false_is_the_text_read_committed_gives(tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/table"
    ObjectStoreSink(uri).deliver(_Frame(_schema(True), [[(1, 0, to_text(v)) for v in VALUES]]), 0)
    assert read_committed_rows(uri, decode=False) == read_committed(uri).to_pylist()


def test_fries_columns_decode_the_key_and_value_also_read_with_their_types(tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/table"
    fries = StructType([StructField("job", IntegerType()), StructField("batch", LongType()),
                        StructField("operator", StringType()), StructField("txn", StringType()),
                        StructField("key", StringType(), metadata=MARK),
                        StructField("value", StringType(), metadata=MARK)])
    key, value = ("eu", 7), (1, Decimal("2.5"))
    ObjectStoreSink(uri).deliver(_Frame(fries, [[(0, 0, "M", "S:0", to_text(key), to_text(value))]]), 0)
    assert read_committed_rows(uri) == [{"job": 0, "batch": 0, "operator": "M", "txn": "S:0", "key": key,
                                         "value": value}]
    assert read_committed_rows(uri, key_type="string", value_type="string") == read_committed_rows(uri)
    assert read_committed_rows(uri) != read_committed(uri).to_pylist()
