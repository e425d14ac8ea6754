"""A live DGS query's checkpoint on a real S3 API (moto's server on 127.0.0.1, started and
stopped by the fixture of tests/support/s3_fixtures.py): the commit records,
the leaf states and the task records go through ``spark_impl.store`` (``checkpoint_dir=s3://...``);
Structured Streaming's own checkpoint (``query_checkpoint``) stays on a local path (s3a://
would need the hadoop-aws jars).

The key counter with string keys runs on a file source that grows while the query runs, with
heartbeats, twice: on a local checkpoint without interruption (outputs collected by a
callback), and on S3 with a re-plan (2 -> 3 leaves) while it runs, driver kills before a
commit and between a delivery and its record, each followed by a restart, its outputs in an
``ObjectStoreSink`` table on S3 (write-once parts and manifests). Both deliver, exactly once,
the sequential program's outputs (spec_run of the sorted input); the S3 checkpoint stays
bounded and nothing of it is written to a local path."""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import sort_streams, value_to_json
from spec.errors import InputError

from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.dgs.streaming_store import Store
from spark_impl.records import RecordLog
from spark_impl.store import join, open_store

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.s3_server import s3_uri  # noqa: E402
from support.dgs_live_stream import COUNTER, STREAMS, counter_streams, json_rows, land_file  # noqa: E402
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.reconfig.objectstore import ObjectStoreSink, read_committed
from spark_impl.reconfig.sinks import CallbackSink

pytestmark = pytest.mark.spark


class Deliveries:
    """A sink idempotent by batch id that counts how often each id was delivered: it keeps the
    last delivery of each id in memory, or passes it to an ``ObjectStoreSink`` at ``table``."""

    def __init__(self, table: str | None) -> None:
        self.table = table
        self.rows: dict[int, list[str]] = {}
        self.calls: Counter[int] = Counter()

    def __call__(self, df: Any, batch_id: int) -> None:
        self.calls[batch_id] += 1
        if self.table is not None:
            ObjectStoreSink(self.table).deliver(df, batch_id)
        else:
            self.rows[batch_id] = [r["value"] for r in df.collect()]

    def outputs(self) -> Counter[str]:
        if self.table is not None:
            committed = read_committed(self.table)
            assert committed.column_names == ["job", "batch", "value"]
            values = committed.column("value").to_pylist()
        else:
            values = [v for rows in self.rows.values() for v in rows]
        return Counter(json.dumps(json.loads(v)) for v in values)


def _run(spark: Any, root: Path, checkpoint: str | None, table: str | None, crashes: bool
         ) -> tuple[Deliveries, Any]:
    """Run the stream's chunks through a query (module docstring); returns the sink and the
    final states."""
    program = load_program(COUNTER)
    source = root / "in"
    source.mkdir(parents=True)
    sink = Deliveries(table)

    def start(leaves: int, crash_at: str | None = None) -> Any:
        stream = spark.readStream.option("maxFilesPerTrigger", 1).text(str(source))
        return start_dgs_query(spark, [LiveJob(COUNTER, keyed_plan(program, STREAMS, leaves))], stream,
                               checkpoint_dir=checkpoint or str(root / "ckpt"),
                               query_checkpoint=str(root / "query-ckpt") if checkpoint else None,
                               sink=CallbackSink(sink), crash_at=crash_at)

    rows = json_rows(counter_streams(5, 40))
    chunks = [rows[i: i + 7] for i in range(0, len(rows), 7)]
    run = start(2)
    for number in (0, 1):
        land_file(str(source), number, chunks[number])
        run.process_all()
        if number == 0:
            run.replan(keyed_plan(program, STREAMS, 3))  # applied at the next batch, while it runs
    assert run.replanned == [(1, 0)]
    if crashes:
        run.stop()
        land_file(str(source), 2, chunks[2])
        for point in ("before-commit", "after-deliver"):
            run = start(3, crash_at=point)
            with pytest.raises(Exception, match="simulated driver kill"):
                run.process_all()
            run.query.stop()
        assert run.committed().batch == 2 and run.committed().delivered == 1  # delivered, not recorded
        run = start(3)  # the restart delivers batch 2 again (same id), then goes on
        assert sink.calls[2] == 2
    for number in range(2 if not crashes else 3, len(chunks)):
        land_file(str(source), number, chunks[number])
        run.process_all()
    final = run.final_states()
    run.stop()
    return sink, final[0]


def test_dgs_live_checkpoint_on_s3_with_replan_and_restarts_equals_the_local_run(
        spark: Any, endpoint: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a URI mistaken for a local path would land here
    program = load_program(COUNTER)
    local, local_state = _run(spark, tmp_path / "local", None, None, False)
    checkpoint = s3_uri(endpoint, "ckpt", "run")
    remote, remote_state = _run(spark, tmp_path / "s3", checkpoint, s3_uri(endpoint, "results", "dgs"), True)

    expected_state, expected = spec_run(program, sort_streams(counter_streams(5, 40)))
    want = Counter(json.dumps(value_to_json(x)) for x in expected)
    assert local.outputs() == want
    assert remote.outputs() == want  # every output once, across the re-plan and both kills
    assert program.states_equal(program.initial, local_state, expected_state)
    assert program.states_equal(program.initial, remote_state, expected_state)

    # the DGS checkpoint is on S3 and bounded; only Structured Streaming's is local
    state_dir = join(checkpoint, "dgs")
    store = open_store(state_dir)
    assert set(store.list("")) <= {"commits", "states", "records"}, store.list("")
    assert len(RecordLog(store, "commits").sequences()) <= 2
    assert len(store.list("states")) == 1 and store.list("records") == []
    commit = Store(state_dir).read()
    assert commit is not None and commit.delivered == commit.batch
    assert sorted(os.listdir(tmp_path / "s3")) == ["in", "query-ckpt"]
    assert sorted(os.listdir(tmp_path)) == ["local", "s3"]
    assert open_store(checkpoint).list("") == ["dgs"]


def test_a_uri_checkpoint_needs_query_checkpoint(spark: Any, tmp_path: Path) -> None:
    program = load_program(COUNTER)
    stream = spark.readStream.text(str(tmp_path))
    with pytest.raises(InputError, match="give query_checkpoint= too") as caught:
        start_dgs_query(spark, [LiveJob(COUNTER, keyed_plan(program, STREAMS, 2))], stream,
                        checkpoint_dir="s3://key:secret@bucket/ckpt?region=us-east-1")
    assert "secret" not in str(caught.value)
