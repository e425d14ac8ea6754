"""The DGS batch driver (``spark_impl/dgs/driver.py``, ``spark_impl/dgs/__init__.py``) on the
pure-Python Spark stand-in, on shapes the Spark runs of the suite leave out: every run equals
``spec(sort(u))`` (DGS Thm 3.5, judged by the DGS suite's oracles: outputs, processed trace,
final state) and reports what ``DgsRun`` and ``TickStats`` promise.

* ``run_dgs_many`` on drawn cases with ``inline_below`` 1, 3, 8 or 50 and explicit stream
  delays (:func:`support.dgs_variants.variant`); per tick ``TickStats`` holds the events the
  release schedule gives that tick and the synchronizing steps of its plan after inlining
  (``inline_short_segments``), and ``DgsRun.seconds`` is the sum of the ticks' wall times;
* ``run_dgs``, the one-job wrapper, with a ``sink_dir`` of the caller's: the same run, and the
  directory is kept ("the executor removes only a sink directory of its own");
* ``run_dgs`` with its defaults runs as ``DgsJob``'s defaults say (no delays, one tick, the
  plan as given);
* ``sequential_plan(program, streams)``: "One worker responsible for every implementation tag
  of ``streams``: no fork, no join" of the program's initial state type (V1: the root's is
  ``State_0``), and a run under it equals the sequential program.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from spec.dgs.streams import StreamEvent

from reference.dgs.examples import target
from spark_impl.dgs import DgsJob, DgsRun, run_dgs, run_dgs_many, sequential_plan
from spark_impl.dgs.driver import inline_short_segments, steps_of
from spark_impl.dgs.release import release_schedule
from spark_impl.dgs.topology import topology

from conformance.dgs.cases import DgsCase, draw_dgs_cases, program_of
from conformance.dgs.oracles import judge
from conformance.standin.spark import LocalSpark
from support.dgs_variants import variant

DRAWN = draw_dgs_cases(60, 0)
PAIRS = [variant(case, index) for index, case in enumerate(DRAWN)]


@pytest.fixture(scope="module")
def runs() -> list[DgsRun]:
    """Every variant as one ``run_dgs_many`` batch on the stand-in."""
    return run_dgs_many(LocalSpark(), [job for _, job in PAIRS])


def tick_counts(case: DgsCase, job: DgsJob) -> list[tuple[int, int]]:
    """Per tick of ``job``'s release schedule: its events and its plan's synchronizing steps."""
    program = program_of(case.name)
    topo = topology(program, job.plan)
    return [(len(tick), sum(sync is not None for _, sync in inline_short_segments(topo, steps_of(topo, tick),
                                                                                   job.inline_below)))
            for tick in release_schedule(program, topo, job.streams, job.arrival, job.tick)]


def judged(case: DgsCase, run: DgsRun) -> list[tuple[str, str]]:
    return judge(case, (list(run.outputs), run.final_state, list(run.processed)))


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_a_run_with_longer_inlining_and_explicit_delays_equals_the_sequential_program(
        runs: list[DgsRun], index: int) -> None:
    assert judged(PAIRS[index][0], runs[index]) == []


@pytest.mark.parametrize("index", range(len(PAIRS)))
def test_each_tick_reports_its_events_and_synchronizing_steps(runs: list[DgsRun], index: int) -> None:
    case, job = PAIRS[index]
    run = runs[index]
    assert [(t.events, t.syncs) for t in run.ticks] == tick_counts(case, job)
    assert all(t.seconds >= 0 for t in run.ticks) and run.seconds == pytest.approx(sum(t.seconds for t in run.ticks))


def test_run_dgs_runs_one_job_and_keeps_the_callers_sink_dir(tmp_path: Path) -> None:
    case, job = PAIRS[0]
    sink = tmp_path / "sink"
    sink.mkdir()
    run = run_dgs(LocalSpark(), job.target, job.plan, job.streams, arrival=job.arrival, tick=job.tick,
                  inline_below=job.inline_below, sink_dir=str(sink))
    assert judged(case, run) == [] and run.outputs
    assert any(path.name.endswith(".pkl") for path in sink.iterdir())


@pytest.mark.parametrize("index", range(20))
def test_run_dgs_with_its_defaults_runs_as_dgs_jobs_defaults(index: int) -> None:
    case = DRAWN[index]
    job = DgsJob(target(case.name), case.plan, case.streams)
    run = run_dgs(LocalSpark(), job.target, job.plan, job.streams)
    assert judged(case, run) == []
    assert [(t.events, t.syncs) for t in run.ticks] == tick_counts(case, job)


@pytest.mark.parametrize("index", range(len(DRAWN)))
def test_sequential_plan_is_the_root_alone_owning_the_inputs_implementation_tags(index: int) -> None:
    case = DRAWN[index]
    program = program_of(case.name)
    root = sequential_plan(program, case.streams).root
    impl = {(program.tag(item.payload), stream) for stream, items in case.streams.items() for item in items
            if isinstance(item, StreamEvent)}
    assert (root.children, root.fork, root.join, root.state_type, root.impl_tags) == ((), None, None,
                                                                                     program.initial, impl)


def test_a_run_under_sequential_plan_equals_the_sequential_program() -> None:
    firsts: dict[str, Any] = {}
    for case in DRAWN:
        firsts.setdefault(case.name, replace(case, plan=sequential_plan(program_of(case.name), case.streams)))
    cases = list(firsts.values())
    runs = run_dgs_many(LocalSpark(), [DgsJob(target(c.name), c.plan, c.streams) for c in cases])
    assert [judged(case, run) for case, run in zip(cases, runs)] == [[] for _ in cases]
