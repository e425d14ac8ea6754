"""The DGS batch driver's call forms and its plan refusal (``spark_impl/dgs/driver.py``,
``run_dgs`` and ``run_dgs_many``; docs/spark-dgs-oplus.md): ``spark``, the program, plan and
streams by position or by name; ``arrival``, ``tick``, ``inline_below`` and ``sink_dir`` by name
only (an option by position is a TypeError); no job is no run; "Every job is validated
(program, plan, input) before any Spark job starts": a P-invalid plan is refused with
InputError, named ``jobs[i]`` in a batch and not for a single job; ``DgsJob`` is a frozen
value. No Spark: the refusals come before the first Spark call (``spark`` is None)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError

import pytest

from spec.errors import InputError

from spark_impl.dgs import Arrival, run_dgs, run_dgs_many

from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.engines.batch import dgs_job
from conformance.dgs.plan_oracles.plans import unknown_tag

CASE = draw_dgs_cases(1, 0)[0]
INVALID = unknown_tag(CASE.plan, "s0")
JOB = dgs_job(CASE)


def test_run_dgs_many_names_the_invalid_job_of_a_batch() -> None:
    with pytest.raises(InputError) as raised:
        run_dgs_many(None, [JOB, dgs_job(CASE, INVALID)])
    assert (raised.value.where or "").startswith("jobs[1]")


@pytest.mark.parametrize("call", [
    lambda: run_dgs_many(None, [dgs_job(CASE, INVALID)]),
    lambda: run_dgs(spark=None, target=JOB.target, plan=INVALID, streams=JOB.streams, arrival=JOB.arrival,
                    tick=JOB.tick),
], ids=["run_dgs_many of one job", "run_dgs by name"])
def test_a_single_jobs_invalid_plan_is_refused_without_a_job_index(call: object) -> None:
    with pytest.raises(InputError) as raised:
        call()  # type: ignore[operator]
    assert not (raised.value.where or "").startswith("jobs[")


def test_no_job_is_no_run() -> None:
    assert run_dgs_many(spark=None, jobs=[]) == []


@pytest.mark.parametrize("call", [
    lambda: run_dgs_many(None, [], None),  # type: ignore[misc]
    lambda: run_dgs(None, JOB.target, INVALID, JOB.streams, Arrival()),  # type: ignore[misc]
], ids=["run_dgs_many sink_dir", "run_dgs arrival"])
def test_an_option_by_position_is_a_type_error(call: object) -> None:
    with pytest.raises(TypeError):
        call()  # type: ignore[operator]


def test_a_dgs_job_is_a_frozen_value() -> None:
    with pytest.raises(FrozenInstanceError):
        setattr(JOB, "tick", JOB.tick + 1)
