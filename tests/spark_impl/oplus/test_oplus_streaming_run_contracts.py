"""A running live O+ query's controls (:class:`spark_impl.oplus.streaming.OplusStreamingRun`):
``rescale``, ``crash_at``, ``status`` and ``stop``, as their docstrings promise, without Spark
(the query on the stand-ins of ``support.oplus_live_standin``, or a run object over a checkpoint).

* ``rescale(parallelism, *, job=0, watermark=None)``: a job index out of range, a parallelism
  outside ``1..MAX_PARALLELISM`` or not an ``int`` (a bool, a float), a watermark not an ``int``
  or None are refused with InputError at ``job`` / ``parallelism`` / ``watermark`` and leave no
  request; an accepted request is "durable once this returns" and gets an id (increasing), and is
  listed with its fields;
* ``crash_at(point)``: an unknown point is refused; a known one makes "the next batch fail at
  ``point``" - once;
* ``status()``: "the last committed batch's record" (None before any commit);
* ``stop()``: "one that starts afterwards raises ``StreamStopped`` before doing anything", and
  the query is stopped.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, Callable

import pytest

from spec.errors import InputError
from spec.oplus.budget import MAX_PARALLELISM

from spark_impl.oplus.streaming import CRASH_POINTS, OplusStreamingRun, SimulatedCrash
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit, Log
from spark_impl.reconfig.streaming import StreamStopped

from conformance.standin.streaming import Query

from support.oplus_live_standin import start_local


def _run(root: Path) -> OplusStreamingRun:
    jobs = [oplus_job("sliding-sum", 2, 4, parallelism=2), oplus_job("scalejoin", 1, 3, params={"keys": 2})]
    return OplusStreamingRun(Query(), jobs, Log(str(root)))


BAD_RESCALES: list[tuple[str, Callable[[OplusStreamingRun], Any], str]] = [
    ("job 2 of 2", lambda run: run.rescale(2, job=2), "job"),
    ("job -1", lambda run: run.rescale(2, job=-1), "job"),
    ("parallelism 0", lambda run: run.rescale(0), "parallelism"),
    ("parallelism above the largest", lambda run: run.rescale(MAX_PARALLELISM + 1), "parallelism"),
    ("parallelism True", lambda run: run.rescale(True), "parallelism"),
    ("parallelism 2.0", lambda run: run.rescale(2.0), "parallelism"),  # type: ignore[arg-type]
    ("watermark True", lambda run: run.rescale(2, watermark=True), "watermark"),
    ("watermark 1.5", lambda run: run.rescale(2, watermark=1.5), "watermark"),  # type: ignore[arg-type]
    ("watermark '3'", lambda run: run.rescale(2, watermark="3"), "watermark"),  # type: ignore[arg-type]
]


@pytest.mark.parametrize("what, call, where", BAD_RESCALES, ids=[b[0] for b in BAD_RESCALES])
def test_a_bad_rescale_is_refused_where_it_is_wrong_and_leaves_no_request(
        tmp_path: Path, what: str, call: Callable[[OplusStreamingRun], Any], where: str) -> None:
    run = _run(tmp_path)
    with pytest.raises(InputError) as refused:
        call(run)
    assert refused.value.where == where
    assert run.log.requests() == [] and run.refused  # listed by run_status()


def test_accepted_rescales_get_increasing_ids_and_are_listed_with_their_fields(tmp_path: Path) -> None:
    run = _run(tmp_path)
    first = run.rescale(MAX_PARALLELISM, job=1)
    second = run.rescale(1, watermark=-5)  # job 0 by default
    assert first < second
    again = Log(str(tmp_path)).requests()  # durable: another reader of the checkpoint sees them
    assert [(r["id"], r["job"], r["parallelism"], r["watermark"]) for r in again] == [
        (first, 1, MAX_PARALLELISM, None), (second, 0, 1, -5)]
    with pytest.raises(TypeError):
        run.rescale(2, 1)  # type: ignore[call-arg]  # job and watermark are keyword-only


def test_status_is_the_last_commit_record(tmp_path: Path) -> None:
    run = _run(tmp_path)
    assert run.status() is None
    record = Commit(3, {0: 2, 1: 1}, {0: 2, 1: 4}, 2, watermark={0: 7.0, 1: -math.inf}, applied=[1])
    run.log.write_commit(record)
    status = run.status()
    assert status is not None and status.to_json() == record.to_json()


def test_an_unknown_crash_point_is_refused(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        _run(tmp_path).crash_at("before-round")


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_a_crash_point_fails_the_next_batch_there_once(tmp_path: Path, point: str) -> None:
    """``after-round``: the round's files written, no commit record; ``after-commit``: committed,
    not delivered; ``after-delivery``: delivered, not recorded as delivered (CRASH_POINTS)."""
    live = start_local([oplus_job("sliding-sum", 2, 4)], str(tmp_path))
    live.run.crash_at(point)
    with pytest.raises(SimulatedCrash, match=point):
        live.batch(0, [{"ts": 1, "key": 1, "value": 1}, {"ts": 9, "key": 1, "value": 2}])
    committed = {"after-round": [], "after-commit": [0], "after-delivery": [0]}[point]
    assert live.run.log.committed() == committed
    assert live.run.log.delivered() == -1
    live.batch(0, [{"ts": 1, "key": 1, "value": 1}, {"ts": 9, "key": 1, "value": 2}])  # the replay
    live.batch(1, [{"end": True}])  # no crash asked for: runs
    assert live.run.log.delivered() == 1 and live.run.log.committed()[-1] == 1
    rows = sorted((ts, key, value) for batch in live.delivered.values() for *_, ts, key, value in batch)
    assert rows == [(2, 1, 1), (4, 1, 1), (10, 1, 2), (12, 1, 2)]  # each window once, none lost


def test_a_batch_that_starts_after_stop_is_refused(tmp_path: Path) -> None:
    live = start_local([oplus_job("sliding-sum", 2, 4)], str(tmp_path))
    live.batch(0, [{"ts": 1, "key": 1, "value": 1}])
    live.run.stop()
    assert live.run.query.stopped
    with pytest.raises(StreamStopped):
        live.batch(1, [{"ts": 5, "key": 1, "value": 1}])
    assert live.run.log.committed() == [0]
