"""The exactly-once sink on a real S3 API (moto's server on 127.0.0.1, started and stopped
here): write-once part files plus a committed manifest, no rename. A delivery is repeated
after a crash (its mark lost, then a driver restart) and the table still holds every output
once; a repeated delivery of a committed batch id writes no object; parts without a manifest
are never read."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spark_impl.reconfig import Executor
from spark_impl.reconfig.objectstore import ObjectStoreSink, committed_files, filesystem, read_committed
from spark_impl.reconfig.retention import Retention
from spark_impl.workloads.soak import generated_job

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.s3_server import s3_uri  # noqa: E402
import pyarrow.fs as pafs

pytestmark = pytest.mark.spark
TUPLES, SIZE = 24, 4


def _objects(uri: str) -> list[str]:
    fs, root = filesystem(uri)
    return sorted(i.path for i in fs.get_file_info(pafs.FileSelector(root, recursive=True)) if i.type == pafs.FileType.File)


def test_s3_sink_is_exactly_once_across_a_lost_mark_and_a_restart(spark: Any, endpoint: str, tmp_path: Path) -> None:
    uri = s3_uri(endpoint, "results", "table")
    sink = ObjectStoreSink(uri)

    def executor(resume: bool) -> Executor:
        return Executor(spark, [generated_job(TUPLES, SIZE)], "fries", str(tmp_path), resume=resume, sink=sink,
                        retention=Retention(batches=2))

    ex = executor(False)
    for step in range(TUPLES // SIZE + 4):
        if step == 2:
            saved = (tmp_path / "sink.json").read_bytes()
        ex.step()
        if step == 2:  # crash after the manifest was written, before the mark; driver restart
            (tmp_path / "sink.json").write_bytes(saved)
            ex = executor(True)
        if ex.done():
            break
    assert ex.done()
    table = read_committed(uri)
    counts = Counter(table.column("txn").to_pylist())
    assert sorted(counts) == sorted(f"S:{i}" for i in range(TUPLES)) and set(counts.values()) == {1}
    # a repeated delivery of a committed batch id writes nothing
    before = _objects(uri)
    last = ex.state[0].committed.history[-1]
    sink.deliver(spark.createDataFrame([(0, last, "T", "S:999", "k1", "x")],
                                       "job int, batch long, operator string, txn string, key string, value string"),
                 last)
    assert _objects(uri) == before
    # a crashed delivery (parts written, no manifest) is invisible
    fs, root = filesystem(uri)
    with fs.open_output_stream(f"{root}/data/b99999/part-00000.parquet") as handle:
        handle.write(b"not parquet")
    assert all("b99999" not in f for f in committed_files(uri)) and read_committed(uri).num_rows == TUPLES
