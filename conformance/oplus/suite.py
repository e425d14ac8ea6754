"""The O+ suite (issue 8, 2(e)): every engine's outputs equal the sequential reference.

Checks, each on the same random scenarios (:mod:`conformance.oplus.cases`):

* ``reference SN vs sequential``          shared-nothing execution (STRETCH Alg. 1-2);
* ``reference elastic VSN vs sequential`` virtual shared-nothing with the scenario's elastic
  reconfigurations (Alg. 3-6, Theorem 3);
* ``spark vs sequential``                 spark_impl's O+ executor (``spark_impl.oplus``), every
  case in one batch of Spark jobs, with the injected O+ faults (``spark_impl.faults.OPLUS_FAULTS``);
  reported NOT RUN when the engine is not spark or spark_impl.oplus is missing, never as a pass;
* ``spark_impl O+ seeded faults vs their definitions`` (with the spark check; no Spark job,
  :mod:`conformance.oplus.checks.faults`);
* ``spark-streaming O+ front end and batch API contracts vs their definitions`` (with the spark
  check; no Spark job, :mod:`conformance.oplus.checks.live_contracts`);
* ``spark-streaming O+ commit bookkeeping vs its definition`` (with the spark check; no Spark
  job, :mod:`conformance.oplus.checks.commit`);
* ``spark_impl O+ handovers and run_scenario vs their definitions`` (with the spark check; one
  small batch, :mod:`conformance.oplus.checks.handover`);
* ``spark_impl O+ model promises vs their definitions`` (with the spark check; no Spark job,
  :mod:`conformance.oplus.checks.model`);
* ``spark-streaming O+ foreachBatch on a local Spark stand-in`` (with the spark check; no Spark
  job, :mod:`conformance.oplus.checks.live_standin`);
* ``spark-streaming vs sequential``       (with the spark check) every case through the live
  front end ``spark_impl.oplus.streaming`` as one query with driver crashes
  (:mod:`conformance.dgs_oplus_live`), the same oracles.

Outputs are compared as multisets of ``(ts, key, value)`` rows with the matcher, so a failure
names the first missing and unexpected rows. An engine that raises (or, on Spark, never
returns) fails the case with the ``engine`` oracle (:mod:`conformance.core.crashes`), never the
run. The first failing case of each check is shrunk (drop reconfigurations, input lists and
items, lower parallelism) and saved for replay. Spark cases run with their drawn
``items_per_round`` (1-5 items of each list per round), saved with the case as
``{"scenario": ..., "items_per_round": k}``.
"""

from __future__ import annotations

import copy
import importlib
import time
from typing import Any, Callable, Iterator, Sequence

from spec.errors import InputError
from spec.oplus.scenario import parse_scenario

from conformance.core.cases import draw_cases
from conformance.core.crashes import Crash, Guard, describe
from conformance.oplus.cases import oplus_cases
from conformance.oplus.edges import with_edges
from conformance.core.matcher import compare
from conformance.oplus.oracles import INSTANCE_TAG, ROUND_TAG, Row, as_rows, rows_of, show, timing_problem
from conformance.core.saved_case import save_case
from conformance.core.shrink import ShrinkResult, shrink
from conformance.core.results import CheckResult, FailureReport, Progress, SuiteResult

Runner = Callable[[dict[str, Any], int], list[Row]]

SHRINK_EVALUATIONS = 400
"""At most this many candidates run while shrinking one O+ failure (fewer with ``--shrink-budget``)."""

MODES = {"reference SN vs sequential": "sn", "reference elastic VSN vs sequential": "vsn"}


def reference_rows(case: dict[str, Any], mode: str, seed: int = 0) -> list[Row]:
    """The reference's output rows for ``case`` in ``mode`` (emission order)."""
    return rows_of(parse_scenario(case), mode, seed)


def spark_status() -> str | None:
    """None when spark_impl has an O+ executor, else why not."""
    try:
        importlib.import_module("spark_impl.oplus")
    except ImportError:
        return "spark engine not available (spark_impl has no O+ executor yet: spark_impl.oplus)"
    return None


def discrepancy(case: dict[str, Any], mode: str, seed: int = 0) -> str | None:
    """None when ``mode``'s outputs equal the sequential reference's, else the difference
    (``[engine] ...`` when the reference raised)."""
    try:
        got = reference_rows(case, mode, seed)
    except Exception as error:  # noqa: BLE001 - an engine crash is a finding
        return f"{ENGINE_TAG} the reference {mode} execution crashed: {describe(error)}"
    return _versus_sequential(case, got, mode)


def _versus_sequential(case: dict[str, Any], got: list[Row], who: str) -> str | None:
    try:
        expected = reference_rows(case, "sequential")
    except Exception as error:  # noqa: BLE001 - the oracle itself crashed: still a finding
        return f"{ENGINE_TAG} the sequential reference crashed: {describe(error)}"
    mismatch = compare(expected, got)
    if mismatch is None:
        return None
    return f"{who} outputs differ from the sequential reference:\n{mismatch.explain(show)}"


ENGINE_TAG = "[engine]"
"""How an explanation starts when the engine crashed (the ``engine`` oracle)."""

SparkCase = tuple[dict[str, Any], int]
"""A scenario and its items per round on Spark."""

SparkSeen = tuple[list[Row], list[tuple[int, int]], int | None]
"""Spark's rows of one case, parallel to them the ``(round, instance)`` that emitted each, and
the number of reconfigurations it applied (None: not reported, not judged)."""


def spark_engine(faults: frozenset[str], spark: Any = None, timeout_s: float = 1800.0
                 ) -> Guard[SparkCase, SparkSeen]:
    """spark_impl.oplus on a batch of ``(scenario, items per round)`` (one batch of Spark jobs)
    under the watchdog and crash isolation of :class:`conformance.core.crashes.Guard`."""
    from conformance.run import shared_session

    session = shared_session(spark)

    def run(cases: Sequence[SparkCase]) -> list[SparkSeen]:
        from spark_impl.oplus import run_batch

        result = run_batch(session(), [c for c, _ in cases], faults=sorted(faults),
                           items_per_round=[k for _, k in cases])
        return [(as_rows(r), list(e), a) for r, e, a in zip(result.rows, result.emitted, result.applied)]

    return Guard(run, timeout_s, on_hang=lambda: session().sparkContext.cancelAllJobs())


def spark_discrepancies(cases: Sequence[SparkCase], engine: Guard[SparkCase, SparkSeen]) -> list[str | None]:
    """Per case: None when Spark's outputs equal the sequential reference's, each was emitted in
    the round it is due in and by the instance that owns its key then
    (:mod:`conformance.oplus.oracles`), else the first difference."""
    problems: list[str | None] = []
    for (case, per_round), got in zip(cases, engine(cases)):
        if isinstance(got, Crash):
            problems.append(f"{ENGINE_TAG} {got.explain()}")
            continue
        rows, emitted, applied = got
        problems.append(_versus_sequential(case, rows, "spark")
                        or timing_problem(case, per_round, rows, emitted, applied))
    return problems


def _oracle(problem: str) -> str:
    for tag, oracle in ((ENGINE_TAG, "engine"), (ROUND_TAG, "round"), (INSTANCE_TAG, "instance")):
        if problem.startswith(tag):
            return oracle
    return "outputs"


def run_oplus_suite(*, cases: int, seed: int, progress: Progress | None = None,
                    save_dir: str | None = None, engine: str = "reference",
                    faults: frozenset[str] = frozenset(), spark: Any = None, live: bool = True,
                    shrink_budget: int = SHRINK_EVALUATIONS) -> SuiteResult:
    """Run every available check on ``cases`` random scenarios (``faults`` go to Spark);
    ``live``: also every case through the live front end (:mod:`conformance.dgs_oplus_live`);
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
        first: tuple[int, str] | None = None
        for index, case in enumerate(scenarios):
            problem = discrepancy(case, mode, seed + index)
            check.cases += 1
            if problem is not None:
                check.failed += 1
                check.oracle_failures[_oracle(problem)] += 1
                first = first or (index, problem)
            done += 1
            if progress is not None and (done % 20 == 0 or done == total):
                progress(done, total)
        check.elapsed_s = time.monotonic() - start
        if first is not None:
            result.failures.append(_shrink(name, mode, seed, first[0], scenarios[first[0]], save_dir, shrink_budget))
    _count_features(result, drawn)
    reason = spark_status() if engine == "spark" else f"engine {engine} (the spark check needs --engine spark)"
    if reason is not None:
        result.checks.append(CheckResult("spark vs sequential", status="unavailable", note=reason))
        return result
    result.faults = tuple(sorted(faults))
    from conformance.oplus.checks.faults import run_check

    run_check(result)  # Spark-free: the seeded faults are the bugs they name
    from conformance.oplus.checks.live_contracts import run_check as contracts_check

    contracts_check(drawn, result)  # Spark-free: the front end's and the batch API's refusals and rows
    from conformance.oplus.checks.commit import run_check as commit_check

    commit_check(result, seed)  # Spark-free: the live query's commit records, replays, batch_ms, pruning
    from conformance.oplus.checks.state import run_check as state_check

    state_check(result)  # Spark-free: WT multi and single key states as documented
    from conformance.oplus.checks.live_standin import run_check as live_local_check
    from conformance.oplus.checks.model import run_check as model_check

    model_check(result)  # Spark-free: ints above 256, times above 2**53, bounded state, typed/text keys, ...
    live_local_check(result)  # Spark-free: the live handler's batches on a stand-in (late tuples, bad rows, int keys)
    check = CheckResult("spark vs sequential")
    result.checks.append(check)
    start = time.monotonic()
    guard = spark_engine(faults, spark)
    problems = spark_discrepancies(drawn, guard)
    check.cases = len(problems)
    check.failed = sum(p is not None for p in problems)
    check.oracle_failures.update(_oracle(p) for p in problems if p is not None)
    check.elapsed_s = time.monotonic() - start
    failing = next((i for i, p in enumerate(problems) if p is not None), None)
    if failing is not None:
        result.failures.append(_shrink_spark(seed, failing, drawn[failing], guard, faults, save_dir, shrink_budget))
    from conformance.oplus.checks.handover import run_check as handover_check
    from conformance.run import shared_session

    handover_check(result, shared_session(spark)(), seed)  # one small batch: handovers, run_scenario
    if live:
        from conformance.dgs_oplus_live import oplus_live_check

        result.checks.append(oplus_live_check(drawn, faults, spark, seed, save_dir, result, shrink_budget))
    return result


def _count_features(result: SuiteResult, drawn: Sequence[SparkCase]) -> None:
    features = result.features
    for case, per_round in drawn:
        features[f"{case['operator']} WT={case.get('WT', 'single')}"] += 1
        features[f"{per_round} items per round"] += 1
        sizes = [case["parallelism"]] + [r["parallelism"] for r in case["reconfigurations"]]
        if any(b > a for a, b in zip(sizes, sizes[1:])):
            features["rescale up"] += 1
        if any(b < a for a, b in zip(sizes, sizes[1:])):
            features["rescale down"] += 1
        stamps = [item["ts"] for items in case["inputs"] for item in items if "ts" in item]
        if len(stamps) != len(set(stamps)):
            features["equal timestamps"] += 1


def _shrink_spark(seed: int, index: int, case: SparkCase, engine: Guard[SparkCase, SparkSeen],
                  faults: frozenset[str], save_dir: str | None, budget: int = SHRINK_EVALUATIONS) -> FailureReport:
    """Shrink a Spark failure: every batch of candidates is one batch of Spark jobs (at most
    ``budget`` candidates, and 90 s)."""
    scenario, per_round = case
    first = spark_discrepancies([case], engine)[0]
    wanted = _oracle(first) if first is not None else None

    def still_fails(batch: Sequence[dict[str, Any]]) -> list[bool]:
        problems = spark_discrepancies([(c, per_round) for c in batch], engine)
        return [p is not None and (wanted is None or _oracle(p) == wanted) for p in problems]

    reproduced = first is not None
    shrunk, stats = (shrink(scenario, candidates, still_fails, batch=32, deadline_s=90.0,
                            max_evaluations=min(SHRINK_EVALUATIONS, max(0, budget))) if reproduced
                     else (scenario, ShrinkResult(0, 0, False)))
    explanation = (spark_discrepancies([(shrunk, per_round)], engine)[0] if reproduced else None) or (
        "failed inside its batch, passes when run on its own (timing- or batch-dependent)")
    data = {"scenario": shrunk, "items_per_round": per_round}
    report = FailureReport("spark vs sequential", index, (_oracle(explanation),), explanation, _size(scenario),
                           _size(shrunk), stats.steps, data, reproduced=reproduced)
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="oplus", engine="spark", scheduler="spark",
                                         faults=tuple(sorted(faults)), seed=seed + index, case=index,
                                         oracles=report.oracles, explanation=explanation, case_data=data)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def _shrink(check: str, mode: str, seed: int, index: int, case: dict[str, Any],
            save_dir: str | None, budget: int = SHRINK_EVALUATIONS) -> FailureReport:
    def still_fails(batch: Sequence[dict[str, Any]]) -> list[bool]:
        return [discrepancy(c, mode, seed + index) is not None for c in batch]

    shrunk, stats = shrink(case, candidates, still_fails, max_evaluations=min(SHRINK_EVALUATIONS, max(0, budget)))
    explanation = discrepancy(shrunk, mode, seed + index) or "no longer fails"
    report = FailureReport(check, index, (_oracle(explanation),), explanation, _size(case), _size(shrunk),
                           stats.steps, shrunk)
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="oplus", engine="reference", scheduler=mode, faults=(),
                                         seed=seed + index, case=index, oracles=report.oracles,
                                         explanation=explanation, case_data=shrunk)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def replay(record: dict[str, Any], faults: frozenset[str] | None) -> tuple[bool, str]:
    """Replay a saved O+ case (``scheduler`` holds the mode, or ``spark``)."""
    if record.get("scheduler") in ("spark", "spark-streaming"):
        injected = frozenset(record.get("faults", ())) if faults is None else faults
        data = record["case_data"]
        case = (data["scenario"], int(data.get("items_per_round", 2))) if "scenario" in data else (data, 2)
        if record["scheduler"] == "spark-streaming":
            from conformance.oplus.engines.live import streaming_engine

            engine = streaming_engine(injected)
        else:
            engine = spark_engine(injected)
        spark_problem = spark_discrepancies([case], engine)[0]
        return spark_problem is None, spark_problem or "spark outputs equal the sequential reference"
    problem = discrepancy(record["case_data"], record.get("scheduler", "vsn"), int(record.get("seed", 0)))
    return problem is None, problem or "outputs equal the sequential reference"


def candidates(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Valid simplifications of an O+ scenario JSON, most aggressive first."""
    moves: list[dict[str, Any]] = []
    if case.get("reconfigurations"):
        moves.append({**case, "reconfigurations": []})
        for i in range(len(case["reconfigurations"])):
            moves.append({**case, "reconfigurations": case["reconfigurations"][:i] + case["reconfigurations"][i + 1:]})
    inputs = case["inputs"]
    for i in range(len(inputs)):
        if len(inputs) > 1:
            moves.append({**case, "inputs": inputs[:i] + inputs[i + 1:]})
        n = len(inputs[i])
        halves = [inputs[i][: n // 2], inputs[i][n // 2:]] if n >= 2 else []
        singles = [inputs[i][:j] + inputs[i][j + 1:] for j in range(n)]
        for smaller in halves + singles:
            moves.append({**case, "inputs": inputs[:i] + [smaller] + inputs[i + 1:]})
    if case["parallelism"] > 1:
        moves.append({**case, "parallelism": 1})
    for move in moves:
        try:
            parse_scenario(move)
        except InputError:
            continue
        yield copy.deepcopy(move)


def _size(case: dict[str, Any]) -> int:
    return sum(len(items) for items in case["inputs"]) + len(case.get("reconfigurations", []))

