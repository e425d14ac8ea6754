"""The live DGS front end's refusals and ``foreachBatch`` bookkeeping, before and without Spark
(``spark_impl/dgs/streaming.py``):

* ``start_dgs_query`` refuses with InputError, before any Spark call, a source that is not
  streaming, a missing column, no jobs, an unknown crash point, a filesystem URI without
  ``query_checkpoint``, an unopenable checkpoint, a checkpoint of the older layout and one of
  other jobs (docs/spark.md, "DGS on a live stream");
* ``DgsStreamingRun.replan`` refuses a job index out of range and a P-invalid plan (nothing
  left pending) and queues a valid one;
* ``DgsStreamingRun.handle`` (the ``foreachBatch`` function): a committed and delivered batch
  replayed is listed in ``replayed`` (not ``batches``), its wall time kept in ms, nothing
  written; a malformed row stops the query with its InputError, which ``process_all``
  raises; a batch after ``stop()`` raises ``StreamStopped``; the bookkeeping lists keep the
  last ``REMEMBERED`` entries ("bounded memory on a stream that runs for months").
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Callable, Sequence

import pytest

from reference.dgs.examples import target
from spark_impl.dgs import streaming
from spark_impl.dgs.streaming import DgsStreamingRun, LiveJob, start_dgs_query
from spark_impl.dgs.streaming_input import Mailbox
from spark_impl.dgs.streaming_store import Commit, Store
from spark_impl.dgs.tasks import Layout
from spark_impl.dgs.topology import topology
from spark_impl.reconfig.streaming import REMEMBERED, StreamStopped

from conformance.core.refusals import refused
from conformance.dgs.cases import draw_dgs_cases, program_of
from conformance.dgs.plan_oracles.plans import unknown_tag
from conformance.standin.streaming import Frame, Stream

CASE = draw_dgs_cases(1, 0)[0]
JOB = LiveJob(target(CASE.name), CASE.plan, CASE.inline_below)


def start_attempts(root: Path) -> list[tuple[str, Callable[[], Any], str | None]]:
    """Each bad start, with where its refusal must point."""
    other = root / "other"
    Store(str(other / "dgs")).write(Commit([(JOB.target, CASE.plan.to_json(), JOB.inline_below + 1)],
                                           mailboxes=[Mailbox()]))
    old = root / "old"
    (old / "dgs").mkdir(parents=True)
    (old / "dgs" / "commit.pkl").write_bytes(b"an old layout")

    def start(jobs: Sequence[Any] = (JOB,), source: Any = None, **options: Any) -> Any:
        options.setdefault("checkpoint_dir", str(root / "new"))
        return start_dgs_query(None, jobs, source or Stream(columns=("value",)), **options)

    return [
        ("a source that is not streaming", lambda: start(source=Stream(False, ("value",))), None),
        ("a missing column", lambda: start(column="text"), None),
        ("no jobs", lambda: start(()), None),
        ("an unknown crash point", lambda: start(crash_at="before-deliver"), None),
        ("an s3 checkpoint without query_checkpoint", lambda: start(checkpoint_dir="s3://nowhere/ckpt"),
         "query_checkpoint"),
        ("a checkpoint of an unknown filesystem",
         lambda: start(checkpoint_dir="nosuchfs://nowhere/ckpt", query_checkpoint=str(root / "q")), "checkpoint_dir"),
        ("a checkpoint of the old layout", lambda: start(checkpoint_dir=str(old)), "checkpoint_dir"),
        ("a checkpoint of other jobs, with a crash point",
         lambda: start(checkpoint_dir=str(other), crash_at="after-deliver"), os.path.abspath(other)),
    ]


@pytest.mark.parametrize("index", range(8))
def test_start_dgs_query_refuses_bad_arguments_before_spark(tmp_path: Path, index: int) -> None:
    what, call, where = start_attempts(tmp_path)[index]
    assert refused(call, where, f"starting with {what}") is None


def new_run(root: Path) -> DgsStreamingRun:
    """A query's run object on the checkpoint ``root``, nothing committed, no Spark."""
    program = program_of(CASE.name)
    return DgsStreamingRun(None, Store(str(root)), Layout((JOB.target,), (topology(program, CASE.plan),)), [program],
                           [JOB], None, False)


@pytest.mark.parametrize("what, job", [("job 1 of 1", 1), ("job -1", -1), ("job 4 of 1", 4)])
def test_a_re_plan_of_no_job_is_refused_and_nothing_is_pending(tmp_path: Path, what: str, job: int) -> None:
    run = new_run(tmp_path)
    assert refused(lambda: run.replan(CASE.plan, job=job), "job", f"a re-plan of {what}") is None
    assert not run.pending


def test_a_p_invalid_re_plan_is_refused_and_nothing_is_pending(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    assert refused(lambda: run.replan(unknown_tag(CASE.plan, "s0")), None, "a P-invalid re-plan") is None
    assert not run.pending


def test_a_valid_re_plan_given_as_json_is_queued_as_that_plan(tmp_path: Path) -> None:
    run = new_run(tmp_path)
    run.replan(CASE.plan.to_json(), job=0)
    assert list(run.pending) == [0] and run.pending[0].to_json() == CASE.plan.to_json()


class Clock:
    """``time`` for the front end's module: ``perf_counter`` returns the given readings."""

    def __init__(self, *readings: float) -> None:
        self.readings = list(readings)

    def perf_counter(self) -> float:
        return self.readings.pop(0)


class FailedQuery:
    def processAllAvailable(self) -> None:  # noqa: N802 - Spark's name
        raise RuntimeError("py4j: the foreachBatch function failed")


def committed_run(root: Path) -> DgsStreamingRun:
    """A run whose batch 5000 is committed and delivered (its numbers read back as from a record)."""
    run = new_run(root)
    run.commit(Commit([], int("5000"), "init", [Mailbox() for _ in run.jobs], int("5000")))
    return run


def test_a_replayed_committed_batch_is_listed_as_replayed_timed_in_ms_and_writes_nothing(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    run = committed_run(tmp_path)
    records = run.store.location.list("commits")
    monkeypatch.setattr(streaming, "time", Clock(100.0, 100.25))
    run.handle(Frame([]), 5000, "value")
    assert (run.replayed, run.batches, run.batch_ms) == ([5000], [], {5000: 250.0})
    assert run.store.location.list("commits") == records


def test_a_malformed_row_stops_the_query_and_process_all_raises_its_input_error(tmp_path: Path) -> None:
    run = committed_run(tmp_path)
    assert refused(lambda: run.handle(Frame(["{\"stream\": 1}"]), 5001, "value"), "batch 5001, row 0",
                   "a micro-batch with a malformed row") is None
    assert run.error is not None
    run.query = FailedQuery()
    assert refused(run.process_all, "batch 5001, row 0", "process_all after a malformed row") is None
    assert 5001 not in run.batch_ms and run.committed().batch == 5000


def test_a_batch_after_stop_raises_stream_stopped_and_changes_nothing(tmp_path: Path) -> None:
    run = committed_run(tmp_path)
    run.stopping.set()
    with pytest.raises(StreamStopped):
        run.handle(Frame([]), 5002, "value")
    assert 5002 not in run.batch_ms and run.committed().batch == 5000


def test_the_bookkeeping_keeps_the_last_remembered_entries(tmp_path: Path) -> None:
    run = committed_run(tmp_path)
    for batch in range(REMEMBERED + 3):
        run.handle(Frame([]), batch, "value")
    assert run.replayed == list(range(3, REMEMBERED + 3))
    assert sorted(run.batch_ms) == list(range(3, REMEMBERED + 3))
