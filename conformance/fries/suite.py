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
"""

from __future__ import annotations

import importlib
from collections import Counter
import time
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path
from typing import Any, Sequence

from hypothesis import strategies as st

from spec.fries.dataflow import Dataflow
from spec.fries.scenario import Scenario, Timing, scenario_from_json

from conformance.core.cases import draw_cases
from conformance.fries.engines.catalogue import FriesEngine, engine_status, make_engine
from conformance.fries.engines.paths import applicable, prepare
from conformance.fries.oracles import Judgement, judge
from conformance.fries.cases.moves import candidates, size
from conformance.fries.cases.codec import scenario_to_json
from conformance.fries.cases.alignment import (
    PRUNING_SHAPES, alignment_probes, is_probe_shaped, pruning_probes, pruning_shape, with_second_request,
)
from conformance.fries.cases.streams import stretch, stretched
from conformance.fries.cases.timing import with_timing
from conformance.core.saved_case import save_case
from conformance.core.shrink import shrink
from conformance.core.results import CheckResult, FailureReport, Progress, SuiteResult


@dataclass(frozen=True)
class FriesConfig:
    """How to run the suite. ``engine`` is ``"spark"`` or ``"reference"``; ``faults`` are
    injected into it; ``save_dir`` receives the shrunk failing case (None: not saved)."""

    cases: int = 200
    seed: int = 0
    engine: str = "spark"
    scheduler: str = "fries"
    faults: frozenset[str] = frozenset()
    batch_size: int = 200
    race_fraction: float = 0.2
    race_batch_size: int = 8
    save_dir: str | None = None
    shrink_evaluations: int = 2000
    shrink_deadline_s: float = 240.0
    fail_fast: bool = False  # stop after the first batch with a failure, no shrinking (mutation runs)


def scenario_strategy() -> st.SearchStrategy[Scenario] | str:
    """Random scenarios with random timing, or why they cannot be generated here."""
    try:
        generators = importlib.import_module("conformance.fries.cases.scenarios")
    except ImportError as error:
        return f"scenario generator not available (conformance.fries.cases.scenarios: {error})"
    # a scenario whose source tuples reach no operator tests nothing: no data transaction can
    # conflict (a source without children drops its tuples; 10 of 120 drawn cases at seed 0)
    scenarios: st.SearchStrategy[Scenario] = generators.scenarios().filter(routes_data)
    return stretched(with_timing(scenarios))


def routes_data(scenario: Scenario) -> bool:
    """Some source tuple of ``scenario`` reaches an operator."""
    flow = scenario.dataflow
    return any(tuples and flow.children(name) for name, tuples in scenario.sources.items())


def race_strategy() -> st.SearchStrategy[Scenario] | str:
    """Race cases: a request reconfigures two operators on one path, streams are stretched 8x
    so the request lands after several micro-batches, and control messages are spread over
    seconds (timing profile ``race``) - the window in which an unaligned switch lets one
    transaction see the old function upstream and the new one downstream. Run in small
    batches (:attr:`FriesConfig.race_batch_size`): on Spark every case of a batch advances in
    lock step, so in a big batch one micro-batch outlasts every control delay."""
    base = scenario_strategy()
    if isinstance(base, str):
        return base
    generators = importlib.import_module("conformance.fries.cases.scenarios")
    raced = with_timing(generators.scenarios().filter(_has_path_request), "race")
    return raced.map(lambda s: stretch(s, 8))


def _has_path_request(scenario: Scenario) -> bool:
    """Some request reconfigures two operators one of which is upstream of the other, after
    at least one source tuple."""
    flow = scenario.dataflow
    return any(r.at >= 1 and any(flow.descendants(a) & set(r.updates) for a in r.updates)
               for r in scenario.reconfigurations)


def honest_claims(scenario: Scenario) -> Scenario:
    """``scenario`` without the ``unique`` claims that do not hold for it.

    A random ``unique`` flag is a claim (at most one output per data transaction, Fries
    Alg. 4) the generator cannot guarantee; a scheduler that prunes on a false claim may
    legitimately produce a non-serializable schedule. The reference simulator reports the
    operators whose claim a run broke; their flags are dropped (which only enlarges the MCS,
    never unsound). Without the simulator (or if it fails on the case) every claim is dropped."""
    flow = scenario.dataflow
    if not any(op.unique for op in flow.operators):
        return scenario
    try:
        simulate = importlib.import_module("reference.fries.simulator").simulate
        broken: set[str] = set()
        for scheduler in ("fries", "epoch"):
            broken |= set(simulate(scenario, scheduler).uniqueness_violations)
    except Exception:  # noqa: BLE001 - no simulator, or it failed: no claim can be confirmed
        broken = {op.name for op in flow.operators}
    if not broken:
        return scenario
    operators = tuple(replace(op, unique=op.unique and op.name not in broken) for op in flow.operators)
    return replace(scenario, dataflow=Dataflow(operators, flow.edges))


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
        from conformance.fries.checks.mcs import run_mcs_check

        if run_mcs_check(config, result) and config.fail_fast:
            return result
    if config.engine == "spark":  # Spark-free too: routing and fault names against their contracts
        from conformance.fries.checks.contracts import run_contracts_check

        if run_contracts_check(result) and config.fail_fast:
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
            _count_features(result, scenario)
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
        result.failures.append(_shrink_and_save(config, engine_for(path), check.name, index, scenarios[index],
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

#: The ``stepped`` path's cases (one batch; :mod:`conformance.fries.engines.stepped`) by kind: alignment
#: probes, every MCS pruning shape and race cases; every other case has a restart while its
#: request's heads are being released.
STEPPED_KINDS = {"alignment": 4, **{shape: 1 for shape in PRUNING_SHAPES}, "race": 4}


def stepped_section(config: FriesConfig) -> list[Scenario]:
    """The ``stepped`` path's cases (:data:`STEPPED_KINDS`), drawn for the run's seed (the
    first, minimal draw of each kind is skipped: it is the same at every seed)."""
    race = race_strategy()
    drawn: list[Scenario] = []
    for number, (kind, n) in enumerate(STEPPED_KINDS.items()):
        # the one-to-many probe nested (S -> E -> F -> {A, B}): the earliest ancestor is synchronised
        strategy = alignment_probes() if kind == "alignment" else pruning_probes(kind, nested=True) \
            if kind != "race" else race
        if isinstance(strategy, str):
            continue
        cases = draw_cases(strategy, n + 1, config.seed * 1009 + 31 * number + 5)[1:]
        # two probes make a second request on the same component (alignment afresh)
        drawn += [with_second_request(c) if kind == "alignment" and i in (1, 2) else c for i, c in enumerate(cases)]
    # per-tuple costs only served the timing, which the stepped path replaces (and the epoch
    # path runs these cases too): dropped, so both run at batch speed
    untimed = [replace(sc, timing=replace(sc.timing, operator_cost={}, stragglers={})) for sc in drawn]
    return [honest_claims(restart_during_request(sc, 4 * (1 + i % 3)) if i % 2 else sc) for i, sc in enumerate(untimed)]


def restart_during_request(scenario: Scenario, after: int) -> Scenario:
    """``scenario`` crashing once ``after`` tuples past its first request's ``at`` were ingested
    (while the stepped path releases that request's heads)."""
    total = sum(len(t) for t in scenario.sources.values())
    first = min((r.at for r in scenario.reconfigurations), default=0)
    point = min(first + after, total - 1)
    if point < 1:
        return scenario
    return replace(scenario, timing=replace(scenario.timing, restarts=(point,)))


def race_section(race: st.SearchStrategy[Scenario], n: int, config: FriesConfig) -> list[Scenario]:
    """The ``n`` race-section cases in run order: each small batch of
    :attr:`FriesConfig.race_batch_size` starts with one probe and race cases fill the rest.
    Probes cycle through the alignment probe and the MCS pruning shapes
    (:mod:`conformance.fries.cases.alignment`), at least one of each whenever ``n`` allows
    (``n`` >= 4, i.e. every run of 20 cases or more). Without the probes an unaligned member is
    almost never observed on Spark (about 1 case in 200), and the pruning rules' shapes were
    left to chance."""
    if n <= 0:
        return []
    size = max(1, config.race_batch_size)
    kinds = ("alignment",) + PRUNING_SHAPES
    probes_n = min(n, max(-(-n // size), len(kinds)))
    drawn: list[list[Scenario]] = []
    for number, kind in enumerate(kinds):
        strategy = alignment_probes() if kind == "alignment" else pruning_probes(kind)
        count = len(range(number, probes_n, len(kinds)))  # how often probe i % len(kinds) == number
        drawn.append([honest_claims(s) for s in draw_cases(strategy, count, config.seed + number)])
    ordered = [drawn[i % len(kinds)].pop(0) for i in range(probes_n)]  # alignment, one-to-many, ...
    races = [honest_claims(s) for s in draw_cases(race, n - probes_n, config.seed)]
    out: list[Scenario] = []
    while ordered or races:
        if ordered:
            out.append(ordered.pop(0))
        out.extend(races[: size - 1])
        del races[: size - 1]
    return out


def judge_batch(engine: FriesEngine, scenarios: Sequence[Scenario]) -> list[tuple[Scenario, Judgement, tuple[float, ...]]]:
    """Run a batch and judge every run."""
    outcomes = engine.run(scenarios)
    return [(s, judge(s, o), o.delays) for s, o in zip(scenarios, outcomes)]


def _shrink_and_save(config: FriesConfig, engine: FriesEngine, check: str, index: int, scenario: Scenario,
                     judgement: Judgement, path: str = "planned") -> FailureReport:
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
    for failure in judgement.failures:
        parts.append(f"[{failure.oracle}] {failure.summary}\n" + _indent(failure.detail))
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


def _count_features(result: SuiteResult, scenario: Scenario) -> None:
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
