"""The Fries differential suite: random scenarios through an engine, judged by the oracles.

1. Draw ``cases`` random scenarios (``conformance.fries.cases.scenarios`` for the dataflow, functions,
   sources and reconfigurations; :mod:`conformance.fries.cases.timing` for delays, stragglers,
   control-message delays and restart points; :mod:`conformance.fries.cases.streams` to stretch
   some streams so requests land mid-stream), reproducibly from ``seed``.
2. Run them through the engine in batches (one ``run_scenarios`` call per batch for Spark: the
   cases share one SparkSession and as few jobs as the executor can manage).
3. Judge each run (:mod:`conformance.fries.oracles`).
4. Shrink the first failing case (:mod:`conformance.fries.cases.moves`, candidates run in
   batches too) while it keeps failing one of the oracles it first failed, and save it as a
   replayable JSON file plus a pytest regression file (:mod:`conformance.core.saved_case`).

Before the cases, with the Spark engine, two oracles judged on the driver without a Spark job
(:mod:`conformance.fries.driver_oracles`): the executor's MCS against the spec's on drawn shapes
and the stable hash and routing against their documented definition and vectors. The executor's
internals (driver, control channel, records, storage, sources, the streaming front end, runs on
the pure-Python Spark stand-in, refusals) are checked by ordinary tests under
``tests/spark_impl/`` (``reconfig/test_fries_*.py``, ``test_store_and_record_log.py``,
``test_key_routing_contract.py``, ...), not by the suite.

:func:`run_fries_streaming` is the same suite on the live path (``--engine spark-streaming``):
the ``stepped`` section's cases the front end can run (mode ``live-stepped``), then random
scenarios (a few with nested keys and values of mixed types, mode ``live-typed``; the rest mode
``live``), each through :class:`~conformance.fries.engines.live.StreamingEngine`;
the first failure is shrunk and saved with ``"scheduler": "<scheduler>:<mode>"``.

Orchestration only: the cases are drawn by :mod:`conformance.fries.cases`, run by
:mod:`conformance.fries.engines` and judged by :mod:`conformance.fries.oracles`.
"""

from __future__ import annotations

import time
from collections import Counter
from functools import partial
from pathlib import Path
from typing import Any, Sequence

from hypothesis import strategies as st

from spec.fries.scenario import Scenario, Timing, scenario_from_json

from conformance.core.cases import draw_cases
from conformance.core.run_config import RunConfig
from conformance.core.results import CheckResult, FailureReport, Progress, SuiteResult
from conformance.core.saved_case import save_case
from conformance.core.shrink import shrink
from conformance.core.verdict import failed
from conformance.fries.cases.alignment import is_probe_shaped, pruning_shape
from conformance.fries.cases.codec import scenario_to_json
from conformance.fries.cases.moves import candidates, size
from conformance.fries.cases.sections import (
    honest_claims, live_case, race_section, race_strategy, scenario_strategy, stepped_section,
)
from conformance.fries.driver_oracles.mcs import run_mcs_check
from conformance.fries.driver_oracles.stable_hash import run_hash_check
from conformance.fries.config import FriesConfig
from conformance.fries.engines.catalogue import FriesEngine, engine_status, make_engine
from conformance.fries.engines.live import MODES, StreamingEngine
from conformance.fries.engines.typed import typed_section
from conformance.fries.engines.paths import applicable, prepare
from conformance.fries.oracles import Judgement, judge


def run_fries_suite(config: FriesConfig, *, progress: Progress | None = None, spark: Any = None) -> SuiteResult:
    """Run the suite (module docstring). The result says honestly what could not run."""
    result = SuiteResult("fries", config.engine, config.seed, faults=tuple(sorted(config.faults)),
                         delay_unit="ms" if config.engine == "spark" else "time units")
    check = CheckResult(f"{config.engine} vs spec serial execution")
    result.checks.append(check)
    reason = engine_status(config.engine)
    strategy = scenario_strategy()
    if reason is None and isinstance(strategy, str):
        reason = strategy
    if reason is not None or isinstance(strategy, str):
        check.status, check.note = "unavailable", reason
        return result
    engines: dict[str, FriesEngine] = {}

    def engine_for(path: str) -> FriesEngine:
        if path not in engines:
            engines[path] = make_engine(config.engine, scheduler=config.scheduler, faults=config.faults, spark=spark,
                                        path=path)
        return engines[path]

    engine_for("planned")  # bad faults are bad input before anything runs
    if config.engine == "spark" and config.scheduler == "fries":
        # Spark-free and first: a fail-fast run (mutation testing) stops here on an MCS bug
        if run_mcs_check(config, result) and config.fail_fast:
            return result
    if config.engine == "spark":  # Spark-free too: the stable hash and routing against their definition
        if run_hash_check(result) and config.fail_fast:
            return result
    start = time.monotonic()
    races = round(config.cases * config.race_fraction)
    paths = path_section(strategy, config)
    if not isinstance(race_strategy(), str) and config.cases >= PATHS_FROM and config.scheduler != "epoch":
        stepped = stepped_section(config)
        # the epoch path runs the stepped cases first, at the same job indices, in the same
        # process: a cache or state shared between schedulers then hands epoch's answers to fries
        paths = [(p, stepped + c if p == "epoch" else c) for p, c in paths] + [("stepped", stepped)]
    race = race_strategy()
    usual = max(0, config.cases - races - sum(len(cases) for _, cases in paths))
    scenarios = [honest_claims(s) for s in draw_cases(strategy, usual, config.seed)]
    batches = [(o, min(o + config.batch_size, usual), "planned") for o in range(0, usual, max(1, config.batch_size))]
    early: list[tuple[int, int, str]] = []
    for path, cases in paths:
        # the deterministic sections first: a fail-fast run (mutation testing) stops early
        (early if path in EARLY_PATHS else batches).append((len(scenarios), len(scenarios) + len(cases), path))
        scenarios += cases
    batches = sorted(early, key=lambda b: EARLY_PATHS.index(b[2])) + batches
    race_start = len(scenarios)
    if not isinstance(race, str):
        scenarios += race_section(race, races, config)
        result.features["race cases"] += len(scenarios) - race_start
    batches += [(o, min(o + config.race_batch_size, len(scenarios)), "planned")
                for o in range(race_start, len(scenarios), max(1, config.race_batch_size))]
    first_failure: tuple[int, Judgement, str] | None = None
    done = 0
    for offset, end, path in batches:
        batch = scenarios[offset: end]
        began = time.monotonic()
        judged = judge_batch(engine_for(path), batch)
        part = "race section" if offset >= race_start else f"path: {path}"
        result.seconds[part] = result.seconds.get(part, 0.0) + time.monotonic() - began
        for i, (scenario, judgement, delays) in enumerate(judged):
            index = offset + i
            check.cases += 1
            result.delays.extend(delays)
            count_features(result, scenario)
            if path != "planned":
                result.features[f"path: {path}"] += 1
            if not judgement.ok:
                check.failed += 1
                check.oracle_failures.update(judgement.failed_oracles)
                if first_failure is None:
                    first_failure = (index, judgement, path)
        done += len(batch)
        if progress is not None:
            progress(done, len(scenarios))
        if config.fail_fast and first_failure is not None:
            break
    check.elapsed_s = time.monotonic() - start
    if first_failure is not None and not config.fail_fast:
        index, judgement, path = first_failure
        result.failures.append(shrink_and_save(config, engine_for(path), check.name, index, scenarios[index],
                                               judgement, path))
    return result


#: Cases per entry path of the Spark executor in a run of at least :data:`PATHS_FROM` cases
#: (``epoch``: a tenth of the cases, at least 2). Drawn for the path (filtered by
#: :func:`~conformance.fries.engines.paths.applicable`), so every run of that size has them.
PATH_CASES = {"submit": 2, "rollback": 2, "resume": 2, "directory": 2, "generated": 2, "unbounded": 2,
              "streaming": 2, "sink": 2, "objstore": 1}
PATHS_FROM = 20


def path_section(strategy: st.SearchStrategy[Scenario], config: FriesConfig,
                 only: tuple[str, ...] | None = None) -> list[tuple[str, list[Scenario]]]:
    """The cases of every non-default entry path (:mod:`conformance.fries.engines.paths`), each
    list run as one batch: none below :data:`PATHS_FROM` cases (``only``: just these paths,
    drawn as in a full run)."""
    if config.cases < PATHS_FROM:
        return []
    wanted = {"epoch": max(2, config.cases // 10), **PATH_CASES}
    out = []
    for number, (path, n) in enumerate(wanted.items()):
        if path == "epoch" and config.scheduler == "epoch" or only is not None and path not in only:
            continue  # the whole run is epoch already
        fitting = strategy.filter(partial(applicable, path)).map(partial(prepare, path))
        out.append((path, [honest_claims(s) for s in draw_cases(fitting, n, config.seed + 7919 * (number + 1))]))
    return out


#: Paths run before the usual cases, in this order (deterministic teeth, cheap: fail-fast runs
#: stop early; ``epoch`` runs the stepped cases before ``stepped`` does).
EARLY_PATHS = ("epoch", "stepped", "sink")


def judge_batch(engine: FriesEngine, scenarios: Sequence[Scenario]) -> list[tuple[Scenario, Judgement, tuple[float, ...]]]:
    """Run a batch and judge every run."""
    outcomes = engine(scenarios)
    return [(s, judge(s, o), o.delays) for s, o in zip(scenarios, outcomes)]


def shrink_and_save(config: FriesConfig, engine: FriesEngine, check: str, index: int, scenario: Scenario,
                    judgement: Judgement, path: str = "planned") -> FailureReport:
    """Shrink a failing case with ``engine`` while it fails one of the oracles it failed, check
    it fails on its own, and save it (when ``config.save_dir`` is set)."""
    wanted = set(judgement.failed_oracles)
    original = scenario_to_json(scenario)

    def still_fails(batch: Sequence[dict[str, Any]]) -> list[bool]:
        judged = judge_batch(engine, [scenario_from_json(value) for value in batch])
        return [bool(wanted & set(j.failed_oracles)) for _, j, _ in judged]

    shrunk, stats = shrink(original, candidates, still_fails, batch=16,
                           max_evaluations=config.shrink_evaluations, deadline_s=config.shrink_deadline_s)
    final = judge_batch(engine, [scenario_from_json(shrunk)])[0][1]
    reproduced = not final.ok
    if final.ok:  # the shrunk case passes on its own: fall back to the original case
        alone = judge_batch(engine, [scenario])[0][1] if shrunk != original else final
        shrunk, final, reproduced = original, judgement, not alone.ok
    explanation = explain(final)
    if not reproduced:
        explanation += ("\n(timing-dependent: this case failed inside its batch but passed when run on its "
                        "own, so --replay may pass; the failure above is from the batch run)")
    report = FailureReport(check, index, final.failed_oracles, explanation, size(original), size(shrunk),
                           stats.steps, shrunk, reproduced=reproduced)
    if config.save_dir is not None:
        json_path, test_path = save_case(
            Path(config.save_dir), suite="fries", engine=config.engine,
            scheduler=config.scheduler if path == "planned" else f"{config.scheduler}:{path}",
            faults=tuple(sorted(config.faults)), seed=config.seed, case=index, oracles=final.failed_oracles,
            explanation=explanation, case_data=shrunk)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def explain(judgement: Judgement) -> str:
    """Every failed oracle of a judgement, in words."""
    parts = []
    for verdict in failed(judgement.verdicts):
        parts.append(f"[{verdict.name}] {verdict.message}\n" + _indent(verdict.detail))
    return "\n".join(parts)


def replay(record: dict[str, Any], faults: frozenset[str] | None) -> tuple[bool, str]:
    """Run a saved case again; ``faults`` None means the recorded ones. Returns (passes,
    explanation)."""
    scenario = scenario_from_json(record["case_data"], "case_data")
    chosen = frozenset(record.get("faults", [])) if faults is None else faults
    reason = engine_status(record["engine"])
    if reason is not None:
        return False, reason
    scheduler, _, path = str(record.get("scheduler", "fries")).partition(":")
    engine = make_engine(record["engine"], scheduler=scheduler, faults=chosen, path=path or "planned")
    judgement = judge_batch(engine, [scenario])[0][1]
    return judgement.ok, explain(judgement) if not judgement.ok else "all oracles pass"


def count_timing(features: Counter[str], timing: Timing) -> None:
    """Count the timing hooks a case uses (restarts, delayed FCMs, stragglers) in ``features``:
    shared by every suite whose cases carry a :class:`~spec.fries.scenario.Timing`."""
    if timing.restarts:
        features["with restarts"] += 1
    if timing.fcm_delay != (0.0, 0.0):
        features["delayed control messages"] += 1
    if timing.stragglers:
        features["stragglers"] += 1


def count_features(result: SuiteResult, scenario: Scenario) -> None:
    """Count what ``scenario`` exercises in the result's features."""
    features = result.features
    features["cases"] += 1
    features[f"reconfigurations={len(scenario.reconfigurations)}"] += 1
    count_timing(features, scenario.timing)
    if any(p > 1 for p in scenario.parallelism.values()):
        features["parallel workers"] += 1
    if is_probe_shaped(scenario):
        features["reconfigured member after a parallel reconfigured parent"] += 1
    shape = pruning_shape(scenario)
    if shape is not None:
        features[f"MCS pruning: {shape}"] += 1


def _indent(text: str) -> str:
    return "\n".join("    " + line for line in text.splitlines())


LIVE_CHECK = "spark-streaming vs spec serial execution"
"""The live check's name (:func:`run_fries_streaming`)."""


def streaming_cases(n: int, seed: int) -> list[Scenario]:
    """``n`` random scenarios the front end can run (the ``live`` mode's cases)."""
    strategy = scenario_strategy()
    assert not isinstance(strategy, str)
    fitting = strategy.filter(partial(applicable, "streaming"))
    return [live_case(honest_claims(s)) for s in draw_cases(fitting, n, seed)]


def stepped_cases(seed: int) -> list[Scenario]:
    """The batch suite's stepped cases for ``seed`` that the front end can run (the
    ``live-stepped`` mode's cases; 8-10 of 11)."""
    return [live_case(s) for s in stepped_section(FriesConfig(seed=seed)) if applicable("streaming", s)]


def run_fries_streaming(*, cases: int, seed: int, scheduler: str, faults: frozenset[str], batch: int,
                        progress: Progress | None = None, spark: Any = None, save_dir: str | None = None,
                        shrink_budget: int = 2000) -> SuiteResult:
    """The Fries suite's check on the live path (module docstring): ``cases`` in all, the
    stepped section first (when ``cases`` >= its size), the rest random; the first failing
    case is shrunk and saved to ``save_dir``."""
    result = SuiteResult("fries", "spark-streaming", seed, faults=tuple(sorted(faults)), delay_unit="ms")
    check = CheckResult(LIVE_CHECK)
    result.checks.append(check)
    stepped = stepped_cases(seed)
    stepped = stepped if cases >= len(stepped) else []
    typed, drawn_live = typed_section(streaming_cases(cases - len(stepped), seed))
    sections = [("live-stepped", stepped), ("live-typed", typed), ("live", drawn_live)]
    engines = {mode: StreamingEngine(scheduler, faults, spark=spark, mode=mode) for mode in MODES}
    first: tuple[int, Any, Scenario, str] | None = None
    start = time.monotonic()
    done, total = 0, sum(len(drawn) for _, drawn in sections)
    for mode, drawn in sections:
        for offset in range(0, len(drawn), max(1, batch)):
            chunk = drawn[offset: offset + batch]
            began = time.monotonic()
            for position, (scenario, judgement, delays) in enumerate(judge_batch(engines[mode], chunk)):
                check.cases += 1
                result.delays.extend(delays)
                result.features[f"path: {mode}"] += 1
                if scenario.timing.restarts:
                    result.features["driver crash"] += 1
                if not judgement.ok:
                    check.failed += 1
                    check.oracle_failures.update(judgement.failed_oracles)
                    if first is None:
                        first = (done + position, judgement, scenario, mode)
            done += len(chunk)
            result.seconds[f"path: {mode}"] = result.seconds.get(f"path: {mode}", 0.0) + time.monotonic() - began
            if progress is not None:
                progress(done, total)
    check.elapsed_s = time.monotonic() - start
    if first is not None:
        index, judgement, scenario, mode = first
        config = FriesConfig(cases=cases, seed=seed, engine="spark-streaming", scheduler=scheduler, faults=faults,
                             save_dir=save_dir, shrink_evaluations=shrink_budget)
        result.failures.append(shrink_and_save(config, engines[mode], LIVE_CHECK, index, scenario, judgement, mode))
    return result


def run(request: RunConfig, progress: Progress | None) -> SuiteResult:
    """The suite as :class:`~conformance.core.protocols.Suite` runs it: :func:`run_fries_suite`."""
    return run_fries_suite(
        FriesConfig(cases=request.case_count, seed=request.seed, engine=request.engine, faults=request.faults,
                    batch_size=request.batch_size, save_dir=request.save_dir,
                    shrink_evaluations=request.shrink_budget, scheduler=request.scheduler),
        progress=progress, spark=request.spark)


def run_live(request: RunConfig, progress: Progress | None) -> SuiteResult:
    """The suite on the live path (:class:`~conformance.core.protocols.Suite`):
    :func:`run_fries_streaming`."""
    return run_fries_streaming(cases=request.case_count, seed=request.seed, scheduler=request.scheduler,
                               faults=request.faults, batch=request.batch_size, progress=progress,
                               spark=request.spark, save_dir=request.save_dir, shrink_budget=request.shrink_budget)
