"""The Structured Streaming front end with keys that are not integers (a struct column: each
key is a tuple), an exactly-once Parquet sink and bounded storage: a restart that replays the
last Structured Streaming batch (its commit removed: a crash after the executor committed)
writes nothing twice, and the input log keeps no file below the committed offset."""

from __future__ import annotations

import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spark_impl.reconfig.api import collect_results
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.sinks import ParquetSink
from spark_impl.reconfig.streaming import StreamingRun, start_query
from spark_impl.workloads.soak import soak_job

pytestmark = pytest.mark.spark
ROWS = 6


def _land(data: Path, i: int) -> None:
    lines = [json.dumps({"key": {"user": f"u{(i * ROWS + r) % 4}", "shard": r % 2}, "value": i * ROWS + r})
             for r in range(ROWS)]
    tmp = data.parent / f".f{i}.json"
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, data / f"f{i}.json")


def _drain(spark: Any, data: Path, ckpt: Path, table: Path) -> StreamingRun:
    """Start the query on ``ckpt``, process every file present, stop."""
    stream = (spark.readStream.schema("key struct<user: string, shard: long>, value long")
              .option("maxFilesPerTrigger", 1).json(str(data)))
    run = start_query(spark, soak_job(), stream, scheduler="fries", checkpoint_dir=str(ckpt),
                      sink=ParquetSink(str(table), value_type="string"), retention=Retention(batches=2))
    try:
        run.query.processAllAvailable()
    finally:
        run.stop()
    return run


def test_tuple_keys_parquet_sink_and_bounded_input_log_across_a_replay(spark: Any, tmp_path: Path) -> None:
    data, ckpt, table = tmp_path / "data", tmp_path / "ckpt", tmp_path / "table"
    data.mkdir()
    for i in range(2):
        _land(data, i)
    _drain(spark, data, ckpt, table)
    for name in ("1", ".1.crc"):  # crash after the executor committed batch 1, before the query did
        (ckpt / "query" / "commits" / name).unlink(missing_ok=True)
    for i in range(2, 4):
        _land(data, i)
    second = _drain(spark, data, ckpt, table)
    assert second.replayed == [1]
    total = 4 * ROWS
    assert second.executor.state[0].committed.offset == total
    # every input file is below the committed offset: only the index is left
    assert sorted(os.listdir(ckpt / "input")) == ["index.json"]
    assert len(os.listdir(ckpt / "executor" / "batches")) <= 3
    rows = spark.read.parquet(str(table)).collect()
    counts = Counter(r["txn"] for r in rows)
    assert sorted(counts) == sorted(f"S:{i}" for i in range(total)) and set(counts.values()) == {1}
    assert sorted(json.loads(r["value"])[0] for r in rows) == list(range(total))
    expected = {(f"u{(i * ROWS + r) % 4}", r % 2) for i in range(4) for r in range(ROWS)}
    assert {tuple(json.loads(r["key"])) for r in rows} == expected
    (result,) = collect_results(second.executor)
    m_states = {key: n for (op, key), n in result.states.items() if op == "M"}
    assert all(isinstance(k, tuple) for k in m_states) and sum(m_states.values()) == total
