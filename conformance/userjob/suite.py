"""The user-job suite: a user's own job on Spark, judged against the reference run of the same
functions (``streamproof conformance --job FILE.py:NAME``; docs/conformance.md).

1. Load the job (:mod:`conformance.userjob.load`) and draw ``cases`` cases reproducibly from
   ``seed`` (:mod:`conformance.userjob.cases`: request moments, batch sizes, FCM delays,
   stragglers, bounded source reordering, restarts - the Fries suite's timing generators);
   a fifth of them (at least 2 from 10 cases on) are race cases, run in small batches
   (every case of a batch advances in lock step on Spark).
2. Run them in batches (:mod:`conformance.userjob.engine`: the reference first, then one
   Spark run per batch) and judge each (:mod:`conformance.userjob.judge`).
3. Shrink the first failing case with :func:`conformance.core.shrink.shrink` while it keeps
   failing one of the oracles it first failed - in its batch and on its own (:func:`fails_alone`) - and save it with
   :func:`conformance.core.saved_case.save_case` (suite ``userjob``; the case JSON names the job
   file), so ``--replay FILE`` and the generated pytest file run it again.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, Sequence

from spec.errors import InputError
from spec.jsonio import expect_str

from conformance.core.cases import draw_cases
from conformance.fries.oracles import Judgement
from conformance.fries.suite import count_timing, explain
from conformance.core.saved_case import save_case
from conformance.core.shrink import shrink
from conformance.core.results import CheckResult, FailureReport, Progress, SuiteResult
from conformance.userjob.cases import Case, candidates, case_from_json, case_strategy, size
from conformance.userjob.engine import UserJobEngine
from conformance.userjob.judge import judge_run
from conformance.userjob.load import JobUnderTest, load_job
from spark_impl.reconfig.api import RECONFIG_FAULTS


@dataclass(frozen=True)
class UserJobConfig:
    """How to run the suite on the job ``ref`` (``FILE.py:NAME``)."""

    ref: str
    cases: int = 60
    seed: int = 0
    scheduler: str = "fries"
    faults: frozenset[str] = frozenset()
    batch_size: int = 200
    race_fraction: float = 0.2
    race_batch_size: int = 8
    save_dir: str | None = None
    shrink_evaluations: int = 400
    shrink_deadline_s: float = 420.0
    call_limit_s: float = 60.0


def check_faults(faults: frozenset[str]) -> None:
    """InputError unless every fault is seeded in the reconfiguration executor."""
    for fault in sorted(faults):
        if fault not in RECONFIG_FAULTS:
            raise InputError(f"unknown fault {fault!r} for user jobs (known: {', '.join(sorted(RECONFIG_FAULTS))})",
                             "--inject-fault")


def run_userjob_suite(config: UserJobConfig, *, progress: Progress | None = None, spark: Any = None,
                      under: JobUnderTest | None = None) -> SuiteResult:
    """Run the suite (module docstring)."""
    check_faults(config.faults)
    under = under or load_job(config.ref)
    result = SuiteResult("userjob", "spark", config.seed, faults=tuple(sorted(config.faults)), delay_unit="ms")
    check = CheckResult(f"spark vs reference ({config.ref})")
    result.checks.append(check)
    engine = UserJobEngine(under, scheduler=config.scheduler, faults=config.faults, session=spark,
                           call_limit_s=config.call_limit_s)
    races = round(config.cases * config.race_fraction) if config.cases >= 10 else 0
    usual = config.cases - races
    drawn = draw_cases(case_strategy(under), usual, config.seed)
    batches = [(o, min(o + config.batch_size, usual)) for o in range(0, usual, max(1, config.batch_size))]
    drawn += draw_cases(case_strategy(under, race=True), races, config.seed + 1)
    batches += [(o, min(o + config.race_batch_size, len(drawn)))
                for o in range(usual, len(drawn), max(1, config.race_batch_size))]
    cases = [case_from_json(under, value) for value in drawn]
    start = time.monotonic()
    first: tuple[int, Judgement] | None = None
    printed: list[str] = []
    for offset, end in batches:
        began = time.monotonic()
        judged = judge_batch(engine, cases[offset:end])
        part = "race section" if offset >= usual else "cases"
        result.seconds[part] = result.seconds.get(part, 0.0) + time.monotonic() - began
        for i, (judgement, output) in enumerate(judged):
            check.cases += 1
            _count(result, cases[offset + i])
            if output:
                printed.append(output)
            if not judgement.ok:
                check.failed += 1
                check.oracle_failures.update(judgement.failed_oracles)
                if first is None:
                    first = (offset + i, judgement)
        if progress is not None:
            progress(end, len(cases))
    check.elapsed_s = time.monotonic() - start
    if printed:
        result.features["cases in which the job printed"] += len(printed)
        check.note = "the job's functions printed (captured, not shown on stdout): " + printed[0][-300:].strip()
    if first is not None:
        index, judgement = first
        result.failures.append(_shrink_and_save(config, under, engine, check.name, index, drawn[index], judgement))
    return result


def judge_batch(engine: UserJobEngine, cases: Sequence[Case]) -> list[tuple[Judgement, str]]:
    """Run a batch and judge every run (with what the job printed in each)."""
    runs = engine(cases)
    out = []
    for case_run in runs:
        if case_run.job is None:
            judgement = judge_run(engine.under.job, case_run.run, engine.under.classify)
        else:
            judgement = judge_run(case_run.job, case_run.run, engine.under.classify)
        out.append((judgement, case_run.printed))
    return out


#: The oracles a race fails (an unaligned switch, a reordered channel): their cases keep their pacing.
RACE_ORACLES = frozenset({"serializable", "fifo"})

#: Rounds, and copies of the case per round (one Spark run each), before a case counts as
#: passing on its own: a race may not show on every run.
ATTEMPTS, COPIES = 3, 6


def judge_alone(engine: UserJobEngine, case: Case, attempts: int = ATTEMPTS, copies: int = COPIES) -> Judgement:
    """Run ``case`` without the rest of its batch: ``attempts`` rounds of ``copies`` identical
    copies in one Spark run; the first failing judgement, else a passing one. A failure of any
    copy is a real one (the oracles accept every correct run), so the copies only make a
    timing-dependent failure (an alignment race) reproducible."""
    judgement: Judgement | None = None
    for _ in range(max(1, attempts)):
        for judgement, _ in judge_batch(engine, [case] * max(1, copies)):
            if not judgement.ok:
                return judgement
    assert judgement is not None
    return judgement


def fails_alone(engine: UserJobEngine, case: Case, wanted: set[str], rounds: int = 2) -> bool:
    """``case`` fails one of the ``wanted`` oracles on its own in *every* one of ``rounds``
    rounds of :data:`COPIES` copies: shrinking keeps only candidates that fail reliably, so the
    saved case stays reproducible when the failure is a race."""
    for _ in range(rounds):
        if not any(wanted & set(j.failed_oracles) for j, _ in judge_batch(engine, [case] * COPIES)):
            return False
    return True


def _shrink_and_save(config: UserJobConfig, under: JobUnderTest, engine: UserJobEngine, check: str, index: int,
                     original: dict[str, Any], judgement: Judgement) -> FailureReport:
    wanted = set(judgement.failed_oracles)

    def still_fails(batch: Sequence[dict[str, Any]]) -> list[bool]:
        # a candidate counts only if it also fails on its own: every shrink step (and so the
        # saved case) then reproduces with --replay, also for a race that needs its batch
        cases = [case_from_json(under, value) for value in batch]
        judged = judge_batch(engine, cases)
        for i, (judgement, _) in enumerate(judged):
            if wanted & set(judgement.failed_oracles) and fails_alone(engine, cases[i], wanted):
                return [k == i for k in range(len(batch))]
        return [False] * len(batch)

    races = bool(wanted & RACE_ORACLES)
    shrunk, stats = shrink(original, partial(candidates, under, keep_pacing=races), still_fails, batch=8,
                           max_evaluations=config.shrink_evaluations, deadline_s=config.shrink_deadline_s)
    final = judge_alone(engine, case_from_json(under, shrunk))
    reproduced = not final.ok
    if final.ok:  # the shrunk case passes on its own: the original then, if it fails alone
        alone = judge_alone(engine, case_from_json(under, original))
        reproduced = not alone.ok
        shrunk, final = original, alone if not alone.ok else judgement
    explanation = explain(final)
    if not reproduced:
        explanation += (f"\n(timing-dependent: this case failed inside its batch but passed {ATTEMPTS * COPIES} "
                        "runs on its own, so --replay may pass; the failure above is from the batch run)")
    case_data = {"job": _absolute(under.ref), **shrunk}
    report = FailureReport(check, index, final.failed_oracles, explanation, size(original), size(shrunk),
                           stats.steps, case_data, reproduced=reproduced)
    if config.save_dir is not None:
        json_path, test_path = save_case(
            Path(config.save_dir), suite="userjob", engine="spark", scheduler=config.scheduler,
            faults=tuple(sorted(config.faults)), seed=config.seed, case=index, oracles=final.failed_oracles,
            explanation=explanation, case_data=case_data)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def _absolute(ref: str) -> str:
    """``FILE.py:NAME`` with FILE made absolute (a replay from elsewhere finds it); other
    references (a job built in memory) unchanged."""
    path, sep, name = ref.rpartition(":")
    return f"{Path(path).resolve()}:{name}" if sep and Path(path).is_file() else ref


def replay(record: dict[str, Any], faults: frozenset[str] | None) -> tuple[bool, str]:
    """Run a saved case again (:mod:`conformance.replay`); ``faults`` None: the recorded ones."""
    data = dict(record["case_data"])
    ref = expect_str(data.pop("job", None), "case_data.job")
    chosen = frozenset(record.get("faults", [])) if faults is None else faults
    check_faults(chosen)
    under = load_job(ref)
    case = case_from_json(under, data, "case_data")
    engine = UserJobEngine(under, scheduler=str(record.get("scheduler", "fries")), faults=chosen)
    judgement = judge_alone(engine, case)
    return judgement.ok, explain(judgement) if not judgement.ok else "all oracles pass"


def _count(result: SuiteResult, case: Case) -> None:
    features = result.features
    features["cases"] += 1
    features[f"requests={len(case.requests)}"] += 1
    count_timing(features, case.timing)
    if case.timing.reorder_bound:
        features["reordered source"] += 1
