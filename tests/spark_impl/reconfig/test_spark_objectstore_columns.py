"""``ObjectStoreSink`` with the columns of any front end (spark_impl.reconfig.objectstore): a
DataFrame that is not the Fries executor's (the DGS live front end's ``job, batch, value``) is
written with Arrow types from its Spark schema, read back as written, once per batch id; a
column type the sink cannot write is refused with one line. No Spark: a DataFrame stand-in with
a real Spark schema and partitions (the sink's only calls on it)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pyspark.sql.types import ArrayType, IntegerType, LongType, StringType, StructField, StructType

from spec.errors import InputError
from spark_impl.reconfig.objectstore import ObjectStoreSink, committed_files, read_committed
from support.partitioned_frame import PartitionedFrame as _Frame

DGS = StructType([StructField("job", IntegerType()), StructField("batch", LongType()),
                  StructField("value", StringType())])


def test_any_front_ends_columns_are_written_typed_and_read_back_once(tmp_path: Path) -> None:
    uri = f"file://{tmp_path}/table"
    sink = ObjectStoreSink(uri)
    batch = [[(0, 3, '["alice", 2]'), (0, 3, '["bob", 1]')], [], [(1, 3, '"x"')]]
    sink.deliver(_Frame(DGS, batch), 3)
    files = committed_files(uri)
    sink.deliver(_Frame(DGS, [[(0, 3, "written twice")]]), 3)  # a replay: nothing written
    assert committed_files(uri) == files and len(files) == 2  # the empty partition wrote no part
    table = read_committed(uri)
    assert table.column_names == ["job", "batch", "value"]
    assert [str(t) for t in table.schema.types] == ["int32", "int64", "string"]
    assert sorted(table.to_pylist(), key=str) == sorted(
        [{"job": j, "batch": b, "value": v} for part in batch for j, b, v in part], key=str)


def test_a_column_type_the_sink_cannot_write_is_refused(tmp_path: Path) -> None:
    schema = StructType([StructField("job", IntegerType()), StructField("tags", ArrayType(StringType()))])
    with pytest.raises(InputError, match="column 'tags' has type array<string>"):
        ObjectStoreSink(f"file://{tmp_path}/t").deliver(_Frame(schema, [[(0, ["a"])]]), 0)
