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
:mod:`conformance.dgs.engines.live` and :mod:`conformance.oplus.engines.live` (all of them as ONE
live query, with a driver kill at each crash point; DGS cases re-planned mid-stream, O+ cases
whose sources stay silent for a while: those modules' docstrings), judged by the same oracles
as the batch check. The first failure is shrunk with the live engine (every batch of
candidates one more live query; ``--shrink-budget`` bounds it, 0 reports it as drawn) by the
suite's own shrinker, as under ``--engine spark-streaming``, and saved; its replay runs the live
engine again (``engine``/``scheduler`` ``spark-streaming``). (Session 7: before, it was saved
unshrunk.)
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from conformance.core.shrink import DEFAULT_BUDGET as SHRINK_BUDGET
from conformance.core.results import CheckResult, SuiteResult

ENGINE = "spark-streaming"
DGS_LIVE = "spark-streaming vs spec(sort(u))"
OPLUS_LIVE = "spark-streaming vs sequential"


def dgs_live_check(drawn: Sequence[Any], spark: Any, seed: int, save_dir: str | None,
                   result: SuiteResult, shrink_budget: int = SHRINK_BUDGET) -> CheckResult:
    """Every DGS case through :func:`conformance.dgs.engines.live.streaming_engine` (one query);
    the first failure shrunk with the same engine (:func:`conformance.dgs.suite._shrink_and_save`)."""
    from conformance.dgs import suite as dgs_suite
    from conformance.dgs.engines.live import streaming_engine

    check = CheckResult(DGS_LIVE)
    start = time.monotonic()
    engine = streaming_engine(spark)
    observed = engine(drawn)
    count_dgs_arrivals(drawn, result)
    first: tuple[int, list[tuple[str, str]]] | None = None
    for i, seen in enumerate(observed):
        failed = dgs_suite.judge(drawn[i], seen)
        check.cases += 1
        if failed:
            check.failed += 1
            check.oracle_failures.update(oracle for oracle, _ in failed)
            first = first or (i, failed)
    check.elapsed_s = time.monotonic() - start
    if first is not None:
        index, failed = first
        result.failures.append(dgs_suite._shrink_and_save(DGS_LIVE, index, drawn[index], {o for o, _ in failed},
                                                          engine, seed, save_dir, ENGINE, shrink_budget))
    return check


def oplus_live_check(drawn: Sequence[tuple[dict[str, Any], int]], faults: frozenset[str], spark: Any, seed: int,
                     save_dir: str | None, result: SuiteResult, shrink_budget: int = SHRINK_BUDGET) -> CheckResult:
    """Every case through :func:`conformance.oplus.engines.live.streaming_engine` (one live query:
    job ``i`` = case ``i``), every :data:`~conformance.oplus.engines.live.LATE_EVERY`-th one with
    a source silent in its first files (:func:`~conformance.oplus.engines.live.late_arrivals`),
    judged by the Spark check's oracles on the scenario the live run was fed; the first failure
    shrunk with the same engine (:func:`conformance.streaming_runner.shrink_oplus_live`)."""
    from conformance.oplus.engines.live import late_arrivals, streaming_engine
    from conformance.oplus.suite import _oracle, spark_discrepancies
    from conformance.streaming_runner import shrink_oplus_live

    check = CheckResult(OPLUS_LIVE)
    start = time.monotonic()
    fed = late_arrivals(drawn, seed)
    result.features["live: a source silent in its first files"] += sum(a is not b for a, b in zip(fed, drawn))
    engine = streaming_engine(faults, spark)
    problems = spark_discrepancies(fed, engine)
    check.cases = len(problems)
    check.failed = sum(p is not None for p in problems)
    check.oracle_failures.update(_oracle(p) for p in problems if p is not None)
    check.elapsed_s = time.monotonic() - start
    failing = next((i for i, p in enumerate(problems) if p is not None), None)
    if failing is not None:
        result.failures.append(shrink_oplus_live(seed, failing, fed[failing], engine, faults, save_dir, shrink_budget))
    return check


def count_dgs_arrivals(drawn: Sequence[Any], result: SuiteResult) -> None:
    """How the live DGS run lands its cases (features of the report)."""
    from conformance.dgs.engines.replan import replan_of
    from conformance.dgs.engines.live import case_chunks

    for case in drawn:
        files = len(case_chunks(case))
        result.features["live: several files"] += files > 1
        result.features["live: re-planned mid-stream"] += replan_of(case, files) is not None
