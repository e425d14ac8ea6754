"""``streamproof conformance --engine spark-streaming``: the suites through the live front ends
(issue 14, item 6), judged by the same oracles as ``--engine spark``.

=======  ==================================================================================
suite    live front end, engine
=======  ==================================================================================
fries    ``spark_impl.reconfig.streaming.start_query`` (:mod:`conformance.fries.live_suite`)
dgs      ``spark_impl.dgs.streaming.start_dgs_query`` (:mod:`conformance.dgs.engines.live`)
oplus    ``spark_impl.oplus.streaming.start_oplus_query`` (:mod:`conformance.oplus.engines.live`)
=======  ==================================================================================

Each feeds a case's input to a file-source query in several files, lets the query run the job
and reads the results back from the sink (or the executor's committed output). Seeded faults
(``--list-faults``) go where ``--engine spark`` sends them: the Fries executor's to the fries
suite, the O+ executor's to the oplus suite (a fault with no selected suite is bad input).
The DGS suite keeps its reference check beside the live one.
"""

from __future__ import annotations

from typing import Any, Callable

from spec.errors import InputError

from conformance.core.shrink import DEFAULT_BUDGET
from conformance.core.results import CheckResult, Progress, SuiteResult

ENGINE = "spark-streaming"
LIVE_OPLUS = "spark-streaming vs sequential"
LIVE_DGS = "spark-streaming vs spec(sort(u))"

LIVE_CASES = {"fries": 40, "dgs": 100, "oplus": 100}
"""Cases per suite when ``--cases`` is not given. Fries: one live query per case (the front end
runs one job), about 8 s each even 4 at a time, so the batch suite's 200 would take half an
hour; 40 = the stepped section (8-10 cases, where every Fries fault is caught) plus about 30
random cases. DGS and O+ run a whole batch as one query: the batch suite's counts."""


def streaming_faults() -> dict[str, str]:
    """The seeded faults the live engines can inject (Fries and O+ executors)."""
    from spark_impl.faults import FAULTS

    return dict(FAULTS)


def run_streaming_suites(config: Any, progress_for: Callable[[str], Progress | None]) -> list[SuiteResult]:
    """Every selected suite on the live path (``config``: :class:`conformance.run.RunConfig`)."""
    from spark_impl.faults import OPLUS_FAULTS

    known = streaming_faults()
    unknown = sorted(config.faults - set(known))
    if unknown:
        raise InputError(f"unknown fault {unknown[0]!r} (known: {', '.join(sorted(known))}; see --list-faults)",
                         "--inject-fault")
    oplus_faults = frozenset(config.faults & OPLUS_FAULTS)
    fries_faults = frozenset(config.faults - OPLUS_FAULTS)
    for faults, suite in ((fries_faults, "fries"), (oplus_faults, "oplus")):
        if faults and suite not in config.suites:
            raise InputError(f"fault {sorted(faults)[0]!r} is seeded in the executor the {suite} suite runs; "
                             f"select --suite {suite} or all", "--inject-fault")
    results: list[SuiteResult] = []
    for suite in config.suites:
        cases = config.cases if config.cases is not None else LIVE_CASES[suite]
        progress = progress_for(suite)
        if suite == "fries":
            from conformance.fries.live_suite import run_fries_streaming

            results.append(run_fries_streaming(cases=cases, seed=config.seed, scheduler=config.scheduler,
                                               faults=fries_faults, batch=config.batch_size, progress=progress,
                                               spark=config.spark, save_dir=config.save_dir,
                                               shrink_budget=config.shrink_budget))
        elif suite == "dgs":
            results.append(run_dgs_live(cases, config.seed, progress, config.save_dir, config.spark,
                                        config.shrink_budget))
        else:
            results.append(run_oplus_live(cases, config.seed, oplus_faults, progress, config.spark, config.save_dir,
                                          config.shrink_budget))
    return results


def run_dgs_live(cases: int, seed: int, progress: Progress | None, save_dir: str | None, spark: Any,
                 shrink_budget: int = DEFAULT_BUDGET) -> SuiteResult:
    """The DGS suite: the reference check, then every case through the live DGS front end
    (one query per :data:`conformance.dgs.suite.SPARK_BATCH` cases); the first failure is
    shrunk (each candidate batch one live query) and saved."""
    from conformance.dgs_oplus_live import count_dgs_arrivals
    from conformance.dgs.engines.live import streaming_engine
    from conformance.dgs.suite import (
        REFERENCE, SPARK_BATCH, _count_features, _run_check, _Ticker, draw_dgs_cases, reference_engine,
    )

    result = SuiteResult("dgs", ENGINE, seed)
    drawn = draw_dgs_cases(cases, seed)
    _count_features(result, drawn)
    count_dgs_arrivals(drawn, result)
    tick = _Ticker(progress, 2 * len(drawn))
    result.checks.append(_run_check(REFERENCE, drawn, reference_engine(), len(drawn) or 1, result, tick, seed,
                                    save_dir, "reference", shrink_budget))
    result.checks.append(_run_check(LIVE_DGS, drawn, streaming_engine(spark), SPARK_BATCH, result, tick, seed,
                                    save_dir, ENGINE, shrink_budget))
    return result


def run_oplus_live(cases: int, seed: int, faults: frozenset[str], progress: Progress | None,
                   spark: Any, save_dir: str | None = None, shrink_budget: int = DEFAULT_BUDGET) -> SuiteResult:
    """The O+ suite's Spark check with the live engine (the whole batch one live query, some
    sources silent in their first files: :func:`conformance.oplus.engines.live.late_arrivals`); the
    first failure is shrunk (each candidate batch one live query) and saved (:func:`shrink_oplus_live`)."""
    import time

    from conformance.core.cases import draw_cases
    from conformance.oplus.cases import oplus_cases
    from conformance.oplus.edges import with_edges
    from conformance.oplus.engines.live import late_arrivals, streaming_engine
    from conformance.oplus.suite import _count_features, _oracle, spark_discrepancies

    result = SuiteResult("oplus", ENGINE, seed, delay_unit="", faults=tuple(sorted(faults)))
    drawn = late_arrivals(with_edges(draw_cases(oplus_cases(), cases, seed), seed), seed)
    _count_features(result, drawn)
    check = CheckResult(LIVE_OPLUS)
    result.checks.append(check)
    start = time.monotonic()
    engine = streaming_engine(faults, spark)
    problems = spark_discrepancies(drawn, engine)
    check.cases = len(problems)
    check.failed = sum(p is not None for p in problems)
    check.oracle_failures.update(_oracle(p) for p in problems if p is not None)
    check.elapsed_s = time.monotonic() - start
    if progress is not None:
        progress(len(drawn), len(drawn))
    failing = next((i for i, p in enumerate(problems) if p is not None), None)
    if failing is not None:
        result.failures.append(shrink_oplus_live(seed, failing, drawn[failing], engine, faults, save_dir,
                                                 shrink_budget))
    return result


def shrink_oplus_live(seed: int, index: int, case: Any, engine: Any, faults: frozenset[str],
                      save_dir: str | None, budget: int = DEFAULT_BUDGET) -> Any:
    """The O+ suite's Spark shrinker (:func:`conformance.oplus.suite._shrink_spark`) with the
    live engine (at most ``budget`` candidates); the case is saved with
    ``"engine"``/``"scheduler"`` ``spark-streaming``."""
    from conformance.oplus.suite import _shrink_spark
    from conformance.core.saved_case import save_case

    report = _shrink_spark(seed, index, case, engine, faults, None, budget)
    report.check = LIVE_OPLUS
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="oplus", engine=ENGINE, scheduler=ENGINE,
                                         faults=tuple(sorted(faults)), seed=seed + index, case=index,
                                         oracles=report.oracles, explanation=report.explanation,
                                         case_data=report.shrunk_case)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report
