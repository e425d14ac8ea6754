"""Assertions for users' CI tests of their own jobs (re-exported by
:mod:`conformance.testing.helper`; fixtures in :mod:`conformance.testing.plugin`).

* :func:`assert_job_conforms` - the whole suite on a job: random request moments, batch sizes,
  delays, stragglers, reorderings and restarts on Spark, every run judged against the reference
  run of the same functions; raises ``AssertionError`` with the shrunk failing case (and the
  replay command when the job came from a file).
* :func:`assert_result_conforms` - a ``RunResult`` as a whole (every field it recorded,
  its requests included);
* :func:`assert_run_conforms` - one run the user made themselves (e.g.
  ``collect_results(executor)``): with its schedule every oracle applies
  (:mod:`conformance.userjob.judge`); without, its outputs (and states) are compared with the
  reference's serial run in request order.
"""

from __future__ import annotations

import json
from typing import Any, Callable, Iterable, Mapping, Sequence

from spec.fries.schedule import Schedule

from conformance.fries.oracles import show_record
from conformance.core.matcher import compare
from conformance.core.results import SuiteResult
from conformance.core.spark_logs import spark_logs_quiet
from conformance.core.verdict import failed
from conformance.userjob.judge import UserRun, as_record, dependence_of, freeze, judge_run, with_requests
from conformance.userjob.load import JobUnderTest, classify_for, job_under_test, load_job, ship_by_value
from conformance.userjob.suite import UserJobConfig, run_userjob_suite
from reference.fries.userjob import request_order, serial_run
from spark_impl.keys import key_order, route
from spark_impl.reconfig.api import RunResult
from spark_impl.reconfig.model import Job, PlannedRequest, Request

IN_MEMORY = "<in-memory job>"


def under_test(job: Any, requests: Sequence[Request] | None = None,
               options: Mapping[str, Any] | None = None) -> JobUnderTest:
    """``job`` as the suite loads it: a ``"FILE.py:NAME"`` reference, a callable following the
    ``NAME`` protocol, or a :class:`~spark_impl.reconfig.Job` with its ``requests``."""
    if isinstance(job, str):
        return load_job(job)
    if isinstance(job, Job):
        value: Any = (job, list(requests or ()), dict(options or {}))
    else:
        value = job() if callable(job) else job
    under = job_under_test(IN_MEMORY, value)
    ship_by_value(under)
    return under


def assert_job_conforms(job: Any, requests: Sequence[Request] | None = None, *, options: Mapping[str, Any] | None = None,
                        spark: Any = None, cases: int = 20, seed: int = 0, faults: Iterable[str] = (),
                        scheduler: str = "fries", save_dir: str | None = None,
                        spark_log_level: str | None = None) -> SuiteResult:
    """Run the user-job suite on ``job`` (see :func:`under_test`) and raise ``AssertionError``
    unless every case passes; returns the suite's result. While it runs, Spark's and py4j's
    loggers log at ``spark_log_level`` (default ``$STREAMPROOF_SPARK_LOG_LEVEL``, else ``OFF``:
    :mod:`conformance.core.spark_logs`), so the suite's injected crashes print no Spark
    tracebacks into the test's output; the level of ``spark`` (a user's session) is put back
    afterwards."""
    under = under_test(job, requests, options)
    config = UserJobConfig(ref=under.ref, cases=cases, seed=seed, scheduler=scheduler, faults=frozenset(faults),
                           save_dir=save_dir if under.ref != IN_MEMORY else None, shrink_evaluations=120,
                           shrink_deadline_s=180.0)
    with spark_logs_quiet(spark_log_level, spark):
        result = run_userjob_suite(config, spark=spark, under=under)
    if result.failed:
        failure = result.failures[0]
        lines = [f"{result.failed} of {result.cases} case(s) do not conform to the reference (seed {seed}); "
                 f"first failing case {failure.case_index}, shrunk to:",
                 json.dumps(failure.shrunk_case, separators=(",", ":"), default=repr), failure.explanation]
        if failure.replay_file:
            lines.append(f"replay: streamproof conformance --replay {failure.replay_file}")
        raise AssertionError("\n".join(lines))
    return result


def assert_run_conforms(job: Job, outputs: Iterable[Any], *, schedule: Schedule | Mapping[str, Any] | None = None,
                        states: Mapping[tuple[str, Any], Any] | None = None,
                        senders: Mapping[str, Sequence[str | None]] | None = None, rejected: Sequence[str] = (),
                        dependence: str | Callable[[str, Any, Any], Any] = "key",
                        requests: Sequence[Request | PlannedRequest] | None = None) -> None:
    """Judge one run of ``job`` (module docstring); ``outputs`` are (sink, txn, key, value).
    ``requests``: every request the run made, in transaction order (R1, R2, ...), planned and
    submitted alike (``RunResult.requests``); default: the job's planned requests, which miss
    any made with ``Executor.submit``. Without ``schedule`` each must be a
    :class:`PlannedRequest`: the serial order in request order needs its ``at``."""
    classify = classify_for(dependence)
    if requests is not None:
        if schedule is None and any(not isinstance(r, PlannedRequest) for r in requests):
            raise AssertionError("without the run's schedule, every request must be a PlannedRequest(at, request): "
                                 "the serial order in request order needs the moment each was made")
        job = with_requests(job, requests)
    records = [tuple(r) for r in outputs]
    if schedule is None:
        expected = serial_run(job, request_order(job), route, flush_order=key_order)
        mismatch = compare([as_record(r) for r in expected.outputs], [as_record(r) for r in records],
                           dependence_of(classify))
        problems = []
        if mismatch is not None:
            problems.append(f"outputs differ from the reference's serial run in request order:\n"
                            f"{mismatch.explain(show_record)}")
        if states is not None:
            wrong = [k for k in set(states) | set(expected.states)
                     if freeze(states.get(k)) != freeze(expected.states.get(k))]
            problems += [f"state of {op} key {key!r}: expected {expected.states.get((op, key))!r}, "
                         f"got {states.get((op, key))!r}" for op, key in sorted(wrong, key=repr)[:5]]
        if problems:
            raise AssertionError("run does not conform to the reference:\n" + "\n".join(problems))
        return
    logs = schedule if isinstance(schedule, Schedule) else Schedule.from_json(schedule)
    run = UserRun(records, logs, states, tuple(rejected),
                  {obj: tuple(s) for obj, s in senders.items()} if senders is not None else None)
    judgement = judge_run(job, run, classify)
    if not judgement.ok:
        raise AssertionError("run does not conform to the reference:\n" + "\n".join(
            f"[{v.name}] {v.message}\n{v.detail}" for v in failed(judgement.verdicts)))


def assert_result_conforms(job: Job, result: RunResult, *,
                           dependence: str | Callable[[str, Any, Any], Any] = "key") -> None:
    """Judge ``result`` (one job's :class:`~spark_impl.reconfig.api.RunResult` from
    ``collect_results``) with everything it recorded: outputs, schedule, states, senders,
    rejections and every request made (planned or submitted, ``result.requests``), so a run
    whose requests came through ``submit`` needs nothing more. AssertionError when the result
    no longer holds its requests (retention removed a request's file): pass them to
    :func:`assert_run_conforms` as ``requests=``."""
    if result.requests is None:
        raise AssertionError("the run's requests are no longer all on disk (retention removed one); "
                             "judge it with assert_run_conforms(..., requests=[every request, in order])")
    assert_run_conforms(job, result.outputs, schedule=result.schedule, states=result.states,
                        senders=result.senders, rejected=result.rejected, dependence=dependence,
                        requests=result.requests)
