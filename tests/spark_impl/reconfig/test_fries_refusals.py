"""Bad input to the Fries executor's entry points is refused, without Spark.

``Executor(...)`` and ``start_query(...)`` refuse what they cannot run with
:class:`~spec.errors.InputError` (the CLI's exit 2, one line), before any Spark job:

* ``Executor``: an unknown scheduler; an operator with fewer than one worker (no object would
  hold a key: the tasks crashed dividing by zero); ``spark.speculation=true`` (two speculative attempts of
  a task could see a control message at different tuples: docs/spark.md); a checkpoint in the
  layout before the record logs (``progress.json``: resuming it would silently start from
  scratch). A well-formed call on an empty directory is accepted, and the seeded fault
  ``naive`` turns the fries scheduler (only) into the naive one.
* ``start_query``: a DataFrame that is not streaming, a missing key or value column, a job with
  planned requests (streaming jobs take them through ``submit``), a dataflow without exactly one
  source; a good call starts its query (a stand-in ``writeStream``) on an unbounded job.
* ``run_scenarios``: an unknown scheduler, or a fault seeded in another executor (O+).
* ``Executor.submit`` (its docstring: "None if accepted, else the rejection message (also
  recorded)"), on the pure-Python Spark (:mod:`conformance.standin.spark`): a request submitted
  before the run is queued (None); a second one while the first is queued is rejected naming the
  queued request's number (``R1``: it is made as the job's next request), and while it is active
  naming the active one; after the job's input is exhausted every request is rejected ("reached
  the end of its input"); each rejection is recorded in order. The suite's runs submit only
  requests that are accepted (a queued request named ``R0`` would pass them unseen).
  ``collect_results`` then reports all of them (``RunResult.rejected``: "messages of rejected
  requests"; ``collect_results`` reads them from the live view: "answers already given, also
  after the last commit"), the end-of-input one too, which no commit follows; the suite's
  runs reject nothing, so an empty tuple from the committed view looks right there.

The suite's cases are always well formed, so no run reaches these refusals; an inverted guard
would run a job that cannot be right (speculation), lose a checkpoint, or refuse every query.
The executor is given a stand-in for the SparkSession (its configuration and parallelism are
all a refusal reads; nothing here starts a Spark job). Each ``_<part>`` helper names the first
broken promise of its entry point (None: all hold).
"""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from spec.errors import InputError
from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.scenario import scenario_from_json
from support.fries_chains import chain_json

from conformance.core.refusals import refused
from conformance.standin.spark import LocalSpark
from spark_impl.reconfig import Executor, ListSource, PlannedRequest, Request, UserOperator, run_scenarios, user_job
from spark_impl.reconfig.api import collect_results, scenario_job
from spark_impl.reconfig.streaming import start_query


def _spark(speculation: str = "false") -> Any:
    conf = {"spark.speculation": speculation}
    return SimpleNamespace(sparkContext=SimpleNamespace(getConf=lambda: conf, defaultParallelism=2))


def _executor_problem(root: str) -> str | None:
    fresh = os.path.join(root, "fresh")
    for what, make, words in (
        ("an unknown scheduler", lambda: Executor(_spark(), [], "fifo", fresh), "unknown scheduler 'fifo'"),
        ("spark.speculation=true", lambda: Executor(_spark("true"), [], "fries", fresh), "spark.speculation=false"),
        ("spark.speculation=True", lambda: Executor(_spark("True"), [], "epoch", fresh), "spark.speculation=false"),
    ):
        found = refused(make, None, f"Executor with {what}", words)
        if found is not None:
            return found
    flow = Dataflow((Operator("S", OperatorKind.SOURCE), Operator("A", OperatorKind.ONE_TO_ONE)), (("S", "A"),))
    for workers in (0, -2):
        job = user_job(flow, {"A": UserOperator(OperatorKind.ONE_TO_ONE, lambda state, key, value: (state, []))},
                       ListSource((("S", "S:0", 1, 1),)), parallelism={"A": workers})
        found = refused(lambda job=job: Executor(_spark(), [job], "fries", fresh), None,
                        f"Executor with an operator of {workers} workers", "at least 1 worker")
        if found is not None:
            return found
    legacy = os.path.join(root, "legacy")
    os.makedirs(legacy)
    with open(os.path.join(legacy, "progress.json"), "w", encoding="utf-8") as handle:
        handle.write("{}")
    found = refused(lambda: Executor(_spark(), [], "fries", legacy, resume=True), None,
                    "Executor on a checkpoint of the layout before the record logs", "progress.json")
    if found is not None:
        return found
    for scheduler, faults, runs in (("fries", (), "fries"), ("epoch", (), "epoch"), ("naive", (), "naive"),
                                    ("fries", ("naive",), "naive"), ("epoch", ("naive",), "epoch"),
                                    ("fries", ("double-transform",), "fries")):
        where = os.path.join(root, f"{scheduler}-{'-'.join(faults)}")
        try:  # names built at run time, as from a command line (not the interned literals)
            ex = Executor(_spark(), [], "".join(list(scheduler)), where, faults=frozenset("".join(list(f)) for f in faults))
        except Exception as error:  # noqa: BLE001 - the refusal of a good call is the finding
            return f"Executor({scheduler!r}) on an empty directory was refused: {type(error).__name__}: {error}"
        if ex.scheduler != runs:
            # the seeded fault ``naive`` runs the fries scheduler without alignment (faults.py)
            return f"Executor({scheduler!r}, faults={list(faults)}) runs the {ex.scheduler!r} scheduler, not {runs!r}"
    return None


def _query_problem(root: str) -> str | None:
    flow = Dataflow((Operator("S", OperatorKind.SOURCE), Operator("A", OperatorKind.ONE_TO_ONE)), (("S", "A"),))
    job = user_job(flow, {"A": UserOperator(OperatorKind.ONE_TO_ONE, lambda state, key, value: (state, []))},
                   ListSource(()))
    two = Dataflow((Operator("S", OperatorKind.SOURCE), Operator("T", OperatorKind.SOURCE),
                    Operator("A", OperatorKind.ONE_TO_ONE)), (("S", "A"), ("T", "A")))
    stream = SimpleNamespace(isStreaming=True, columns=["key", "value"])
    planned = replace(job, planned=(PlannedRequest(1, Request({})),))

    def query(source: Any, the_job: Any = job) -> Callable[[], Any]:
        return lambda: start_query(_spark(), the_job, source, scheduler="fries", checkpoint_dir=root)

    none = Dataflow((Operator("A", OperatorKind.ONE_TO_ONE),), ())
    for what, make, words in (
        ("an object without isStreaming", query(SimpleNamespace(columns=["key", "value"])),
         "needs a streaming DataFrame"),
        ("no source", query(stream, replace(job, dataflow=none)), "exactly one source"),
        ("a DataFrame that is not streaming", query(SimpleNamespace(isStreaming=False, columns=["key", "value"])),
         "needs a streaming DataFrame"),
        ("no value column", query(SimpleNamespace(isStreaming=True, columns=["key"])), "['value']"),
        ("no key column", query(SimpleNamespace(isStreaming=True, columns=["value"])), "['key']"),
        ("planned requests", query(stream, planned), "through submit()"),
        ("two sources", query(stream, replace(job, dataflow=two)), "exactly one source"),
    ):
        found = refused(make, None, f"start_query with {what}", words)
        if found is not None:
            return found
    started: list[Any] = []
    writer = SimpleNamespace()
    writer.foreachBatch = lambda handler: writer
    writer.option = lambda *_: writer

    def start() -> Any:
        started.append(True)
        return SimpleNamespace(isActive=False)

    writer.start = start
    try:
        run = start_query(_spark(), job, SimpleNamespace(isStreaming=True, columns=["key", "value"], writeStream=writer),
                          scheduler="fries", checkpoint_dir=os.path.join(root, "good"))
    except Exception as error:  # noqa: BLE001 - the refusal of a good call is the finding
        return f"start_query of a one-source job on a streaming DataFrame was refused: {type(error).__name__}: {error}"
    if not started or not run.executor.jobs[0].unbounded:
        return "start_query of a good job did not start its query on an unbounded executor job"
    return None


def _run_scenarios_problem() -> str | None:
    """``run_scenarios``: an unknown scheduler or an O+ fault is refused (unknown fault names:
    ``contracts_check.fault_problem``); no scenario runs nothing."""
    for what, make, words in (
        ("an unknown scheduler", lambda: run_scenarios(_spark(), [], "fifo"), "unknown scheduler 'fifo'"),
        ("an O+ fault", lambda: run_scenarios(_spark(), [], "fries", faults=frozenset({"window-off-by-one"})),
         "not seeded in the reconfiguration executor"),
    ):
        found = refused(make, None, f"run_scenarios with {what}", words)
        if found is not None:
            return found
    for faults in (frozenset(), frozenset({"naive", "double-transform", "missing-alignment", "duplicate-after-restart"})):
        if run_scenarios(_spark(), [], "fries", faults=faults) != []:
            return f"run_scenarios of no scenario (faults {sorted(faults)}) returned results"
    return None


def _submit_problem(directory: str) -> str | None:
    """``Executor.submit``'s answers (module docstring)."""
    job = scenario_job(scenario_from_json(chain_json(2, 6, at=3), "submit"))
    request = job.planned[0].request
    ex = Executor(LocalSpark(), [replace(job, planned=())], "fries", directory, partitions=2)
    expected: list[str] = []

    def answer(when: str, words: str | None) -> str | None:
        got = ex.submit(0, request)
        if words is None:
            return None if got is None else f"submit {when} was rejected: {got}"
        if got is None or words not in got:
            return f"submit {when} answered {got!r}, expected a rejection saying {words!r}"
        expected.append(got)
        return None

    found = (answer("before the run", None)
             or answer("while R1 is queued", "reconfiguration R1 of job 0 is still in progress"))
    if found is not None:
        return found
    ex.step()  # makes the queued request: R1 is active
    found = answer("while R1 is active", "reconfiguration R1 of job 0 is still in progress")
    if found is not None:
        return found
    for _ in range(40):
        if ex.done():
            break
        ex.step()
    found = answer("after the input is exhausted", "reached the end of its input")
    if found is not None:
        return found
    if ex.state[0].live.rejected != expected:
        return f"submit's rejections were recorded as {ex.state[0].live.rejected}, expected {expected}"
    reported = collect_results(ex)[0].rejected
    if reported != tuple(expected):
        return (f"collect_results reports the rejections {list(reported)}; submit answered {expected} (the last "
                "after the job's last commit): RunResult.rejected holds every rejected request's message")
    return None


def test_executor_refuses_an_unknown_scheduler_speculation_no_workers_and_an_old_layout(tmp_path: Path) -> None:
    """And accepts a well-formed call; the seeded fault ``naive`` turns only the fries
    scheduler into the naive one."""
    assert _executor_problem(str(tmp_path)) is None


def test_start_query_refuses_what_it_cannot_run_and_starts_a_good_query(tmp_path: Path) -> None:
    assert _query_problem(str(tmp_path)) is None


def test_run_scenarios_refuses_an_unknown_scheduler_and_a_fault_of_another_executor() -> None:
    assert _run_scenarios_problem() is None


def test_submit_answers_and_collect_results_reports_every_rejection(tmp_path: Path) -> None:
    assert _submit_problem(str(tmp_path)) is None


def test_the_executor_refuses_an_operator_without_workers(tmp_path: Path) -> None:
    """Regression: ``Executor`` accepted ``parallelism={"A": 0}``; the job then had
    no object for ``A`` and its tasks crashed routing a key (``k mod 0``: ZeroDivisionError, an
    internal error instead of bad input). (With the refusal, ``model.py``
    ``workers == 1`` -> ``workers <= 1`` is equivalent.)"""
    flow = Dataflow((Operator("S", OperatorKind.SOURCE), Operator("A", OperatorKind.ONE_TO_ONE)), (("S", "A"),))
    job = user_job(flow, {"A": UserOperator(OperatorKind.ONE_TO_ONE, lambda state, key, value: (state, []))},
                   ListSource((("S", "S:0", 1, 1),)), parallelism={"A": 0})
    spark = SimpleNamespace(sparkContext=SimpleNamespace(getConf=lambda: {}, defaultParallelism=2))
    with pytest.raises(InputError, match="at least 1 worker"):
        Executor(spark, [job], "fries", str(tmp_path))
