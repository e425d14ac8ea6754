"""The live O+ front end after a driver killed while it wrote a commit record (the newest
``commits/<b>.rec`` torn, as on ``file://`` or HDFS): the restart replays batch ``b`` from the
previous commit, sets the torn record aside and commits ``b`` again; the Parquet results are
exactly once (spark_impl.records module docstring). A kill right after the record's write
("after-commit": nothing after the record happened, no rescale pending) with the record then
cut is what a kill mid-write leaves."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Any

import pytest

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.oplus_live_stream import expected_rows, file_rows, land_file, recipe_query, stream_data  # noqa: E402

pytestmark = pytest.mark.spark


def test_a_kill_while_writing_the_commit_record_replays_the_batch_exactly_once(spark: Any, tmp_path: Any) -> None:
    source_dir, checkpoint, table, start = recipe_query(spark, tmp_path)

    data = stream_data(seed=3, files=4)
    commits = os.path.join(checkpoint, "oplus", "commits")
    run = start()
    for f in range(4):
        if f == 2:
            run.crash_at("after-commit")
        land_file(source_dir, f, file_rows(data, f, f == 3))
        try:
            run.query.processAllAvailable()
        except Exception as error:  # the simulated kill stops the query
            assert "simulated driver crash" in str(error), error
            run.stop()
            newest = os.path.join(commits, max(n for n in os.listdir(commits) if n.endswith(".rec")))
            with open(newest, "r+b") as handle:  # the kill came while the record was being written
                handle.truncate(os.path.getsize(newest) // 2)
            run = start()
            run.query.processAllAvailable()
            assert os.path.basename(newest) + ".torn" in os.listdir(commits)
    status = run.status()
    run.stop()
    assert status is not None and status.batch == 3
    got = spark.read.parquet(table).collect()
    for job, wt in ((0, "multi"), (1, "single")):
        rows = Counter((int(r["ts"]), r["key"], json.dumps(int(r["value"]))) for r in got if r["job"] == job)
        assert rows == expected_rows(data, job, wt, set()), job
