"""The Fries executor on the pure-Python Spark stand-in (:mod:`conformance.standin.spark`)
and the suite's check that uses it (:mod:`conformance.fries.checks.standin`), without Spark: it
passes on the executor and names the one-line bugs it targets, which no Spark run sees."""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from conformance.fries.checks import standin as fries_local_check
from conformance.standin.spark import LocalSpark


def test_the_local_check_passes_on_the_executor() -> None:
    assert fries_local_check.local_problem() is None


def test_the_local_spark_shuffles_like_pyspark() -> None:
    """``partitionBy(P, f)`` sends ``(k, v)`` to partition ``f(k) mod P``; ``collect`` reads
    the partitions in order."""
    sc = LocalSpark(3).sparkContext
    rdd = sc.parallelize([], 3).mapPartitionsWithIndex(lambda i, _: [(i + 4, i), (7, -i)])
    shuffled = rdd.partitionBy(3, lambda k: k).mapPartitionsWithIndex(lambda i, it: [(i, v) for _, v in it])
    assert shuffled.collect() == [(0, 2), (1, 0), (1, 0), (1, -1), (1, -2), (2, 1)]
    assert shuffled.values().filter(lambda v: v < 0).collect() == [-1, -2]


def test_a_switch_report_taken_for_a_deep_stages_input_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """layout.py 29 ``STATS_LEVEL = 1 << 30`` -> ``1 | 30`` (31):
    stage 31 of a job 32 levels deep takes the switch reports for its own input and drops
    them; the request never completes and the job never ends."""
    monkeypatch.setattr("spark_impl.reconfig.task.STATS_LEVEL", 31)
    found = fries_local_check.local_problem()
    assert found is not None and "did not finish" in found


def test_restarts_that_never_happen_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py 360 ``prog.phase != "done"`` -> ``< "done"``
    ("stream" and "flush" sort after "done": no restart ever happens)."""
    from spark_impl.reconfig import driver

    class Everything(set[int]):
        def __contains__(self, item: object) -> bool:
            return True

    class NoRestarts(driver._Job):
        def __init__(self, *args: Any) -> None:
            super().__init__(*args)
            self.restarts_done = Everything()

    monkeypatch.setattr(driver, "_Job", NoRestarts)
    found = fries_local_check.local_problem()
    assert found is not None and "the crash before its commit never happened" in found


@pytest.mark.parametrize("history, ranges, words", [
    ([1, 2, 3], {1: (0, 4), 2: (4, 8), 3: (8, 8)}, "never happened"),                   # no crash
    ([1, 3, 4], {1: (0, 4), 2: (4, 8), 3: (4, 8), 4: (8, 8)}, "never happened"),        # one batch late
    ([2, 3], {1: (0, 2), 2: (0, 2), 3: (2, 8), 4: (8, 8)}, "reached no listed restart"),  # too early
])
def test_misplaced_crashes_are_named(history: list[int], ranges: dict[int, tuple[int, int]], words: str) -> None:
    scenario: Any = type("S", (), {"sources": {"S": [0] * 8}, "timing": type("T", (), {"restarts": (4,)})()})()
    found = fries_local_check._restart_problem("job", scenario, history, ranges)
    assert found is not None and words in found


@pytest.mark.parametrize("history, ranges, restarts, words", [
    # the local check's restarting job: 12 crashes while batch 4 (the request's) is pending
    ([2, 6, 7, 9, 10], {1: (0, 4), 2: (0, 4), 3: (4, 8), 4: (4, 8), 5: (8, 12), 6: (4, 8), 7: (8, 12),
                        8: (12, 16), 9: (12, 16), 10: (16, 16)}, (4, 8, 12, 16), None),
    # a restart at the whole input skipped (the job flushed in the batch that reached it)
    ([2, 4, 5, 6], {1: (0, 4), 2: (0, 4), 3: (4, 8), 4: (4, 8), 5: (8, 12), 6: (12, 16)}, (4, 8, 16),
     "reaching the restart at 16, and was committed"),
    # a pending batch left uncommitted with no crash after it
    ([2, 5], {1: (0, 4), 2: (0, 4), 3: (4, 8), 4: (4, 8), 5: (8, 16), 6: (16, 16)}, (4, 8),
     "batch 4 (tuples 4..8) ran and was never committed, though it reached no listed restart"),
])
def test_a_crash_rolls_back_the_pending_batches_and_nothing_else(
        history: list[int], ranges: dict[int, tuple[int, int]], restarts: tuple[int, ...], words: str | None) -> None:
    scenario: Any = type("S", (), {"sources": {"S": [0] * 16}, "timing": type("T", (), {"restarts": restarts})()})()
    found = fries_local_check._restart_problem("job", scenario, history, ranges)
    assert found is None if words is None else found is not None and words in found, found


def test_the_suites_contracts_check_runs_the_local_check(monkeypatch: pytest.MonkeyPatch) -> None:
    """The local check is wired into the Fries suite's Spark-free contracts check (a first
    version imported it without running it)."""
    from conformance.fries.checks.contracts import run_contracts_check
    from conformance.core.results import SuiteResult

    monkeypatch.setattr("spark_impl.reconfig.task.STATS_LEVEL", 31)
    result = SuiteResult("fries", "spark", 0)
    assert run_contracts_check(result)
    assert any("did not finish" in failure.explanation for failure in result.failures)


def test_results_read_from_a_deeper_runs_task_files_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """results.py 37 ``range(1, self.depth + 1)`` ->
    ``range(1, self.depth << 1)``: on a directory used afresh, a job 2 levels deep read the
    level-3 task files a deeper run left there (its objects' states and logs)."""
    from spark_impl.reconfig import results

    def batch(self: Any, g: int) -> Any:
        for level in range(1, self.depth << 1):
            for part in range(self.partitions):
                found = self.get(g, level, part)
                if found is not None:
                    yield found

    monkeypatch.setattr(results.FileCache, "batch", batch)
    found = fries_local_check.local_problem()
    assert found is not None and "afresh" in found


def test_a_job_left_uncommitted_after_its_users_request_completed_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py 368 without ``prog.active is not None``: a user's request blocks commits even
    in the batch that completes it; the batch stays pending until the next one."""
    from spark_impl.reconfig import driver

    original = driver.Executor._absorb

    def absorb(self: Any, plan: Any, stats: list[Any]) -> None:
        users = {s: st.live.active for s, st in enumerate(self.state)
                 if st.live.active is not None and st.live.active.user}
        original(self, plan, stats)
        for s, a in users.items():  # completed in this batch: uncommit it, as the changed driver does
            st = self.state[s]
            if st.live.active is None and st.live.history and st.live.history[-1] == plan.g:
                st.live.pending = [st.live.history.pop()]
                st.committed = st.live.snapshot()
                st.committed.pending = []
                st.committed.history = list(st.live.history)

    monkeypatch.setattr(driver.Executor, "_absorb", absorb)
    found = fries_local_check.local_problem()
    assert found is not None and "was left uncommitted" in found


def test_step_with_request_that_swallows_a_crash_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py 283 ``raise self._step_error.pop()`` dropped: a batch that crashed before its
    commit looks like one that ran."""
    from spark_impl.reconfig import driver

    def step_with_request(self: Any, delay_s: float, s: int, request: Any) -> Any:
        worker = threading.Thread(target=self._guarded_step, daemon=True)
        worker.start()
        answer = self.submit(s, request)
        worker.join()
        self._step_error.clear()  # the bug: the step's error is dropped
        return answer

    monkeypatch.setattr(driver.Executor, "step_with_request", step_with_request)
    found = fries_local_check.local_problem()
    assert found is not None and "returned from step_with_request as if it ran" in found


def test_a_task_error_replaced_on_its_way_out_is_named(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """driver.py 227 ``raise error[0]`` -> ``error[1]``: the task's exception becomes an
    IndexError in the driver."""
    from spark_impl.reconfig import driver

    original = driver.Executor.step

    def step(self: Any) -> None:
        try:
            original(self)
        except ValueError as error:
            raise IndexError("list index out of range") from error

    monkeypatch.setattr(driver.Executor, "step", step)
    found = fries_local_check._failing_task_problem(str(tmp_path))
    assert found is not None and "IndexError" in found


def test_a_delay_that_is_not_a_duration_inside_the_run_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py 355 ``(max(applied) - a.issued) * 1000.0`` with a wrong issue time (here 0:
    the delay becomes the epoch seconds of the switch)."""
    import time
    from types import SimpleNamespace

    from spark_impl.reconfig import driver

    monkeypatch.setattr(driver, "time", SimpleNamespace(time=lambda: 0.0, monotonic=time.monotonic, sleep=time.sleep))
    found = fries_local_check.local_problem()
    assert found is not None and "not a duration inside the run" in found


def test_a_partition_compared_by_identity_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """task.py ``if plan.fused and dest != part`` -> ``dest is not
    part``: equal partition numbers above 256 are distinct objects, so with the source fused
    (``fuse_source=True``) on 309 partitions every tuple was dropped."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import task

    monkeypatch.setattr(task, "source_stage", rewritten_function(task, "source_stage", "if plan.fused and dest != part:",
                                                      "if plan.fused and dest is not part:"))
    found = fries_local_check.local_problem()
    assert found is not None and "309 partitions" in found and "never processed" in found


def test_an_epoch_switch_one_batch_late_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """An epoch scheduler that switches at ``plan.g > entry.epoch_batch``
    instead of ``>=``: consistent (every oracle passed), but R1 came a batch after the ``at``
    tuples docs/spark.md promises."""
    from support.source_rewrite import rewritten_method

    from spark_impl.reconfig import task

    monkeypatch.setattr(task._Stage, "_object", rewritten_method(task._Stage, "_object", "if plan.g >= entry.epoch_batch:",
                                                        "if plan.g > entry.epoch_batch:"))
    found = fries_local_check.local_problem()
    assert found is not None and found.startswith("epoch scheduler:") and "exactly after the first 5" in found


def test_a_request_number_compared_by_identity_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """task.py ``r[4] == entry.j`` -> ``r[4] is entry.j`` in
    ``_align``: a marker's request number and the control entry's are equal but distinct
    objects above 256, so a long-running job's 257th request never aligns."""
    from support.source_rewrite import rewritten_method

    from spark_impl.reconfig import task

    monkeypatch.setattr(task._Stage, "_align", rewritten_method(task._Stage, "_align", "and r[4] == entry.j and r[5] in",
                                                       "and r[4] is entry.j and r[5] in"))
    found = fries_local_check.local_problem()
    assert found is not None and "request R257" in found and "did not complete" in found


def test_a_default_processing_cost_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """task.py ``operator_cost.get(op, 0.0)`` -> ``get(op, 1.0)``:
    every operator without a configured cost slept 1 ms per tuple; only *when* things happen
    changed, which no oracle sees. (Simulated by the costs the task reads.)"""
    from spark_impl.reconfig import api

    class CostOne(dict[str, float]):
        def get(self, key: str, default: object = None) -> float:
            return super().get(key, 1.0)

    scenario_job = api.scenario_job

    def with_default_cost(*args: Any, **kwargs: Any) -> Any:
        job = scenario_job(*args, **kwargs)
        return replace(job, timing=replace(job.timing, operator_cost=CostOne(job.timing.operator_cost)))

    monkeypatch.setattr(api, "scenario_job", with_default_cost)
    found = fries_local_check.local_problem()
    assert found is not None and found.startswith("processing costs:") and "0.005: 8" in found


def test_a_resume_that_reuses_batch_numbers_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py ``self._last_batch_on_disk() + 1 if resume`` ->
    ``% 1``: after a crash before the first commit the resumed executor numbered its batches
    from 0 again, over the crashed batch's files (its outputs still conformed)."""
    from spark_impl.reconfig import driver

    monkeypatch.setattr(driver.Executor, "_last_batch_on_disk", lambda self: -1)
    found = fries_local_check.local_problem()
    assert found is not None and "the next batch is 0, not 2" in found


def test_an_attempt_number_compared_by_identity_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py ``a.attempt != attempt`` -> ``is not`` in
    ``_absorb``: a switch report's attempt number (read back from the tasks, a new int object)
    and the active attempt are equal but distinct above 256, so a request in its 300th attempt
    never completes."""
    from support.source_rewrite import rewritten_method

    from spark_impl.reconfig import driver

    monkeypatch.setattr(driver.Executor, "_absorb", rewritten_method(driver.Executor, "_absorb",
                                                            "or a.attempt != attempt:", "or a.attempt is not attempt:"))
    found = fries_local_check.local_problem()
    assert found is not None and "attempt 300 did not finish" in found


def test_a_straggler_looked_up_by_operator_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """task.py ``stragglers.get(obj, 1.0)`` -> ``get(op, 1.0)``: a
    straggler object (``O2#1``) of an operator with 2 workers ran at the plain cost; an
    operator of one worker (its object named as the operator) cannot show it. The changed function runs
    in the task module's own globals: the check records the sleeps of the module's ``time``."""
    import types

    from support.source_rewrite import rewritten_method

    from spark_impl.reconfig import task

    broken = rewritten_method(task._Stage, "_object", "job.timing.stragglers.get(obj, 1.0)",
                     "job.timing.stragglers.get(op, 1.0)")
    monkeypatch.setattr(task._Stage, "_object", types.FunctionType(broken.__code__, vars(task), "_object"))
    found = fries_local_check.local_problem()
    assert found is not None and found.startswith("processing costs:") and "slept {0.001: 8, 0.002: 8}" in found


def test_a_flush_in_the_last_ingesting_batch_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py ``lo >= count`` -> ``prog.offset >= count`` (the offset
    after the batch): the job flushes in the batch that ingests its last tuples, and a restart
    listed at the total count is silently skipped."""
    from support.source_rewrite import rewritten_method

    from spark_impl.reconfig import driver

    monkeypatch.setattr(driver.Executor, "_plan", rewritten_method(driver.Executor, "_plan", "st.queued is None and lo >= count",
                                                          "st.queued is None and prog.offset >= count"))
    found = fries_local_check.local_problem()
    assert found is not None and "restarted after 4, 8, 12 and 16 tuples" in found
    assert "flushed the job while ingesting its tuples 12..16" in found


def test_new_version_input_of_a_late_request_compared_by_identity_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """task.py ``r[4] == entry.j`` -> ``r[4] is entry.j`` in ``_align``'s
    ``is_new`` (not the marker line): above request 256 a member processes new-version input
    before it switches; every request still completes, the schedule is not serializable."""
    from support.source_rewrite import rewritten_method

    from spark_impl.reconfig import task

    monkeypatch.setattr(task._Stage, "_align", rewritten_method(task._Stage, "_align", "and r[4] == entry.j for r in data]",
                                                       "and r[4] is entry.j for r in data]"))
    found = fries_local_check.local_problem()
    assert found is not None and found.startswith("a job whose requests are R300..R303:"), found
    assert "did not finish" not in found


def test_an_unfused_source_partition_compared_by_identity_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """task.py ``partition_of(s, "", plan.partitions) != part`` ->
    ``is not part`` in the unfused source stage: on 338 partitions the job's source task (259)
    read none of its tuples."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import task

    monkeypatch.setattr(task, "source_stage", rewritten_function(task, "source_stage",
                                                      'partition_of(s, "", plan.partitions) != part',
                                                      'partition_of(s, "", plan.partitions) is not part'))
    found = fries_local_check.local_problem()
    assert found is not None and "338 partitions with a source stage" in found and "never processed" in found


def test_committed_delays_trimmed_to_the_batches_count_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """retention.py ``trim_requests(st.committed, needed, retention.delays)`` ->
    ``retention.batches``: the commit kept the newest ``batches`` delays, not ``delays``."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import driver, retention

    monkeypatch.setattr(driver, "collect_garbage", rewritten_function(retention, "collect_garbage",
                                                           "trim_requests(st.committed, needed, retention.delays)",
                                                           "trim_requests(st.committed, needed, retention.batches)"))
    found = fries_local_check.local_problem()
    assert found is not None and "keeps the delays of [299, 300]" in found and "R296..R300" in found
