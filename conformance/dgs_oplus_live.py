"""The live front ends in the DEFAULT DGS and O+ suites (issue 12: "every path, every run").

``--engine spark`` ran only the batch executors (``spark_impl.dgs.run_dgs_many``,
``spark_impl.oplus.run_batch``); the Structured Streaming front ends
(``spark_impl.dgs.streaming*``, ``spark_impl.oplus.streaming*``: mailboxes across
micro-batches, commit records, replays after a driver kill, the exactly-once sink, rescale
requests of a running query) ran only under ``--engine spark-streaming``, so a bug there
(e.g. a replayed committed batch computed again, the last batch's records left out of the
results, a rescaled job's states re-read under another job's parallelism) passed the default
suite. Here **every case** of a default run also runs through its live engine (session 5;
session 4 ran every 8th: 13 DGS, 17 O+ cases) - the ``spark-streaming`` engines of
:mod:`conformance.dgs_streaming` and :mod:`conformance.oplus_streaming` (all of them as ONE
live query, with a driver kill at each crash point; DGS cases re-planned mid-stream, O+ cases
whose sources stay silent for a while: those modules' docstrings), judged by the same oracles
as the batch check. A failure is reported and saved unshrunk (every shrink candidate would be
another live query); its replay runs the live engine again (``engine``/``scheduler``
``spark-streaming``).
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from conformance.regression import save_case
from conformance.suite import CheckResult, FailureReport, SuiteResult

ENGINE = "spark-streaming"
DGS_LIVE = "spark-streaming vs spec(sort(u))"
OPLUS_LIVE = "spark-streaming vs sequential"


def dgs_live_check(drawn: Sequence[Any], spark: Any, seed: int, save_dir: str | None,
                   result: SuiteResult) -> CheckResult:
    """Every DGS case through :func:`conformance.dgs_streaming.streaming_engine` (one query)."""
    from conformance.dgs_streaming import streaming_engine
    from conformance.dgs_suite import judge
    from conformance.generators.dgs import case_to_json

    check = CheckResult(DGS_LIVE)
    start = time.monotonic()
    observed = streaming_engine(spark)(drawn)
    count_dgs_arrivals(drawn, result)
    first: tuple[int, list[tuple[str, str]]] | None = None
    for i, seen in enumerate(observed):
        failed = judge(drawn[i], seen)
        check.cases += 1
        if failed:
            check.failed += 1
            check.oracle_failures.update(oracle for oracle, _ in failed)
            first = first or (i, failed)
    check.elapsed_s = time.monotonic() - start
    if first is not None:
        index, failed = first
        explanation = "\n".join(f"[{oracle}] {text}" for oracle, text in failed)
        result.failures.append(_report(DGS_LIVE, "dgs", index, tuple(o for o, _ in failed), explanation,
                                       case_to_json(drawn[index]), seed, (), save_dir))
    return check


def oplus_live_check(drawn: Sequence[tuple[dict[str, Any], int]], faults: frozenset[str], spark: Any, seed: int,
                     save_dir: str | None, result: SuiteResult) -> CheckResult:
    """Every case through :func:`conformance.oplus_streaming.streaming_engine` (one live query:
    job ``i`` = case ``i``), every :data:`~conformance.oplus_streaming.LATE_EVERY`-th one with
    a source silent in its first files (:func:`~conformance.oplus_streaming.late_arrivals`),
    judged by the Spark check's oracles on the scenario the live run was fed."""
    from conformance.oplus_streaming import late_arrivals, streaming_engine
    from conformance.oplus_suite import _oracle, spark_discrepancies

    check = CheckResult(OPLUS_LIVE)
    start = time.monotonic()
    fed = late_arrivals(drawn, seed)
    result.features["live: a source silent in its first files"] += sum(a is not b for a, b in zip(fed, drawn))
    problems = spark_discrepancies(fed, streaming_engine(faults, spark))
    check.cases = len(problems)
    check.failed = sum(p is not None for p in problems)
    check.oracle_failures.update(_oracle(p) for p in problems if p is not None)
    check.elapsed_s = time.monotonic() - start
    failing = next(((i, p) for i, p in enumerate(problems) if p is not None), None)
    if failing is not None:
        index, problem = failing
        scenario, per_round = fed[index]
        result.failures.append(_report(OPLUS_LIVE, "oplus", index, (_oracle(problem),), problem,
                                       {"scenario": scenario, "items_per_round": per_round}, seed,
                                       tuple(sorted(faults)), save_dir))
    return check


def count_dgs_arrivals(drawn: Sequence[Any], result: SuiteResult) -> None:
    """How the live DGS run lands its cases (features of the report)."""
    from conformance.dgs_live_replan import replan_of
    from conformance.dgs_streaming import case_chunks

    for case in drawn:
        files = len(case_chunks(case))
        result.features["live: several files"] += files > 1
        result.features["live: re-planned mid-stream"] += replan_of(case, files) is not None


def _report(check: str, suite: str, index: int, oracles: tuple[str, ...], explanation: str,
            data: dict[str, Any], seed: int, faults: tuple[str, ...], save_dir: str | None) -> FailureReport:
    report = FailureReport(check, index, oracles, explanation, 0, 0, 0, data)
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite=suite, engine=ENGINE, scheduler=ENGINE, faults=faults,
                                         seed=seed, case=index, oracles=oracles, explanation=explanation,
                                         case_data=data)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report
