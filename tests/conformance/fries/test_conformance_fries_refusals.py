"""The Fries executor's refusals and ``submit``'s answers without Spark
(:mod:`conformance.fries.checks.refusals`): ``collect_results`` reports every rejection,
including one made after the job's last commit."""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.fries.checks.refusals import refusal_problem


def test_the_refusals_check_passes_on_the_executor() -> None:
    assert refusal_problem() is None


def test_rejections_reported_from_the_committed_view_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """api.py ``collect_results``: ``tuple(st.live.rejected)`` -> ``tuple(prog.rejected)`` (the
    committed view) loses the end-of-input rejection, which no commit follows; the suite's runs
    reject nothing."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import api

    monkeypatch.setattr(api, "collect_results", rewritten_function(api, "collect_results", "tuple(st.live.rejected)",
                                                        "tuple(prog.rejected)"))
    found = refusal_problem()
    assert found is not None and "collect_results reports the rejections" in found, found
    assert "reached the end of its input" in found.rsplit("submit answered", 1)[1]


def test_the_refusals_check_passes_and_names_a_fault_or_a_refusal_that_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py line 80 (``scheduler == "fries" and "naive" in faults``: the seeded fault
    ``naive``, never injected by the default run) and streaming.py line 368 (planned requests
    refused by ``start_query``; the suite's queries never have any)."""
    from dataclasses import replace

    import spark_impl.reconfig as api
    import spark_impl.reconfig.streaming as streaming
    from conformance.fries.checks.refusals import refusal_problem

    assert refusal_problem() is None

    class NoNaive(api.Executor):
        def __init__(self, spark: Any, jobs: Any, scheduler: str, checkpoint_dir: str, **options: Any) -> None:
            super().__init__(spark, jobs, scheduler, checkpoint_dir, **options)
            self.scheduler = scheduler

    monkeypatch.setattr(api, "Executor", NoNaive)
    found = refusal_problem()
    assert found is not None and "runs the 'fries' scheduler, not 'naive'" in found
    monkeypatch.undo()

    original = streaming.start_query

    def lenient(spark: Any, job: Any, source: Any, **options: Any) -> Any:
        return original(spark, replace(job, planned=()), source, **options)

    monkeypatch.setattr(streaming, "start_query", lenient)
    found = refusal_problem()
    assert found is not None and "planned requests" in found


def test_the_executor_refuses_an_operator_without_workers(tmp_path: Path) -> None:
    """Regression: ``Executor`` accepted ``parallelism={"A": 0}``; the job then had
    no object for ``A`` and its tasks crashed routing a key (``k mod 0``: ZeroDivisionError, an
    internal error instead of bad input). (With the refusal, ``model.py``
    ``workers == 1`` -> ``workers <= 1`` is equivalent.)"""
    from spark_impl.reconfig import Executor, ListSource, UserOperator, user_job
    from spec.errors import InputError
    from spec.fries.dataflow import Dataflow, Operator, OperatorKind

    flow = Dataflow((Operator("S", OperatorKind.SOURCE), Operator("A", OperatorKind.ONE_TO_ONE)), (("S", "A"),))
    job = user_job(flow, {"A": UserOperator(OperatorKind.ONE_TO_ONE, lambda state, key, value: (state, []))},
                   ListSource((("S", "S:0", 1, 1),)), parallelism={"A": 0})
    spark = SimpleNamespace(sparkContext=SimpleNamespace(getConf=lambda: {}, defaultParallelism=2))
    with pytest.raises(InputError, match="at least 1 worker"):
        Executor(spark, [job], "fries", str(tmp_path))


def test_submit_rejections_that_name_the_wrong_request_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py 147 ``st.live.made + 1`` -> ``st.live.made ** 1``:
    a submit while a request is queued was rejected naming ``R0`` (the queued one is ``R1``)."""
    from support.source_rewrite import rewritten_method

    from conformance.fries.checks.refusals import refusal_problem
    from spark_impl.reconfig.driver import Executor

    assert refusal_problem() is None
    monkeypatch.setattr(Executor, "submit", rewritten_method(Executor, "submit", "else st.live.made + 1", "else st.live.made ** 1"))
    found = refusal_problem()
    assert found is not None and "while R1 is queued" in found and "R0" in found
