"""The DGS suite's check of one-worker plans on Spark and of what a batch run reports.

The drawn cases all fork (non-trivial plans), but the one-worker plan - no fork, no
join, the root its own only leaf - is what ``dgs-plan --leaves 1`` and ``keyed_plan(..., 1)``
build, and the executor treats it apart: its root is a leaf, so the root's host and the final
join are the leaf's own partition. No default run had one. Here the first :data:`CASES`
drawn cases (one per shipped program) run again under their one-worker plan (the shrinker's
first candidate, :func:`conformance.dgs.suite.candidates`), in one
:func:`spark_impl.dgs.run_dgs_many` call with a ``sink_dir`` of the caller's, judged by the
suite's oracles (:func:`conformance.dgs.suite.judge`), and by what the run reports
(``stats``): one :class:`~spark_impl.dgs.driver.TickStats` per tick of the case's release
schedule with that tick's event count, no synchronizing step (a one-worker plan has no
worker with children), wall times that add up to no more than the call's (one run's ticks
are disjoint parts of it), ``DgsRun.seconds`` their sum, and the
``sink_dir`` given kept with the runs' record parts (the executor removes only a sink
directory of its own).
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from typing import Any, Sequence

from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.core.session import shared_session
from conformance.dgs.cases import DgsCase, candidates, case_to_json, program_of
from conformance.dgs.engines.batch import dgs_job
from conformance.dgs.oracles import judge

CHECK = "spark one-worker plans vs spec(sort(u))"
CASES = 6


def one_worker(case: DgsCase) -> DgsCase:
    """``case`` under the one-worker plan (:func:`conformance.dgs.suite.candidates`' first)."""
    return next(candidates(case))


def stats_problem(case: DgsCase, run: Any, wall: float) -> str | None:
    """None when ``run`` (a ``DgsRun`` of ``case``) reports what the module docstring says."""
    from spark_impl.dgs.release import Arrival, release_schedule
    from spark_impl.dgs.topology import topology

    program = program_of(case.name)
    ticks = release_schedule(program, topology(program, case.plan), case.streams,
                             Arrival(case.max_delay, case.max_jitter, case.seed), case.tick)
    reported = [(t.events, t.syncs) for t in run.ticks]
    if reported != [(len(tick), 0) for tick in ticks]:
        return f"ticks (events, synchronizing steps) reported {reported}, the schedule has {[len(t) for t in ticks]} events"
    total = sum(t.seconds for t in run.ticks)
    if any(t.seconds < 0 for t in run.ticks) or total > wall or abs(run.seconds - total) > 1e-9:
        return (f"tick wall times {[round(t.seconds, 3) for t in run.ticks]} (seconds {run.seconds}): negative, or "
                f"more in all than the call's {wall:.3f} s (the ticks of one run are disjoint parts of it)")
    return None


def run_check(drawn: Sequence[DgsCase], spark: Any, result: SuiteResult) -> CheckResult:
    """The first :data:`CASES` cases under one-worker plans (module docstring)."""
    from spark_impl.dgs import run_dgs_many

    start = time.monotonic()
    cases = [one_worker(c) for c in drawn[:CASES]]
    check = CheckResult(CHECK)
    if not cases:
        return check
    sink = tempfile.mkdtemp(prefix="streamproof-dgs-one-worker-")
    found: list[tuple[int, list[tuple[str, str]]]] = []
    runs: list[Any] = []
    try:
        began = time.perf_counter()
        try:
            runs = run_dgs_many(shared_session(spark)(), [dgs_job(c) for c in cases], sink_dir=sink)
        except Exception as error:  # noqa: BLE001 - a crash is an engine failure of every case
            found = [(0, [("engine", f"run_dgs_many raised {type(error).__name__}: {error}")])]
        wall = time.perf_counter() - began
        kept = os.path.isdir(sink) and any(name.endswith(".pkl") for name in os.listdir(sink))
        for index, (case, run) in enumerate(zip(cases, runs)):
            failed = judge(case, (list(run.outputs), run.final_state, list(run.processed)))
            stats = stats_problem(case, run, wall)
            failed += [("stats", stats)] if stats is not None else []
            if index == 0 and not kept:
                failed.append(("stats", f"the sink_dir given ({sink}) was emptied or removed by the run"))
            if failed:
                found.append((index, failed))
    finally:
        shutil.rmtree(sink, ignore_errors=True)
    check.cases, check.failed, check.elapsed_s = len(cases), len(found) if runs else len(cases), time.monotonic() - start
    for _, failed in found:
        check.oracle_failures.update(oracle for oracle, _ in failed)
    if found:
        index, failed = found[0]
        explanation = f"program {cases[index].name}, one-worker plan\n" + "\n".join(f"[{o}] {t}" for o, t in failed)
        result.failures.append(FailureReport(CHECK, index, tuple(o for o, _ in failed), explanation, 1, 1, 0,
                                             case_to_json(cases[index])))
    return check
