"""The O+ suite: every engine's outputs equal the sequential reference.

Checks, each on the same random scenarios (:mod:`conformance.oplus.cases`):

* ``reference SN vs sequential``          shared-nothing execution (STRETCH Alg. 1-2);
* ``reference elastic VSN vs sequential`` virtual shared-nothing with the scenario's elastic
  reconfigurations (Alg. 3-6, Theorem 3);
* ``spark vs sequential``                 spark_impl's O+ executor (``spark_impl.oplus``), every
  case in one batch of Spark jobs, with the injected O+ faults (``spark_impl.faults.OPLUS_FAULTS``);
  reported NOT RUN when the engine is not spark or spark_impl.oplus is missing, never as a pass;
* ``spark-streaming vs sequential``       (with the spark check) every case through the live
  front end ``spark_impl.oplus.streaming`` as one query with driver crashes
  (:func:`oplus_live_check`: every case as one live query, sources silent in their first files
  for some, the same oracles; the first failure shrunk with the live engine and saved with
  ``engine``/``scheduler`` ``spark-streaming``).

Outputs are compared as multisets of ``(ts, key, value)`` rows with the matcher, so a failure
names the first missing and unexpected rows. An engine that raises (or, on Spark, never
returns) fails the case with the ``engine`` oracle (:mod:`conformance.core.crashes`), never the
run. The first failing case of each check is shrunk (drop reconfigurations, input lists and
items, lower parallelism) and saved for replay. Spark cases run with their drawn
``items_per_round`` (1-5 items of each list per round), saved with the case as
``{"scenario": ..., "items_per_round": k}``.

:func:`run_oplus_live` is the suite's Spark check under ``--engine spark-streaming``.
Orchestration only: cases, engines and oracles live in their modules. The suite's oracles
(:mod:`conformance.oplus.oracles`) are ``outputs``, ``round`` and ``instance`` (emission rounds,
:mod:`spec.oplus.emission`), ``late`` and ``engine``; the live engine also judges the request
log's bound (:func:`conformance.oplus.engines.live.request_log_problem`). Promises of
``spark_impl.oplus`` that no run's outputs show (the front end's and the batch API's contracts,
the commit bookkeeping, handovers, the seeded faults, the live handler on the pure-Python Spark
stand-in) are ordinary tests under ``tests/spark_impl/oplus/``, not checks of a user's run.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from conformance.core.cases import draw_cases
from conformance.core.crashes import describe
from conformance.core.run_config import RunConfig
from conformance.core.results import CheckResult, FailureReport, Progress, SuiteResult
from conformance.core.saved_case import save_case
from conformance.core.shrink import DEFAULT_BUDGET, ShrinkResult, shrink
from conformance.core.verdict import OracleName, Verdict, from_text
from conformance.oplus.cases import SparkCase, candidates, count_features, oplus_cases, size
from conformance.oplus import user_suite
from conformance.oplus.edges import with_edges
from conformance.oplus.engines.batch import spark_engine, spark_status
from conformance.oplus.engines import disorder, live as live_engine
from conformance.oplus.engines.reference import MODES, reference_rows
from conformance.oplus.oracles import (
    SparkEngine, first_failure, outputs_verdict, problem_text, spark_discrepancies, spark_judged,
)

ENGINE = "spark-streaming"
"""The live engine's name (saved cases, ``--engine spark-streaming``)."""

SHRINK_EVALUATIONS = 400
"""At most this many candidates run while shrinking one O+ failure (fewer with ``--shrink-budget``)."""


def reference_verdict(case: dict[str, Any], mode: str, seed: int = 0) -> Verdict:
    """The ``outputs`` verdict on ``mode``'s run of ``case`` (an ``engine`` failure when the
    reference raised)."""
    try:
        got = reference_rows(case, mode, seed)
    except Exception as error:  # noqa: BLE001 - an engine crash is a finding
        return from_text(OracleName.ENGINE, f"the reference {mode} execution crashed: {describe(error)}",
                         {"error": describe(error)})
    return outputs_verdict(case, got, mode)


def discrepancy(case: dict[str, Any], mode: str, seed: int = 0) -> str | None:
    """None when ``mode``'s outputs equal the sequential reference's, else the difference
    (:func:`reference_verdict` as text: ``[engine] ...`` when the reference raised)."""
    return problem_text(reference_verdict(case, mode, seed))


def failure_of(verdict: Verdict | None, fallback: str) -> tuple[str, str]:
    """``(oracle name, explanation)`` of a failed verdict for a report; ``fallback`` as an
    ``outputs`` explanation when there is none (the case no longer fails)."""
    text = problem_text(verdict)
    if verdict is None or text is None:
        return OracleName.OUTPUTS.value, fallback
    return verdict.name, text


def run_oplus_suite(*, cases: int, seed: int, progress: Progress | None = None,
                    save_dir: str | None = None, engine: str = "reference",
                    faults: frozenset[str] = frozenset(), spark: Any = None, live: bool = True,
                    shrink_budget: int = SHRINK_EVALUATIONS) -> SuiteResult:
    """Run every available check on ``cases`` random scenarios (``faults`` go to Spark);
    ``live``: also every case through the live front end (:func:`oplus_live_check`);
    ``shrink_budget``: at most that many candidates run while shrinking a failure
    (``--shrink-budget``; 0: none)."""
    result = SuiteResult("oplus", engine, seed, delay_unit="")
    drawn = with_edges(draw_cases(oplus_cases(), cases, seed), seed)
    scenarios = [case for case, _ in drawn]
    total = len(scenarios) * len(MODES)
    done = 0
    for name, mode in MODES.items():
        check = CheckResult(name)
        result.checks.append(check)
        start = time.monotonic()
        first: int | None = None
        for index, case in enumerate(scenarios):
            verdict = reference_verdict(case, mode, seed + index)
            check.cases += 1
            if not verdict.held:
                check.failed += 1
                check.oracle_failures[verdict.name] += 1
                first = index if first is None else first
            done += 1
            if progress is not None and (done % 20 == 0 or done == total):
                progress(done, total)
        check.elapsed_s = time.monotonic() - start
        if first is not None:
            result.failures.append(shrink_reference(name, mode, seed, first, scenarios[first], save_dir,
                                                    shrink_budget))
    count_features(result, drawn)
    reason = spark_status() if engine == "spark" else f"engine {engine} (the spark check needs --engine spark)"
    if reason is not None:
        result.checks.append(CheckResult("spark vs sequential", status="unavailable", note=reason))
        return result
    result.faults = tuple(sorted(faults))
    guard = spark_engine(faults, spark)
    check, failing = spark_check("spark vs sequential", drawn, guard)
    result.checks.append(check)
    if failing is not None:
        result.failures.append(shrink_spark(seed, failing, drawn[failing], guard, faults, save_dir, shrink_budget))
    if live:
        result.checks.append(oplus_live_check(drawn, faults, spark, seed, save_dir, result, shrink_budget))
        result.checks.append(disorder_check(drawn, faults, spark, seed, save_dir, result))
    return result


def spark_check(name: str, drawn: Sequence[SparkCase], engine: SparkEngine
                ) -> tuple[CheckResult, int | None]:
    """The check ``name``: every case through ``engine`` (one batch), judged by
    :func:`conformance.oplus.oracles.spark_judged`; with the index of the first failing
    case (None: all pass)."""
    check = CheckResult(name)
    start = time.monotonic()
    found = [first_failure(verdicts) for verdicts in spark_judged(drawn, engine)]
    check.cases = len(found)
    check.failed = sum(f is not None for f in found)
    check.oracle_failures.update(f.name for f in found if f is not None)
    check.elapsed_s = time.monotonic() - start
    return check, next((i for i, f in enumerate(found) if f is not None), None)


def shrink_spark(seed: int, index: int, case: SparkCase, engine: SparkEngine,
                 faults: frozenset[str], save_dir: str | None, budget: int = SHRINK_EVALUATIONS) -> FailureReport:
    """Shrink a Spark failure: every batch of candidates is one batch of Spark jobs (at most
    ``budget`` candidates, and 90 s)."""
    scenario, per_round = case
    first = first_failure(spark_judged([case], engine)[0])
    wanted = first.oracle if first is not None else None

    def still_fails(batch: Sequence[dict[str, Any]]) -> list[bool]:
        found = [first_failure(v) for v in spark_judged([(c, per_round) for c in batch], engine)]
        return [f is not None and (wanted is None or f.oracle == wanted) for f in found]

    reproduced = first is not None
    shrunk, stats = (shrink(scenario, candidates, still_fails, batch=32, deadline_s=90.0,
                            max_evaluations=min(SHRINK_EVALUATIONS, max(0, budget))) if reproduced
                     else (scenario, ShrinkResult(0, 0, False)))
    final = first_failure(spark_judged([(shrunk, per_round)], engine)[0]) if reproduced else None
    oracle, explanation = failure_of(final, "failed inside its batch, passes when run on its own "
                                            "(timing- or batch-dependent)")
    data = {"scenario": shrunk, "items_per_round": per_round}
    report = FailureReport("spark vs sequential", index, (oracle,), explanation, size(scenario),
                           size(shrunk), stats.steps, data, reproduced=reproduced)
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="oplus", engine="spark", scheduler="spark",
                                         faults=tuple(sorted(faults)), seed=seed + index, case=index,
                                         oracles=report.oracles, explanation=explanation, case_data=data)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def shrink_reference(check: str, mode: str, seed: int, index: int, case: dict[str, Any],
                     save_dir: str | None, budget: int = SHRINK_EVALUATIONS) -> FailureReport:
    """Shrink a reference failure of ``mode`` (at most ``budget`` candidates) and save it."""
    def still_fails(batch: Sequence[dict[str, Any]]) -> list[bool]:
        return [not reference_verdict(c, mode, seed + index).held for c in batch]

    shrunk, stats = shrink(case, candidates, still_fails, max_evaluations=min(SHRINK_EVALUATIONS, max(0, budget)))
    oracle, explanation = failure_of(reference_verdict(shrunk, mode, seed + index), "no longer fails")
    report = FailureReport(check, index, (oracle,), explanation, size(case), size(shrunk),
                           stats.steps, shrunk)
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="oplus", engine="reference", scheduler=mode, faults=(),
                                         seed=seed + index, case=index, oracles=report.oracles,
                                         explanation=explanation, case_data=shrunk)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def replay(record: dict[str, Any], faults: frozenset[str] | None) -> tuple[bool, str]:
    """Replay a saved O+ case (``scheduler`` holds the mode, or ``spark``)."""
    if str(record.get("scheduler", "")).startswith(user_suite.SCHEDULER + ":"):
        return user_suite.replay(record, faults)
    if record.get("scheduler") == DISORDER_SCHEDULER:
        injected = frozenset(record.get("faults", ())) if faults is None else faults
        data = record["case_data"]
        judged, _ = disorder.disorder_verdicts([(data["scenario"], int(data["items_per_round"]))], injected)
        problem = problem_text(first_failure(judged[0]))
        return problem is None, problem or "every oracle holds on the out-of-order landings"
    if record.get("scheduler") in ("spark", ENGINE):
        injected = frozenset(record.get("faults", ())) if faults is None else faults
        data = record["case_data"]
        case = (data["scenario"], int(data.get("items_per_round", 2))) if "scenario" in data else (data, 2)
        if record["scheduler"] == ENGINE:
            engine = live_engine.streaming_engine(injected)
        else:
            engine = spark_engine(injected)
        spark_problem = spark_discrepancies([case], engine)[0]
        return spark_problem is None, spark_problem or "spark outputs equal the sequential reference"
    problem = discrepancy(record["case_data"], record.get("scheduler", "vsn"), int(record.get("seed", 0)))
    return problem is None, problem or "outputs equal the sequential reference"


OPLUS_LIVE = "spark-streaming vs sequential"
"""The live check's name (default run and ``--engine spark-streaming``)."""


def oplus_live_check(drawn: Sequence[SparkCase], faults: frozenset[str], spark: Any, seed: int,
                     save_dir: str | None, result: SuiteResult, shrink_budget: int = DEFAULT_BUDGET) -> CheckResult:
    """Every case through :func:`conformance.oplus.engines.live.streaming_engine` (one live query:
    job ``i`` = case ``i``), every :data:`~conformance.oplus.engines.live.LATE_EVERY`-th one with
    a source silent in its first files (:func:`~conformance.oplus.engines.live.late_arrivals`),
    judged by the Spark check's oracles on the scenario the live run was fed; the first failure
    shrunk with the same engine (:func:`shrink_oplus_live`)."""
    fed = live_engine.late_arrivals(drawn, seed)
    result.features["live: a source silent in its first files"] += sum(a is not b for a, b in zip(fed, drawn))
    engine = live_engine.streaming_engine(faults, spark)
    check, failing = spark_check(OPLUS_LIVE, fed, engine)
    if failing is not None:
        result.failures.append(shrink_oplus_live(seed, failing, fed[failing], engine, faults, save_dir, shrink_budget))
    return check


def run_oplus_live(cases: int, seed: int, faults: frozenset[str], progress: Progress | None,
                   spark: Any, save_dir: str | None = None, shrink_budget: int = DEFAULT_BUDGET) -> SuiteResult:
    """The O+ suite's Spark check with the live engine (the whole batch one live query, some
    sources silent in their first files: :func:`conformance.oplus.engines.live.late_arrivals`); the
    first failure is shrunk (each candidate batch one live query) and saved (:func:`shrink_oplus_live`)."""
    result = SuiteResult("oplus", ENGINE, seed, delay_unit="", faults=tuple(sorted(faults)))
    drawn = live_engine.late_arrivals(with_edges(draw_cases(oplus_cases(), cases, seed), seed), seed)
    count_features(result, drawn)
    engine = live_engine.streaming_engine(faults, spark)
    check, failing = spark_check(OPLUS_LIVE, drawn, engine)
    result.checks.append(check)
    if progress is not None:
        progress(len(drawn), len(drawn))
    if failing is not None:
        result.failures.append(shrink_oplus_live(seed, failing, drawn[failing], engine, faults, save_dir,
                                                 shrink_budget))
    result.checks.append(disorder_check(drawn, faults, spark, seed, save_dir, result))
    return result


DISORDER = "spark-streaming files out of order vs sorted sequential"
"""The check of :mod:`conformance.oplus.engines.disorder` (with the live check)."""


def disorder_check(drawn: Sequence[SparkCase], faults: frozenset[str], spark: Any, seed: int,
                   save_dir: str | None, result: SuiteResult) -> CheckResult:
    """Every :data:`~conformance.oplus.engines.disorder.EVERY`-th case landed with later event
    times first in files of one modification time, run twice as one live query each (allowed
    lateness = the batch's disorder: outputs = the sequential reference on the sorted input;
    allowed lateness 0, drop: the late count the documented rule predicts and the outputs
    without those tuples); the first failure is saved (not shrunk: it is one run of the whole
    batch) with ``scheduler`` ``spark-streaming-disorder``."""
    cases = disorder.family(drawn)
    check = CheckResult(DISORDER)
    start = time.monotonic()
    judged, lateness = disorder.disorder_verdicts(cases, faults, spark)
    found = [first_failure(verdicts) for verdicts in judged]
    check.cases, check.failed = len(found), sum(f is not None for f in found)
    check.oracle_failures.update(f.name for f in found if f is not None)
    check.elapsed_s = time.monotonic() - start
    result.features["live: files landed later event times first, same modification time"] += len(cases)
    result.features["live: late tuples dropped and counted (allowed_lateness 0)"] += sum(
        bool(disorder.predicted_late(c, 0)) for c in cases)
    failing = next((i for i, f in enumerate(found) if f is not None), None)
    if failing is not None:
        oracle, explanation = failure_of(found[failing], "")
        data = {"scenario": cases[failing][0], "items_per_round": cases[failing][1], "allowed_lateness": lateness}
        report = FailureReport(DISORDER, failing, (oracle,), explanation, size(cases[failing][0]),
                               size(cases[failing][0]), 0, data)
        if save_dir is not None:
            json_path, test_path = save_case(save_dir, suite="oplus", engine=ENGINE, scheduler=DISORDER_SCHEDULER,
                                             faults=tuple(sorted(faults)), seed=seed + failing, case=failing,
                                             oracles=report.oracles, explanation=explanation, case_data=data)
            report.replay_file, report.pytest_file = str(json_path), str(test_path)
        result.failures.append(report)
    return check


DISORDER_SCHEDULER = "spark-streaming-disorder"


def shrink_oplus_live(seed: int, index: int, case: SparkCase, engine: SparkEngine,
                      faults: frozenset[str], save_dir: str | None, budget: int = DEFAULT_BUDGET) -> FailureReport:
    """The O+ suite's Spark shrinker (:func:`shrink_spark`) with the live engine (at most
    ``budget`` candidates); the case is saved with ``"engine"``/``"scheduler"``
    ``spark-streaming``."""
    report = shrink_spark(seed, index, case, engine, faults, None, budget)
    report.check = OPLUS_LIVE
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="oplus", engine=ENGINE, scheduler=ENGINE,
                                         faults=tuple(sorted(faults)), seed=seed + index, case=index,
                                         oracles=report.oracles, explanation=report.explanation,
                                         case_data=report.shrunk_case)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def run(request: RunConfig, progress: Progress | None) -> SuiteResult:
    """The suite as :class:`~conformance.core.protocols.Suite` runs it: :func:`run_oplus_suite`."""
    return run_oplus_suite(cases=request.case_count, seed=request.seed, progress=progress, save_dir=request.save_dir,
                           engine=request.engine, faults=request.faults, spark=request.spark,
                           shrink_budget=request.shrink_budget)


def run_live(request: RunConfig, progress: Progress | None) -> SuiteResult:
    """The suite on the live path (:class:`~conformance.core.protocols.Suite`): :func:`run_oplus_live`."""
    return run_oplus_live(request.case_count, request.seed, request.faults, progress, request.spark, request.save_dir,
                          request.shrink_budget)
