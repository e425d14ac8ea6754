"""The DGS backlog: "events held in the mailboxes, waiting for a heartbeat or a dependency"
(docs/production/operating.md, "Logging"), the same value in the INFO line of every batch, the
``streamproof_backlog`` metric ("the backlog after the last batch (as in the log line)") and
``status().backlog`` ("Status"). With ``allowed_lateness`` an event waits in the mailbox until
its stream has shown a timestamp ``allowed_lateness + 1`` later (``spark_impl.dgs.streaming_input``):
those events are backlog too. On the live query over the Spark stand-in
(:mod:`conformance.standin`), the ``foreachBatch`` function called batch by batch.
"""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import pytest

from spec.dgs.loader import load_program

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import Frame, Stream
from spark_impl.dgs.streaming import DgsStreamingRun, LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.status import read_status
from support.paths import TESTS

COUNTER = os.path.join(str(TESTS), "support", "dgs_live_programs.py:WordCounter")
PLAN = keyed_plan(load_program(COUNTER), ("s0", "s1"), 2)
LATENESS = 100


def _rows(first: int, count: int) -> list[str]:
    return [json.dumps({"stream": "s0", "ts": ts, "event": ["i", ("alice", "bob")[ts % 2]]}) for ts in range(first, first + count)]


def _seen(run: DgsStreamingRun) -> tuple[int, float | None, int | None]:
    """The backlog of the last log line, the metric and the status."""
    assert run.observer.last is not None
    metric = run.observer.registry.get_sample_value("streamproof_backlog")
    return run.observer.last.backlog, metric, run.status().backlog


def test_events_waiting_for_the_watermark_are_backlog_in_the_log_line_the_metric_and_status(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    stream = Stream(columns=("value",))
    run = start_dgs_query(LocalSpark(), [LiveJob(COUNTER, PLAN)], stream, checkpoint_dir=str(tmp_path),
                          allowed_lateness=LATENESS)
    with caplog.at_level(logging.INFO, logger="streamproof.dgs"):
        stream.handler(Frame(_rows(0, 40)), 0)  # ts 0..39: all within the lateness, none taken
    assert _seen(run) == (40, 40.0, 40)
    assert "backlog 40" in caplog.text
    stream.handler(Frame(_rows(40, 40)), 1)  # ts 40..79: still none behind the watermark
    assert _seen(run) == (80, 80.0, 80)
    stream.handler(Frame([json.dumps({"stream": s, "ts": 1000, "heartbeat": True}) for s in ("s0", "s1")]), 2)
    assert _seen(run) == (0, 0.0, 0)  # the heartbeats moved both watermarks past every event
    run.stop()
    assert read_status(str(tmp_path)).backlog == 0


def test_the_backlog_survives_a_restart_in_the_checkpoints_status(tmp_path: Path) -> None:
    stream = Stream(columns=("value",))
    run = start_dgs_query(LocalSpark(), [LiveJob(COUNTER, PLAN)], stream, checkpoint_dir=str(tmp_path),
                          allowed_lateness=LATENESS)
    stream.handler(Frame(_rows(0, 25)), 0)
    run.stop()
    assert read_status(str(tmp_path)).backlog == 25
