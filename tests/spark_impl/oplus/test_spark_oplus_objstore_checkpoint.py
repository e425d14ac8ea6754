"""The live O+ front end with its checkpoint and its sink on a real S3 API (moto's server on
127.0.0.1, started and stopped by the objstore tests' fixture), end to end.

Two O+ jobs with string keys (sliding-sum WT multi over 2 sources, sliding-sum WT single) run
twice over the same six files, with the same two rescales requested while the query runs (job
0: 2 -> 4, job 1: 3 -> 1):

* on a local checkpoint without interruption, into a ``CallbackSink``;
* with ``checkpoint_dir=s3://...`` (commit records, requests, delivery records, every task's
  state and output parts: objects on S3, no rename, no local path; only Structured Streaming's
  own ``query_checkpoint`` is local) and an ``ObjectStoreSink`` on S3 (write-once parts plus a
  manifest per batch id), while the driver crashes twice - after a round, before its commit;
  after a sink write, before it is recorded - and a new query resumes on the same checkpoints
  each time.

The rows committed on S3 equal the local run's - the same windows, batch ids and instances -
each once (the delivery repeated after the second crash writes nothing: its manifest exists),
and the sequential reference. The S3 checkpoint stays bounded."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any, Iterator

import pytest

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.s3_server import s3_uri  # noqa: E402
from support.oplus_live_stream import SCHEMA, WA, WS, expected_rows, file_rows, land_file, stream_data  # noqa: E402
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Log
from spark_impl.reconfig.objectstore import ObjectStoreSink, committed_files, read_committed
from spark_impl.reconfig.sinks import CallbackSink

pytestmark = pytest.mark.spark
CRASHES = {2: "after-round", 4: "after-delivery"}
"""file -> where the driver crashes while the query processes it (S3 run only)."""


def _run(spark: Any, base: Path, checkpoint: str, sink: Any, crashes: dict[int, str]) -> Any:
    """Run the files through a live query into ``sink``; its last status. Rescales: job 0 to 4
    at the next boundary after batch 0, job 1 to 1 at event time 0 (the first boundary after
    file 3 is requested)."""
    source_dir = base / "in"
    source_dir.mkdir(parents=True)
    jobs = [oplus_job("sliding-sum", WA, WS, WT="multi", parallelism=2, sources=2),
            oplus_job("sliding-sum", WA, WS, WT="single", parallelism=3)]

    def start() -> Any:
        stream = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(str(source_dir))
                  .withColumnRenamed("user", "key").withColumnRenamed("amount", "value"))
        return start_oplus_query(spark, stream, jobs, checkpoint_dir=checkpoint,
                                 query_checkpoint=str(base / "query"), sink=sink)

    data = stream_data()
    run = start()
    try:
        for f in range(6):
            if f == 1:
                run.rescale(4, job=0)
            if f == 3:
                run.rescale(1, job=1, watermark=0)
            if f in crashes:
                run.crash_at(crashes[f])
            land_file(str(source_dir), f, file_rows(data, f, f == 5))
            try:
                run.query.processAllAvailable()
            except Exception as error:  # the simulated driver crash stops the query
                assert "simulated driver crash" in str(error), error
                run.stop()
                run = start()  # a new driver on the same checkpoints
                run.query.processAllAvailable()
    finally:
        run.stop()
    return run.status()


@pytest.fixture(scope="module")
def local_run(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[list[Any], Any]]:
    base = tmp_path_factory.mktemp("oplus-local")
    table: dict[int, list[Any]] = {}
    sink = CallbackSink(lambda df, batch: table.__setitem__(batch, [tuple(r) for r in df.collect()]),
                        key_type="string", value_type="long")
    status = _run(spark, base, str(base / "ckpt"), sink, {})
    yield sorted(r for rows in table.values() for r in rows), status


def test_oplus_on_s3_with_rescales_and_driver_crashes_equals_the_local_run(
        spark: Any, endpoint: str, local_run: Any, tmp_path: Path) -> None:  # noqa: F811
    checkpoint, table = s3_uri(endpoint, "oplus-live", "ckpt"), s3_uri(endpoint, "oplus-live", "table")
    status = _run(spark, tmp_path, checkpoint, ObjectStoreSink(table, key_type="string", value_type="long"),
                  CRASHES)
    want, want_status = local_run
    rows = sorted(tuple(r.values()) for r in read_committed(table).to_pylist())
    assert rows == want, "the same rows, batch ids and instances as the uninterrupted local run"
    assert len(rows) == len(set(rows)), "every output once"
    assert len(committed_files(table)) == len(set(committed_files(table))), "no part committed twice"
    for job, wt in ((0, "multi"), (1, "single")):
        got = Counter((int(r[3]), r[4], str(r[5])) for r in rows if r[0] == job)
        assert got == expected_rows(stream_data(), job, wt, set()), job
    assert status.batch == want_status.batch == 5
    assert status.rescaled == want_status.rescaled == {0: 1, 1: 1}
    assert [(r["job"], r["before"], r["after"]) for r in status.rescales] == [(0, 2, 4), (1, 3, 1)]
    # everything of the O+ state is on S3, bounded; nothing of it on the local disk
    log = Log(checkpoint)
    assert log.committed() == [4, 5] and log.delivered() == 5 and log.store.list("out") == []
    assert len(log.store.list("state")) <= 2 and len(log.requests()) == 2
    assert sorted(os.listdir(tmp_path)) == ["in", "query"]
