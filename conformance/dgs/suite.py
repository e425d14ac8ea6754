"""The DGS suite: every engine's run equals spec(sort(u)).

Cases: :mod:`conformance.dgs.cases` - non-trivial by construction (plans with forks and
joins over several workers, synchronizing events, per-stream delays and jitter, varied driver
ticks and ``inline_below``), the shipped consistent example programs in turn (case ``i`` runs
``CONSISTENT[i % 6]``, so every program appears in every run of 6 cases or more; every third
round of the six programs is *dense*: many synchronizing groups of one worker between short
leaf segments, :func:`conformance.dgs.cases.build`).

Checks, on the same cases:

* ``reference plan executor vs spec(sort(u))`` - :func:`reference.dgs.executor.execute_plan`
  (simulated workers, mailboxes, heartbeats; Theorem 3.5);
* ``spark vs spec(sort(u))`` - spark_impl's DGS executor (:func:`spark_impl.dgs.run_dgs_many`),
  every case, :data:`SPARK_BATCH` cases per batch of Spark jobs (tick ``t`` of every case of a
  batch is one Spark job); NOT RUN unless the engine is spark;
* ``spark balanced_plan and plan validation vs their definitions`` (with the spark check) - the
  plan builder of ``dgs-plan`` and the live front end against its promise, and the executor's
  plan validation on every case's plan and P-invalid variants of it (oracle ``plan``,
  DGS Def. 3.1 and 3.2: :mod:`conformance.dgs.plan_oracles.plans`);
* ``spark-streaming vs spec(sort(u))`` (with the spark check) - every case through the live
  front end ``spark_impl.dgs.streaming`` as one query with driver kills
  (:func:`dgs_live_check`; the same oracles);
* ``spark driver plan vs dependence order`` (with the spark check, no Spark job) - the order in
  which spark_impl's driver releases and plans every case's events (mailbox ticks, steps,
  inlining): each event once, on its worker or an ancestor, dependent events in key order
  (oracle ``order``, DGS Thm 3.5: :mod:`conformance.dgs.plan_oracles.release_order`; a wrong
  order is seen even when the two events happen to commute on the case's state; and every
  tick's cut into steps is ``steps_of``'s definition).

The promises of spark_impl's DGS internals that no run's outputs show (the live front end's
refusals, mailbox, checkpoint retention and bookkeeping, ``keyed_plan``, the network model and
release schedule, the batch driver on the pure-Python Spark stand-in, one-worker plans, a user
error in a task, the driver's call forms) are ordinary tests under ``tests/spark_impl/dgs/``,
not checks of a user's run.

Oracles (:func:`conformance.dgs.oracles.verdicts`), in order: ``engine`` (the run raised or never ended:
:mod:`conformance.core.crashes`), ``outputs`` (the outputs equal ``spec(sort(u))`` as multisets,
compared with the matcher by ``repr`` since DGS outputs need not be hashable), ``processed``
(every input event was processed exactly once, by its responsible worker or, inlined, by an
ancestor), ``state`` (the final state, every leaf joined back into the root, equals the
sequential program's by the program's state equality).

The first failing case of a check is shrunk (:func:`conformance.dgs.cases.candidates`: the one-worker plan, no
delays, one tick, no inlining, fewer events) while it keeps failing one of its oracles, and
saved for replay (:mod:`conformance.core.saved_case`; ``case_data`` is
:func:`conformance.dgs.cases.case_to_json`).

:func:`run_dgs_live` is the suite under ``--engine spark-streaming``: the reference check and
every case through the live front end. Orchestration only: cases, engines and oracles live in
their modules.
"""

from __future__ import annotations

import time
from typing import Any, Sequence

from conformance.core.progress import Ticker
from conformance.core.run_config import RunConfig
from conformance.core.results import CheckResult, FailureReport, Progress, SuiteResult
from conformance.core.saved_case import save_case
from conformance.core.shrink import DEFAULT_BUDGET, shrink
from conformance.core.verdict import OracleName, Verdict, failed as failed_verdicts, failed_names, fails
from conformance.core.watchdog import contained_check
from conformance.dgs import oracles
from conformance.dgs.cases import (
    DgsCase, candidates, case_from_json, case_to_json, count_features, draw_dgs_cases, size,
)
from conformance.dgs.plan_oracles import plans, release_order as release
from conformance.dgs.engines.batch import spark_engine
from conformance.dgs.engines import live as live_engine
from conformance.dgs.engines.reference import reference_engine
from conformance.dgs.oracles import BatchEngine

ENGINE = "spark-streaming"
"""The live engine's name (saved cases, ``--engine spark-streaming``)."""

SPARK_BATCH = 200
"""Cases per batch of Spark jobs (a batch runs as many jobs as its longest case has ticks)."""

SHRINK_EVALUATIONS = 300
"""At most this many candidates run while shrinking one DGS failure (fewer with ``--shrink-budget``)."""


REFERENCE = "reference plan executor vs spec(sort(u))"
SPARK = "spark vs spec(sort(u))"


def run_dgs_suite(*, cases: int, seed: int, progress: Progress | None = None, save_dir: str | None = None,
                  engine: str = "reference", spark: Any = None, batch: int = SPARK_BATCH,
                  live: bool = True, shrink_budget: int = SHRINK_EVALUATIONS) -> SuiteResult:
    """Run the reference check and, with ``engine == "spark"``, the Spark checks, on all
    ``cases`` cases (module docstring); ``live``: also every case through the live front
    end (:func:`dgs_live_check`); ``shrink_budget``: at most that many candidates run
    while shrinking a failure (``--shrink-budget``; 0: none)."""
    result = SuiteResult("dgs", engine, seed)
    drawn = draw_dgs_cases(cases, seed)
    count_features(result, drawn)
    spark_on = engine == "spark"
    total = len(drawn) * (2 if spark_on else 1)
    tick = Ticker(progress, total)
    result.checks.append(engine_check(REFERENCE, drawn, reference_engine(), len(drawn) or 1, result, tick,
                                      seed, save_dir, "reference", shrink_budget))
    if not spark_on:
        result.checks.append(CheckResult(SPARK, status="unavailable",
                                         note=f"engine {engine} (the spark check needs --engine spark)"))
        return result
    result.checks.append(engine_check(SPARK, drawn, spark_engine(spark), batch, result, tick, seed, save_dir,
                                      "spark", shrink_budget))
    # the Spark-free checks run the executor's code in this process: a crash or a hang there is
    # a failure of the check (conformance.core.watchdog.contained_check), not a crash of the suite
    result.checks.append(contained_check(result, PLANS, lambda: _plans_check(drawn, seed, result)))
    result.checks.append(contained_check(result, ORDER, lambda: _order_check(drawn, seed, result, save_dir)))
    if live:
        result.checks.append(dgs_live_check(drawn, spark, seed, save_dir, result, shrink_budget))
    return result


ORDER = "spark driver plan vs dependence order"
ORDER_ORACLE = OracleName.RELEASE_ORDER.value
PLAN_ORACLE = OracleName.PLAN.value


def _order_check(drawn: Sequence[DgsCase], seed: int, result: SuiteResult, save_dir: str | None) -> CheckResult:
    """The oracle ``order`` (:mod:`conformance.dgs.plan_oracles.release_order`) on every case; the
    first failure is shrunk and saved."""
    start = time.monotonic()
    found = release.check(list(drawn))
    checked = CheckResult(ORDER, cases=len(drawn), failed=len(found))
    if found:
        checked.oracle_failures[ORDER_ORACLE] += len(found)
        index, _ = found[0]
        shrunk, stats = shrink(drawn[index], candidates, lambda batch: [release.problem(c) is not None for c in batch],
                               max_evaluations=300, deadline_s=30.0)
        explanation = release.problem(shrunk) or found[0][1]
        report = FailureReport(ORDER, index, (ORDER_ORACLE,), explanation, size(drawn[index]), size(shrunk),
                               stats.steps, case_to_json(shrunk))
        if save_dir is not None:
            json_path, test_path = save_case(save_dir, suite="dgs", engine="driver-plan", scheduler="plan",
                                             faults=(), seed=seed, case=index, oracles=(ORDER_ORACLE,),
                                             explanation=explanation, case_data=case_to_json(shrunk))
            report.replay_file, report.pytest_file = str(json_path), str(test_path)
        result.failures.append(report)
    checked.elapsed_s = time.monotonic() - start
    return checked


PLANS = "spark balanced_plan and plan validation vs their definitions"


def _plans_check(drawn: Sequence[DgsCase], seed: int, result: SuiteResult) -> CheckResult:
    """``spark_impl.dgs.plans.balanced_plan`` on as many random requests as cases, and the plan
    validation on every case's plan and its invalid variants (:mod:`conformance.dgs.plan_oracles.plans`:
    a wrong plan would be wrong for the reference and Spark alike)."""
    start = time.monotonic()
    n = len(drawn)
    found = plans.check(n, seed) + plans.validity_problems(drawn)
    checked = CheckResult(PLANS, cases=2 * n, failed=len(found), elapsed_s=time.monotonic() - start)
    if found:
        checked.oracle_failures[PLAN_ORACLE] += len(found)
        result.failures.append(FailureReport(PLANS, 0, (PLAN_ORACLE,), found[0], 1, 1, 0, {"problems": found[:5]}))
    return checked


def engine_check(name: str, drawn: Sequence[DgsCase], engine: BatchEngine, batch: int, result: SuiteResult,
                 tick: Ticker, seed: int, save_dir: str | None, engine_name: str,
                 shrink_budget: int = SHRINK_EVALUATIONS) -> CheckResult:
    """The check ``name``: every case through ``engine`` in batches of ``batch``, judged by
    :func:`conformance.dgs.oracles.verdicts`; the first failure shrunk and saved."""
    check = CheckResult(name)
    start = time.monotonic()
    first: tuple[int, tuple[str, ...]] | None = None
    for offset in range(0, len(drawn), max(1, batch)):
        chunk = drawn[offset: offset + batch]
        for i, (case, observed) in enumerate(zip(chunk, engine(chunk))):
            failed = failed_names(oracles.verdicts(case, observed))
            check.cases += 1
            if failed:
                check.failed += 1
                check.oracle_failures.update(failed)
                if first is None:
                    first = (offset + i, failed)
        tick(len(chunk))
    check.elapsed_s = time.monotonic() - start
    if first is not None:
        result.failures.append(shrink_and_save(name, first[0], drawn[first[0]], set(first[1]), engine,
                                               seed, save_dir, engine_name, shrink_budget))
    return check


def shrink_and_save(check: str, index: int, case: DgsCase, wanted: set[str], engine: BatchEngine, seed: int,
                    save_dir: str | None, engine_name: str, budget: int = SHRINK_EVALUATIONS) -> FailureReport:
    """Shrink a failing case with ``engine`` (at most ``budget`` candidates; the shrink of one
    failure is also bounded by 3 minutes), check it fails on its own, and save it."""
    def still_fails(batch: Sequence[DgsCase]) -> list[bool]:
        return [bool(wanted & set(failed_names(oracles.verdicts(c, seen)))) for c, seen in zip(batch, engine(batch))]

    shrunk, stats = shrink(case, candidates, still_fails, batch=16,
                           max_evaluations=min(SHRINK_EVALUATIONS, max(0, budget)), deadline_s=180.0)
    final = failed_verdicts(oracles.verdicts(shrunk, engine([shrunk])[0]))
    reproduced = bool(final)
    if not final:  # passes on its own: report the original case, run alone
        final = failed_verdicts(oracles.verdicts(case, engine([case])[0])) if shrunk is not case else final
        reproduced, shrunk = bool(final), case
        if not final:
            final = (fails(OracleName.OUTPUTS, "failed inside its batch, passes when run on its own "
                           "(timing-dependent)"),)
    explanation = (f"program {shrunk.name}, seed {shrunk.seed}, delays <= {shrunk.max_delay} + jitter "
                   f"{shrunk.max_jitter}, tick {shrunk.tick}, inline_below {shrunk.inline_below}\n"
                   + explain(final))
    shown = case_to_json(shrunk)
    failed = failed_names(final)
    report = FailureReport(check, index, failed, explanation, size(case), size(shrunk), stats.steps, shown,
                           reproduced=reproduced)
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="dgs", engine=engine_name, scheduler="plan", faults=(),
                                         seed=seed, case=index, oracles=failed, explanation=explanation,
                                         case_data=shown)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def replay(record: dict[str, Any], faults: frozenset[str] | None) -> tuple[bool, str]:
    """Run a saved DGS case again on its engine; (passes, explanation)."""
    case = case_from_json(record["case_data"])
    if record.get("engine") == "driver-plan":
        found = release.problem(case)
        return found is None, found or "the driver plans every event once, dependent events in key order"
    if record.get("engine") == "spark-streaming":
        engine: BatchEngine = live_engine.streaming_engine()
    else:
        engine = spark_engine() if record.get("engine") == "spark" else reference_engine()
    failed = failed_verdicts(oracles.verdicts(case, engine([case])[0]))
    if not failed:
        return True, "outputs, processed events and final state equal the sequential program's"
    return False, explain(failed)


def explain(verdicts: Sequence[Verdict]) -> str:
    """Failed verdicts as the DGS reports print them: ``[oracle] explanation``, one per line."""
    return "\n".join(f"[{v.name}] {v.explanation}" for v in verdicts)


DGS_LIVE = "spark-streaming vs spec(sort(u))"
"""The live check's name."""


def dgs_live_check(drawn: Sequence[Any], spark: Any, seed: int, save_dir: str | None,
                   result: SuiteResult, shrink_budget: int = DEFAULT_BUDGET) -> CheckResult:
    """Every DGS case through :func:`conformance.dgs.engines.live.streaming_engine` (one live
    query with driver kills, cases re-planned mid-stream), judged by the same oracles as the
    batch check; the first failure shrunk with the same engine (:func:`shrink_and_save`: every
    batch of candidates one more live query) and saved with ``engine`` ``spark-streaming``."""
    check = CheckResult(DGS_LIVE)
    start = time.monotonic()
    engine = live_engine.streaming_engine(spark)
    observed = engine(drawn)
    live_engine.count_arrivals(drawn, result)
    first: tuple[int, tuple[str, ...]] | None = None
    for i, seen in enumerate(observed):
        failed = failed_names(oracles.verdicts(drawn[i], seen))
        check.cases += 1
        if failed:
            check.failed += 1
            check.oracle_failures.update(failed)
            first = first or (i, failed)
    check.elapsed_s = time.monotonic() - start
    if first is not None:
        index, failed = first
        result.failures.append(shrink_and_save(DGS_LIVE, index, drawn[index], set(failed),
                                               engine, seed, save_dir, ENGINE, shrink_budget))
    return check


def run_dgs_live(cases: int, seed: int, progress: Progress | None, save_dir: str | None, spark: Any,
                 shrink_budget: int = DEFAULT_BUDGET) -> SuiteResult:
    """The DGS suite under ``--engine spark-streaming``: the reference check, then every case
    through the live DGS front end (one query per :data:`SPARK_BATCH` cases); the first failure
    is shrunk (each candidate batch one live query) and saved."""
    result = SuiteResult("dgs", ENGINE, seed)
    drawn = draw_dgs_cases(cases, seed)
    count_features(result, drawn)
    live_engine.count_arrivals(drawn, result)
    tick = Ticker(progress, 2 * len(drawn))
    result.checks.append(engine_check(REFERENCE, drawn, reference_engine(), len(drawn) or 1, result, tick, seed,
                                      save_dir, "reference", shrink_budget))
    result.checks.append(engine_check(DGS_LIVE, drawn, live_engine.streaming_engine(spark), SPARK_BATCH, result, tick,
                                      seed, save_dir, ENGINE, shrink_budget))
    return result


def run(request: RunConfig, progress: Progress | None) -> SuiteResult:
    """The suite as :class:`~conformance.core.protocols.Suite` runs it: :func:`run_dgs_suite`
    (its own batch size, :data:`SPARK_BATCH`; no seeded faults)."""
    return run_dgs_suite(cases=request.case_count, seed=request.seed, progress=progress, save_dir=request.save_dir,
                         engine=request.engine, spark=request.spark, shrink_budget=request.shrink_budget)


def run_live(request: RunConfig, progress: Progress | None) -> SuiteResult:
    """The suite on the live path (:class:`~conformance.core.protocols.Suite`): :func:`run_dgs_live`."""
    return run_dgs_live(request.case_count, request.seed, progress, request.save_dir, request.spark, request.shrink_budget)
