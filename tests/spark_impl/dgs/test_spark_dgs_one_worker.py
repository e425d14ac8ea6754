"""The one-worker plan on Spark (``spark_impl.dgs``: ``sequential_plan``, "the one-worker plan:
the sequential program on Spark"; what ``dgs-plan --leaves 1`` and ``keyed_plan(..., 1)``
build): the root is its own only leaf, so the root's host and the final join are the leaf's own
partition. The first six drawn cases (one per shipped program) under their one-worker plan run
in one ``run_dgs_many`` call with a ``sink_dir`` of the caller's, and each equals
``spec(sort(u))`` (DGS Thm 3.5, the DGS suite's oracles). What the run reports
(``DgsRun``, ``TickStats``): one tick per tick of the release schedule with that tick's event
count and no synchronizing step (no worker has children), wall times that add up to no more
than the call's, ``DgsRun.seconds`` their sum; the ``sink_dir`` given is kept with the runs'
record parts (the executor removes only a sink directory of its own)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest

from spark_impl.dgs.release import Arrival, release_schedule
from spark_impl.dgs.topology import topology

from conformance.dgs.cases import DgsCase, candidates, draw_dgs_cases, program_of
from conformance.dgs.engines.batch import dgs_job
from conformance.dgs.oracles import judge
from spark_impl.dgs import run_dgs_many

CASES = [next(candidates(case)) for case in draw_dgs_cases(6, 0)]  # the shrinker's first: the one-worker plan


def test_the_cases_have_one_worker_plans() -> None:
    assert all(not case.plan.root.children for case in CASES)


@pytest.fixture(scope="module")
def ran(spark: Any, tmp_path_factory: pytest.TempPathFactory) -> tuple[list[Any], float, Path]:
    sink = tmp_path_factory.mktemp("dgs-one-worker-sink")
    began = time.perf_counter()
    runs = run_dgs_many(spark, [dgs_job(c) for c in CASES], sink_dir=str(sink))
    return runs, time.perf_counter() - began, sink


def schedule(case: DgsCase) -> list[int]:
    program = program_of(case.name)
    ticks = release_schedule(program, topology(program, case.plan), case.streams,
                             Arrival(case.max_delay, case.max_jitter, case.seed), case.tick)
    return [len(tick) for tick in ticks]


@pytest.mark.spark
@pytest.mark.parametrize("index", range(len(CASES)))
def test_a_one_worker_plan_equals_the_sequential_program(ran: tuple[list[Any], float, Path], index: int) -> None:
    run = ran[0][index]
    assert judge(CASES[index], (list(run.outputs), run.final_state, list(run.processed))) == []


@pytest.mark.spark
@pytest.mark.parametrize("index", range(len(CASES)))
def test_each_tick_reports_its_events_and_no_synchronizing_step(ran: tuple[list[Any], float, Path],
                                                                index: int) -> None:
    runs, wall, _ = ran
    run = runs[index]
    assert [(t.events, t.syncs) for t in run.ticks] == [(n, 0) for n in schedule(CASES[index])]
    total = sum(t.seconds for t in run.ticks)
    assert all(t.seconds >= 0 for t in run.ticks) and total <= wall and run.seconds == pytest.approx(total)


@pytest.mark.spark
def test_the_callers_sink_dir_is_kept_with_the_record_parts(ran: tuple[list[Any], float, Path]) -> None:
    sink = ran[2]
    assert sink.is_dir() and any(path.name.endswith(".pkl") for path in sink.iterdir())
