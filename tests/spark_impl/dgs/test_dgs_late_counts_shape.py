"""``DgsStreamingRun.late()`` (``spark_impl.dgs.streaming``): per job, the late events since the
query started, "also right after a start or a restart, before any micro-batch: every job of the
query is present, with 0 while it has none ... The values add up to ``late_count()`` and
``status().late``" (docs/production/dgs.md, "The late policies"). On the live query over the
Spark stand-in (:mod:`conformance.standin`), the ``foreachBatch`` function called batch by batch.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from spec.dgs.loader import load_program

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import Frame, Stream
from spark_impl.dgs.streaming import DgsStreamingRun, LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.lateness import LateEventError
from support.paths import TESTS

COUNTER = os.path.join(str(TESTS), "support", "dgs_live_programs.py:WordCounter")
PLAN = keyed_plan(load_program(COUNTER), ("s0", "s1"), 2)


def _start(root: Path, policy: str = "drop") -> tuple[DgsStreamingRun, Stream]:
    stream = Stream(columns=("value",))
    run = start_dgs_query(LocalSpark(), [LiveJob(COUNTER, PLAN)] * 3, stream, checkpoint_dir=str(root),
                          late_policy=policy)
    return run, stream


def _batch(stream: Stream, batch_id: int, rows: list[dict[str, Any]]) -> None:
    stream.handler(Frame([json.dumps(r) for r in rows]), batch_id)


def _event(job: int, stream: str, ts: int) -> dict[str, Any]:
    return {"job": job, "stream": stream, "ts": ts, "event": ["i", "alice"]}


def _shape_holds(run: DgsStreamingRun, expected: dict[int, int]) -> None:
    assert run.late() == expected
    assert sum(expected.values()) == run.late_count() == run.status().late
    assert all(run.late_count(job=j) == n for j, n in expected.items())


def test_late_lists_every_job_with_0_right_after_start_before_any_batch(tmp_path: Path) -> None:
    run, _ = _start(tmp_path)
    _shape_holds(run, {0: 0, 1: 0, 2: 0})


def test_late_counts_each_jobs_dropped_events_and_keeps_every_job_across_a_restart(tmp_path: Path) -> None:
    run, stream = _start(tmp_path)
    _batch(stream, 0, [_event(0, "s0", 20), _event(1, "s0", 20), _event(1, "s1", 20)])
    _shape_holds(run, {0: 0, 1: 0, 2: 0})
    _batch(stream, 1, [_event(1, "s0", 3), _event(1, "s1", 4), _event(0, "s0", 5), _event(0, "s0", 30)])
    _shape_holds(run, {0: 1, 1: 2, 2: 0})
    assert run.late_count(job=1, stream="s1") == 1
    run.stop()
    again, _ = _start(tmp_path)  # before any micro-batch of the new driver: the committed counts
    _shape_holds(again, {0: 1, 1: 2, 2: 0})


def test_a_batch_that_fails_on_a_late_event_leaves_every_count_as_committed(tmp_path: Path) -> None:
    """Under ``"fail"`` the batch never commits, so nothing of it is counted."""
    run, stream = _start(tmp_path, policy="fail")
    _batch(stream, 0, [_event(2, "s0", 20)])
    with pytest.raises(LateEventError):
        _batch(stream, 1, [_event(2, "s0", 3)])
    _shape_holds(run, {0: 0, 1: 0, 2: 0})
