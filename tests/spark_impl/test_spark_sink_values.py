"""docs/spark.md "Sinks" and docs/production/types.md "Results" on a real live query: what a
Fries user function returns (bytes, Decimal, aware and naive datetimes, dates, times,
durations, NaN and infinities, None, nested tuples, strings that read as JSON) is in the
``ParquetSink`` table losslessly, and ``read_result_rows(path, decode=True)`` gives back exactly
those values; a partition of the first, unmarked layout written by Spark into the same table
is read with its text as is. (The O+ and DGS sinks: tests/spark_impl/test_spark_live_real_types.py.)"""

from __future__ import annotations

import datetime as dt
import json
import math
import os
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from spec.fries.dataflow import dataflow
from spark_impl.readers import read_result_rows, value_formats
from spark_impl.reconfig import ListSource, UserOperator, user_job
from spark_impl.reconfig.objectstore import ObjectStoreSink, committed_files, filesystem, read_committed
from spark_impl.reconfig.sinks import ParquetSink, column_converter, mark_values
from spark_impl.reconfig.streaming import start_query
from spark_impl.result_values import from_text
from support.values import UTC, same

pytestmark = pytest.mark.spark
WAIT_S = 300.0

OUTPUTS: list[tuple[Any, Any]] = [
    (b"user-1", Decimal("1.50")),
    (Decimal("1.50"), dt.datetime(2024, 1, 1, tzinfo=UTC)),
    (dt.datetime(2024, 1, 1, tzinfo=UTC), math.nan),
    ("user-1", (math.inf, -math.inf, None)),
    ("3", '["a", 1]'),
    (("u1", (b"\x00\xff", Decimal("-0.00")), None), dt.date(2024, 2, 29)),
    (dt.date(2024, 2, 29), dt.datetime(2024, 3, 31, 0, 30)),
    (None, (dt.time(12, 0, 1, 5), dt.timedelta(days=-1, microseconds=3))),
    (7, (("a", 1), ("b", (True, 2.5)))),
    ("true", "null"),
]
"""(key, value) per input tuple ``n``: what the user function returns for it."""


def test_live_fries_outputs_of_every_type_read_back_exactly_and_old_partitions_as_text(
        spark: Any, tmp_path: Path) -> None:
    """docs/spark.md "Sinks": a live query's ``ParquetSink`` outputs of every documented type
    read back by ``read_result_rows(decode=True)`` as returned; an unmarked partition as text."""
    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])

    def emit(state: Any, key: Any, value: Any) -> Any:
        out_key, out_value = OUTPUTS[value]
        return state, [(out_key, (value, out_value))]

    job = user_job(flow, {"M": UserOperator(flow.kind("M"), emit)}, ListSource(()), parallelism={"M": 2})
    source, ckpt, results = (str(tmp_path / n) for n in ("in", "ckpt", "results"))
    os.makedirs(source)
    with open(os.path.join(tmp_path, "rows.json"), "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps({"user": f"u{n % 3}", "n": n}) + "\n" for n in range(len(OUTPUTS)))
    os.replace(os.path.join(tmp_path, "rows.json"), os.path.join(source, "part-0.json"))
    stream = spark.readStream.schema("user string, n long").json(source)
    run = start_query(spark, job, stream, scheduler="fries", checkpoint_dir=ckpt, key_column="user",
                      value_column="n", sink=ParquetSink(results))
    try:
        run.wait_for(lambda: 0 in run.batch_ms, WAIT_S, "batch 0")
    finally:
        run.stop()

    # a partition of the first layout (no mark), written by Spark as the sink wrote it before
    old = [(1, 0, "M", "S:0", "u1", "b'user-1'"), (1, 0, "M", "S:1", '["u1", 3]', "NaN")]
    (spark.createDataFrame(old, "job int, batch long, operator string, txn string, key string, value string")
     .write.mode("append").partitionBy("job", "batch").parquet(results))

    rows = read_result_rows(results, decode=True)
    new = sorted((r for r in rows if r["job"] == 0), key=lambda r: r["value"][0])
    assert len(new) == len(OUTPUTS)
    for row, (n, (key, value)) in zip(new, enumerate(OUTPUTS)):
        assert same(row["key"], key) and same(row["value"], (n, value)), (row, key, value)
    assert sorted((r["txn"], r["key"], r["value"]) for r in rows if r["job"] == 1) == \
        [("S:0", "u1", "b'user-1'"), ("S:1", '["u1", 3]', "NaN")]
    # Spark reads the same table; its text decodes to the same values
    spark_rows = spark.read.parquet(results).where("job = 0").collect()
    assert sorted(json.dumps(from_text(r["value"])[0]) for r in spark_rows) == \
        sorted(json.dumps(n) for n in range(len(OUTPUTS)))


def test_object_store_parts_keep_the_layout_mark_and_read_back_exactly(spark: Any, tmp_path: Path) -> None:
    """spark_impl/reconfig/objectstore.py: a marked column keeps its layout mark in the part
    files' Arrow schema (``value_formats`` finds it), and the committed text decodes to the
    values the user function returned."""
    convert = column_converter("string")
    df = spark.createDataFrame([(0, 5, "M", f"S:{n}", convert(k), convert(v)) for n, (k, v) in enumerate(OUTPUTS)],
                               "job int, batch long, operator string, txn string, key string, value string")
    uri = f"file://{tmp_path}/table"
    ObjectStoreSink(uri).deliver(mark_values(df, ("key", "value"), ("string", "string")), 5)
    fs, _ = filesystem(uri)
    files = committed_files(uri)
    assert files and all(value_formats(pq.ParquetFile(fs.open_input_file(f)).schema_arrow) == {"key": 2, "value": 2}
                         for f in files)
    rows = sorted(read_committed(uri).to_pylist(), key=lambda r: int(r["txn"].split(":")[1]))
    assert len(rows) == len(OUTPUTS)
    assert all(same(from_text(r["key"]), k) and same(from_text(r["value"]), v) for r, (k, v) in zip(rows, OUTPUTS))
