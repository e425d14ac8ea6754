"""The Fries executor run end to end on the pure-Python Spark stand-in
(:class:`conformance.standin.spark.LocalSpark`, which runs the executor's own stages, task
files, control log and driver in this process), on shapes a Spark run cannot afford and
bookkeeping no output shows. Each test cites the docstring (``spark_impl.reconfig.driver``,
``task``, ``layout``, ``retention``) or docs/spark.md section whose promise it checks; a run
is judged by every oracle of :mod:`conformance.fries.oracles` besides.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.scenario import scenario_from_json
from support.fries_chains import BOUND, SleepRecorder, chain_json, conformance_problem, run_to_end
from support.fries_commit_bookkeeping import restart_problem, uncommitted

from conformance.fries.engines.batch import delay_problem
from conformance.fries.engines.stepped import CommitWatch
from conformance.standin.spark import LocalSpark
from spark_impl.reconfig import ListSource, UserOperator, task, user_job
from spark_impl.reconfig.api import collect_results, scenario_job
from spark_impl.reconfig.driver import FUSE_MAX_PARTITIONS, Executor
from spark_impl.reconfig.layout import request_name
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.task import load_plan

DEPTH = 32
"""Levels of the deep job."""

REQUESTS = 12
"""A long-running job's requests (more than the retention keeps of anything)."""

STEPS_PER_REQUEST = 20
"""Batches a request may take to complete (it needs 2)."""

KEPT_DELAYS = 5
"""The long-running job's ``Retention(2, delays=...)``."""


class Crash(Exception):
    """A driver crash before a commit (the ``before_commit`` seam)."""


def crash(plan: Any) -> None:
    raise Crash(f"crash before the commit of batch {plan.g}")


def run_problem(directory: Path, named: dict[str, Any], *, submit: bool = False, partitions: int = 2,
                fuse_source: bool | None = None) -> str | None:
    """Run the named scenarios in one executor (``partitions``) on ``directory`` (used afresh:
    no resume), at most :data:`BOUND` batches; the first broken promise, or None. After every
    batch the Fries §7.3 commit rule both ways (``CommitWatch`` and :func:`uncommitted`); at
    the end every request completed with a delay inside the run, every oracle, no flush while
    ingesting and the restart bookkeeping. ``submit``: job 0's request is a user's, made by
    ``Executor.step_with_request`` in its second batch, and once the run is done a batch that
    crashes before its commit must raise out of ``step_with_request``."""
    names, scenarios = list(named), list(named.values())
    jobs = [scenario_job(sc) for sc in scenarios]
    user = jobs[0].planned[0].request if submit else None
    if submit:
        jobs[0] = replace(jobs[0], planned=())
    began = time.monotonic()
    ex = Executor(LocalSpark(), jobs, "fries", str(directory), partitions=partitions, fuse_source=fuse_source)
    watch = CommitWatch()
    for batch in range(BOUND):
        if ex.done():
            break
        if user is not None and batch == 1:
            answer = ex.step_with_request(0.01, 0, user)
            if answer is not None:
                return f"{names[0]}: step_with_request's request was rejected: {answer}"
        else:
            ex.step()
        for s, problem in sorted({**watch.after_batch(ex), **uncommitted(ex)}.items()):
            return f"{names[s]}: {problem}"
    if not ex.done():
        return f"{' and '.join(names)} did not finish in {BOUND} batches (a run needs about 6)"
    elapsed_ms = (time.monotonic() - began) * 1000.0
    plans = {g: load_plan(str(directory), g) for g in range(1, ex.g)}  # the batches this executor ran
    for s, (scenario, result, name) in enumerate(zip(scenarios, collect_results(ex), names)):
        if len(result.delays_ms) != len(scenario.reconfigurations) or result.rejected:
            return (f"{name}: {len(result.delays_ms)} of {len(scenario.reconfigurations)} requests completed "
                    f"(rejected: {list(result.rejected)})")
        found = delay_problem(result.delays_ms, elapsed_ms)
        found = f"{name}: {found}" if found is not None else conformance_problem(name, scenario, result)
        if found is not None:
            return found
        flushing = [g for g, p in plans.items() if s in p.flush and p.ranges[s][0] != p.ranges[s][1]]
        if flushing:
            return (f"{name}: batch {flushing[0]} flushed the job while ingesting its tuples: the flush runs in one "
                    "last batch, after the input (docs/spark.md)")
        found = restart_problem(name, scenario, ex.state[s].committed.history,
                                {g: p.ranges[s] for g, p in plans.items() if s in p.active})
        if found is not None:
            return found
    if user is not None:
        ex.before_commit = crash
        try:
            ex.step_with_request(0.0, 0, user)
        except Crash:
            return None
        return f"{names[0]}: a batch that crashed before its commit returned from step_with_request as if it ran"
    return None


@pytest.fixture(scope="module")
def deep_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str | None]:
    """A job 32 levels deep and a job restarted after 4, 8, 12 and 16 tuples in one executor:
    the directory and the first broken promise."""
    directory = tmp_path_factory.mktemp("deep")
    return directory, run_problem(directory, {
        "the job 32 levels deep": scenario_from_json(chain_json(DEPTH, 6, at=2), "deep"),
        "the job restarted after 4, 8, 12 and 16 tuples":
            scenario_from_json(chain_json(2, 16, at=8, restarts=(4, 8, 12, 16)), "restarting")})


def test_a_job_of_any_depth_completes_and_restarts_happen_as_listed(deep_run: tuple[Path, str | None]) -> None:
    """``layout``: stage ``L`` runs the objects of level ``L``, and ``task``: a switch report is
    "passed to the end", whatever the job's depth. ``driver``'s ``timing.restarts``: "the batch
    in which a job's ingestion reaches a listed count runs, then the job crashes before its
    commit and recovers from its last commit (state, offset, requests ...)" (4 a batch
    boundary, 8 the batch that makes the request, 12 reached while it is pending, 16 the whole
    input). docs/spark.md: "A job flushes its blocking operators [...] in one last batch, only
    after every request completed". Fries §7.3: commits exactly when the rule allows."""
    assert deep_run[1] is None


def test_a_directory_used_afresh_reads_only_its_own_batches(deep_run: tuple[Path, str | None]) -> None:
    """``task.load_plan``: "a checkpoint directory used afresh rewrites" the plans; the results
    are read from the run's own batches, levels and partitions, never from a deeper run's task
    files still on the directory. On 9 partitions (more than ``FUSE_MAX_PARTITIONS``: the source
    has a stage of its own); the request a user's, made by ``Executor.step_with_request``
    (accepted, completed, the job not committed until it completes; then a batch that crashes
    before its commit raises out of ``step_with_request``)."""
    assert FUSE_MAX_PARTITIONS < 9
    directory, _ = deep_run
    found = run_problem(directory, {"a job 2 levels deep run afresh (a user's request)":
                                    scenario_from_json(chain_json(2, 6, at=3), "afresh")}, submit=True, partitions=9)
    assert found is None


def test_fuse_source_fuses_the_source_at_any_partition_count(tmp_path: Path) -> None:
    """``Executor(fuse_source=True)`` fuses the source into the first stage at any partition
    count (the default does so only up to ``FUSE_MAX_PARTITIONS``)."""
    partitions = 2 * FUSE_MAX_PARTITIONS + 3
    found = run_problem(tmp_path, {f"a job on {partitions} partitions, its source fused":
                                   scenario_from_json(chain_json(2, 6, at=3), "wide")},
                        partitions=partitions, fuse_source=True)
    assert found is None


def test_the_epoch_scheduler_puts_a_request_exactly_after_its_at_tuples(tmp_path: Path) -> None:
    """docs/spark.md ("Scenarios: interpretation choices"): "under the epoch scheduler the serial
    order puts ``Rj`` exactly after the first ``at`` tuples": in every reconfigured object's
    log, the tuples before ``R1`` are exactly those of index below ``at``."""
    at = 5
    ex = Executor(LocalSpark(), [scenario_job(scenario_from_json(chain_json(2, 12, at=at), "epoch"))], "epoch",
                  str(tmp_path), partitions=2)
    assert run_to_end(ex)
    switched = 0
    for obj, log in sorted(collect_results(ex)[0].schedule.logs.items()):
        txns = [op.txn for op in log]
        if "R1" not in txns:
            continue
        switched += 1
        cut = txns.index("R1")
        before = sorted(int(t.split(":")[1]) for t in txns[:cut])
        after = sorted(int(t.split(":")[1]) for t in txns[cut + 1:] if t.startswith("S:"))
        assert all(i < at for i in before) and all(i >= at for i in after), (obj, before, after)
    assert switched


def test_processing_costs_and_stragglers_are_slept_as_configured(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``spec.fries.scenario.Timing``: ``operator_cost`` is "the processing time per tuple by
    operator" and ``stragglers`` "an object's cost multiplier": with 2 ms at ``O1``, 1 ms at
    ``O2`` (2 workers each), ``O2#1`` a straggler of factor 3 (``O3``, without a cost, one of
    5) the tasks sleep 2 ms per tuple ``O1`` processes, 1 ms per tuple of ``O2#0``, 3 ms per
    tuple of ``O2#1`` and never for ``O3``."""
    shape = chain_json(3, 8, at=3)
    shape["parallelism"] = {"O1": 2, "O2": 2}  # objects O2#0 (keys 0, 2) and O2#1 (key 1)
    shape["timing"] = {"operator_cost": {"O1": 2.0, "O2": 1.0}, "stragglers": {"O2#1": 3.0, "O3": 5.0}}
    ex = Executor(LocalSpark(), [scenario_job(scenario_from_json(shape, "costs"))], "fries", str(tmp_path), partitions=2)
    recorder = SleepRecorder()
    monkeypatch.setattr(task, "time", recorder)
    assert run_to_end(ex)
    processed = Counter(obj for obj, log in collect_results(ex)[0].schedule.logs.items()
                        for op in log if op.txn.startswith("S:"))
    assert processed["O2#0"] and processed["O2#1"]
    want = Counter({0.002: processed["O1#0"] + processed["O1#1"], 0.001: processed["O2#0"], 0.003: processed["O2#1"]})
    assert Counter(round(seconds, 9) for seconds in recorder.slept) == want


def test_a_resume_after_a_crash_before_the_first_commit_never_reuses_a_batch_number(tmp_path: Path) -> None:
    """``Executor``'s resume: "a resume with nothing committed (a crash before the first commit)
    still never reuses a batch number that ran, and loads no state from those batches"."""
    scenario = scenario_from_json(chain_json(2, 8, at=3), "first-crash")
    crashed = Executor(LocalSpark(), [scenario_job(scenario)], "fries", str(tmp_path), partitions=2)
    crashed.before_commit = crash
    with pytest.raises(Crash):
        crashed.step()
    ex = Executor(LocalSpark(), [scenario_job(scenario)], "fries", str(tmp_path), partitions=2, resume=True)
    assert ex.g == 2
    assert run_to_end(ex)
    assert conformance_problem("the job resumed after a crash before its first commit", scenario,
                               collect_results(ex)[0]) is None


def test_a_long_running_job_keeps_what_its_retention_names(tmp_path: Path) -> None:
    """``retention``: "delays beyond the newest ``delays``" are folded into the record's summary,
    "``Progress.delay_stats()`` still covers every request", a request file is kept only "while
    it is the latest completed request that updated one of the job's operators"; docs/spark.md:
    "``history`` keeps ``batches`` entries". An unbounded job takes its requests one after the
    other through ``submit`` (each updating ``O1`` and ``O3``, every operator on 2 workers);
    each completes within a few batches."""
    shape = chain_json(3, 4 * STEPS_PER_REQUEST * REQUESTS, at=1)
    shape["reconfigurations"][0]["updates"]["O3"] = {"function": {"op": "fold", "mul": 7},
                                                     "state": {"mul": 1, "add": 2}}
    shape["parallelism"] = {"O1": 2, "O2": 2, "O3": 2}
    full = scenario_job(scenario_from_json(shape, "many requests"))
    request = full.planned[0].request
    ex = Executor(LocalSpark(), [replace(full, planned=(), unbounded=True)], "fries", str(tmp_path), partitions=2,
                  retention=Retention(2, delays=KEPT_DELAYS))
    for number in range(1, REQUESTS + 1):
        assert ex.submit(0, request) is None, f"R{number} was refused"
        for _ in range(STEPS_PER_REQUEST):
            ex.step()
            if ex.state[0].live.active is None and ex.state[0].queued is None:
                break
        else:
            pytest.fail(f"R{number} did not complete within {STEPS_PER_REQUEST} batches")
    assert ex.state[0].live.made == REQUESTS
    committed = ex.state[0].committed
    stats = committed.delay_stats()
    assert sorted(committed.delays) == list(range(REQUESTS - KEPT_DELAYS + 1, REQUESTS + 1))
    assert (stats.count, stats.last) == (REQUESTS, REQUESTS)
    assert len(committed.history) == 2
    files = sorted(name for name in ex.store.list("requests") if name.endswith(".pkl"))
    assert files == [request_name(0, REQUESTS).rsplit("/", 1)[1]]


def test_a_task_error_comes_out_of_step_and_nothing_is_committed(tmp_path: Path) -> None:
    """A user function that raises inside a task makes ``Executor.step`` raise that very
    exception (the Spark job's error, re-raised in the driver thread) and commits nothing."""
    def boom(state: Any, key: Any, value: Any) -> Any:
        raise ValueError(f"boom on key {key}")

    flow = Dataflow((Operator("S", OperatorKind.SOURCE), Operator("A", OperatorKind.ONE_TO_ONE)), (("S", "A"),))
    job = user_job(flow, {"A": UserOperator(OperatorKind.ONE_TO_ONE, boom)}, ListSource((("S", "S:0", 3, 1),)))
    ex = Executor(LocalSpark(), [job], "fries", str(tmp_path), partitions=2)
    with pytest.raises(ValueError) as raised:
        ex.step()
    assert type(raised.value) is ValueError and str(raised.value) == "boom on key 3"
    assert ex.g == 1 and not ex.state[0].committed.history


def fake(restarts: tuple[int, ...], count: int) -> Any:
    """A scenario as :func:`restart_problem` reads it: ``count`` source tuples, ``restarts``."""
    return type("S", (), {"sources": {"S": [0] * count}, "timing": type("T", (), {"restarts": restarts})()})()


@pytest.mark.parametrize("history, ranges, restarts, count, words", [
    ([1, 2, 3], {1: (0, 4), 2: (4, 8), 3: (8, 8)}, (4,), 8, "never happened"),  # no crash
    ([1, 3, 4], {1: (0, 4), 2: (4, 8), 3: (4, 8), 4: (8, 8)}, (4,), 8, "never happened"),  # one batch late
    ([2, 3], {1: (0, 2), 2: (0, 2), 3: (2, 8), 4: (8, 8)}, (4,), 8, "reached no listed restart"),  # too early
    # the restarting job above: 12 crashes while batch 4 (the request's) is pending
    ([2, 6, 7, 9, 10], {1: (0, 4), 2: (0, 4), 3: (4, 8), 4: (4, 8), 5: (8, 12), 6: (4, 8), 7: (8, 12),
                        8: (12, 16), 9: (12, 16), 10: (16, 16)}, (4, 8, 12, 16), 16, None),
    # a restart at the whole input skipped (the job flushed in the batch that reached it)
    ([2, 4, 5, 6], {1: (0, 4), 2: (0, 4), 3: (4, 8), 4: (4, 8), 5: (8, 12), 6: (12, 16)}, (4, 8, 16), 16,
     "reaching the restart at 16, and was committed"),
    # a pending batch left uncommitted with no crash after it
    ([2, 5], {1: (0, 4), 2: (0, 4), 3: (4, 8), 4: (4, 8), 5: (8, 16), 6: (16, 16)}, (4, 8), 16,
     "batch 4 (tuples 4..8) ran and was never committed, though it reached no listed restart"),
])
def test_the_restart_judge_names_a_misplaced_crash_and_accepts_a_rollback_of_pending_batches(
        history: list[int], ranges: dict[int, tuple[int, int]], restarts: tuple[int, ...], count: int,
        words: str | None) -> None:
    """The judge of the restart test above, on hand-built histories: a crash that never
    happened, came late or early is named; a crash that rolls back the batches pending before
    it, and nothing else, is not."""
    found = restart_problem("job", fake(restarts, count), history, ranges)
    assert found is None if words is None else found is not None and words in found, found
