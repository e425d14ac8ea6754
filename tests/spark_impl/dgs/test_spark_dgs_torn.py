"""The live DGS front end after a driver killed while it wrote a commit record (the newest
``commits/`` record torn, as on ``file://`` or HDFS): the restart replays the batch from the
previous commit, the results in Parquet are exactly once, the torn record is set aside
(spark_impl.records module docstring). A kill right after the record's write ("after-commit":
nothing after the record happened) with the record then cut is what a kill mid-write leaves."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from typing import Any

import pytest

from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import StreamEvent, sort_streams, value_to_json
from spark_impl.dgs.streaming_plan import keyed_plan

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.dgs_live_stream import COUNTER, STREAMS, counter_streams, json_rows, land_file, start_query  # noqa: E402

pytestmark = pytest.mark.spark


def test_a_kill_while_writing_the_commit_record_replays_the_batch_exactly_once(spark: Any, tmp_path: Any) -> None:
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "in"))
    program = load_program(COUNTER)
    plan = keyed_plan(program, STREAMS, 2)
    streams = counter_streams(11, 16)
    rows = json_rows(streams)
    chunks = [rows[i: i + 9] for i in range(0, len(rows), 9)]
    land_file(os.path.join(root, "in"), 0, chunks[0])
    run = start_query(spark, root, COUNTER, plan, crash_at="after-commit")
    with pytest.raises(Exception, match="simulated driver kill"):
        run.process_all()
    run.query.stop()
    commits = os.path.join(root, "ckpt", "dgs", "commits")
    newest = os.path.join(commits, max(os.listdir(commits)))
    with open(newest, "r+b") as handle:  # the kill came while the record was being written
        handle.truncate(os.path.getsize(newest) - 7)
    run = start_query(spark, root, COUNTER, plan)
    for number in range(1, len(chunks)):
        land_file(os.path.join(root, "in"), number, chunks[number])
    run.process_all()
    assert run.replayed == []  # batch 0 was not committed: computed again, not skipped
    final = run.final_states()
    run.stop()
    assert os.path.basename(newest) + ".torn" in os.listdir(commits)
    table = spark.read.parquet(os.path.join(root, "out")).collect()
    got = Counter(json.dumps(json.loads(r["value"])) for r in table)
    expected_state, expected = spec_run(program, sort_streams(streams))
    assert got == Counter(json.dumps(value_to_json(x)) for x in expected)
    assert sum(got.values()) == sum(1 for s in streams.values() for i in s
                                    if isinstance(i, StreamEvent) and i.payload[0] == "r")
    assert program.states_equal(program.initial, final[0], expected_state)
