"""The DGS suite (issue 8, 2(d); issue 12 item 2): every engine's run equals spec(sort(u)).

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
* ``spark one-worker plans vs spec(sort(u))`` (with the spark check) - the first six cases
  again under the one-worker plan (the root its own leaf), in one batch, and what the run
  reports (ticks, wall times, the caller's sink directory kept): :mod:`conformance.dgs.checks.one_worker`;
* ``spark balanced_plan and plan validation vs their definitions`` (with the spark check) - the
  plan builder of ``dgs-plan`` and the live front end against its promise, and the executor's
  plan validation on every case's plan and two P-invalid variants of it
  (:mod:`conformance.dgs.checks.plans`);
* ``spark-streaming front end contracts vs their definitions (no Spark)`` (with the spark
  check) - the live front end's refusals (malformed rows, stale items, bad start arguments,
  foreign checkpoints, re-plans of no job), its mailbox across files, its checkpoint's
  retention and ``keyed_plan``, called directly (:mod:`conformance.dgs.checks.live_contracts`: the
  live check only ever feeds them good input);
* ``spark user error in a task vs the sequential program's`` (with the spark check) - one bad
  event whose ``update`` raises in a task, through the batch executor and (with the live
  check) a live query: the run must stop with the program's one-line InputError
  (:mod:`conformance.dgs.checks.user_error`);
* ``spark-streaming vs spec(sort(u))`` (with the spark check) - every case through the live
  front end ``spark_impl.dgs.streaming`` as one query with driver kills
  (:mod:`conformance.dgs_oplus_live`; the same oracles);
* ``spark_impl DGS driver on a pure-Python Spark stand-in vs spec(sort(u)) (no Spark)`` (with
  the spark check) - every case again through ``run_dgs_many`` on a stand-in for Spark, with
  ``inline_below`` 1, 3, 8 or 50 and explicit stream delays, the first also through ``run_dgs``;
  the same oracles plus the ticks each run reports (:mod:`conformance.dgs.checks.standin`);
* ``spark driver plan vs dependence order`` (with the spark check, no Spark job) - the order in
  which spark_impl's driver releases and plans every case's events (mailbox ticks, steps,
  inlining): each event once, on its worker or an ancestor, dependent events in key order
  (:mod:`conformance.dgs.checks.release`; oracle ``order``: a wrong order is seen even when the
  two events happen to commute on the case's state; and every tick's cut into steps is
  ``steps_of``'s definition).

Oracles (:func:`judge`), in order: ``engine`` (the run raised or never ended:
:mod:`conformance.core.crashes`), ``outputs`` (the outputs equal ``spec(sort(u))`` as multisets,
compared with the matcher by ``repr`` since DGS outputs need not be hashable), ``processed``
(every input event was processed exactly once, by its responsible worker or, inlined, by an
ancestor), ``state`` (the final state, every leaf joined back into the root, equals the
sequential program's by the program's state equality).

The first failing case of a check is shrunk (:func:`candidates`: the one-worker plan, no
delays, one tick, no inlining, fewer events) while it keeps failing one of its oracles, and
saved for replay (:mod:`conformance.core.saved_case`; ``case_data`` is
:func:`conformance.dgs.cases.case_to_json`).
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import replace
from typing import Any, Callable, Iterator, Sequence

from spec.dgs.plan import Plan, Worker
from spec.dgs.semantics import spec_run
from spec.dgs.streams import StreamEvent, sort_streams

from reference.dgs.examples import CONSISTENT, target
from reference.dgs.strategies import impl_universe

from conformance.core.cases import draw_cases
from conformance.core.crashes import Crash, Guard, describe
from conformance.dgs.cases import STREAMS, DgsCase, build, case_from_json, case_to_json, program_of, seeds
from conformance.core.matcher import compare
from conformance.core.saved_case import save_case
from conformance.core.shrink import shrink
from conformance.core.results import CheckResult, FailureReport, Progress, SuiteResult

SPARK_BATCH = 200
"""Cases per batch of Spark jobs (a batch runs as many jobs as its longest case has ticks)."""

SHRINK_EVALUATIONS = 300
"""At most this many candidates run while shrinking one DGS failure (fewer with ``--shrink-budget``)."""

SPARK_TIMEOUT_S = 1800.0
"""A batch call that takes longer is a liveness failure. The whole default run takes about a
minute on a quiet machine; at a load average of 80-100 on the 2 cores one batch took over 900
s (the former limit) without anything wrong, and every case failed ``engine``."""

REFERENCE = "reference plan executor vs spec(sort(u))"
SPARK = "spark vs spec(sort(u))"

Observed = tuple[list[Any], Any, list[tuple[str, tuple[int, str], Any]]]
"""What a run shows: outputs, final state, processed events ``(worker, key, payload)``."""

BatchEngine = Callable[[Sequence[DgsCase]], list["Observed | Crash"]]


def draw_dgs_cases(n: int, seed: int) -> list[DgsCase]:
    """``n`` non-trivial cases, reproducibly from ``seed`` (module docstring)."""
    programs = len(CONSISTENT)
    return [build(CONSISTENT[i % programs], rng, pools[CONSISTENT[i % programs]], dense=(i // programs) % 3 == 2)
            for i, (rng, pools) in enumerate(draw_cases(seeds(), n, seed))]


def reference_engine() -> BatchEngine:
    """The reference plan executor, case by case (an exception is that case's crash)."""
    from reference.dgs.executor import execute_plan

    def run(cases: Sequence[DgsCase]) -> list[Observed | Crash]:
        observed: list[Observed | Crash] = []
        for case in cases:
            try:
                result = execute_plan(program_of(case.name), case.plan, case.streams, case.seed)
                # the reference lists its trace in execution order; a run's trace (the judge's
                # format, spark_impl's DgsRun) is in key order
                trace = sorted(result.processed, key=lambda entry: entry[1])
                observed.append((list(result.outputs), result.final_state, trace))
            except Exception as error:  # noqa: BLE001 - an engine crash is a finding
                observed.append(Crash(describe(error)))
        return observed
    return run


def dgs_job(case: DgsCase, plan: Any = None) -> Any:
    """The ``spark_impl.dgs.DgsJob`` of ``case`` (``plan``: another plan instead of its own)."""
    from spark_impl.dgs import Arrival, DgsJob

    return DgsJob(target(case.name), case.plan if plan is None else plan, case.streams,
                  Arrival(case.max_delay, case.max_jitter, case.seed), case.tick, case.inline_below)


def spark_engine(spark: Any = None, timeout_s: float = SPARK_TIMEOUT_S) -> BatchEngine:
    """spark_impl's DGS executor: a batch of cases in one :func:`spark_impl.dgs.run_dgs_many`
    call, under the watchdog and crash isolation of :class:`conformance.core.crashes.Guard`."""
    from conformance.run import shared_session

    session = shared_session(spark)

    def run(cases: Sequence[DgsCase]) -> list[Observed]:
        from spark_impl.dgs import run_dgs_many

        jobs = [dgs_job(c) for c in cases]
        return [(list(r.outputs), r.final_state, list(r.processed)) for r in run_dgs_many(session(), jobs)]

    guard: Guard[DgsCase, Observed] = Guard(run, timeout_s, on_hang=lambda: session().sparkContext.cancelAllJobs())
    return guard


def judge(case: DgsCase, observed: Observed | Crash) -> list[tuple[str, str]]:
    """The failed oracles of one run, each with its explanation (module docstring)."""
    if isinstance(observed, Crash):
        return [("engine", observed.explain())]
    outputs, final_state, processed = observed
    program = program_of(case.name)
    expected_state, expected = spec_run(program, sort_streams(case.streams))
    failures: list[tuple[str, str]] = []
    mismatch = compare([repr(x) for x in expected], [repr(x) for x in outputs])
    if mismatch is not None:
        failures.append(("outputs", f"outputs differ from spec(sort(u)):\n{mismatch.explain(str)}"))
    trace = _trace_problem(case, processed)
    if trace is not None:
        failures.append(("processed", trace))
    try:
        same = program.states_equal(program.initial, final_state, expected_state)
    except Exception as error:  # noqa: BLE001 - a malformed engine state is the engine's fault
        same, final_state = False, f"{final_state!r} ({describe(error)})"
    if not same:
        failures.append(("state", f"final state {final_state!r}, the sequential program's is {expected_state!r}"))
    return failures


def _trace_problem(case: DgsCase, processed: Sequence[tuple[str, tuple[int, str], Any]]) -> str | None:
    """None when every event was processed once by its worker or an ancestor of it, and the
    trace lists them in key order (``DgsRun``'s format, batch and live; the reference engine's
    trace is sorted so: session 8's holdout found the live ``results()`` sorting its trace by
    the payload unnoticed)."""
    program = program_of(case.name)
    owner = {impl: w.id for w in case.plan.workers() for impl in w.impl_tags}
    above = {w.id: {w.id} for w in case.plan.workers()}
    for worker in case.plan.workers():
        for child in worker.children:
            for below in child.walk():
                above[below.id].add(worker.id)
    wanted = Counter((item.ts, stream, repr(item.payload)) for stream, items in case.streams.items()
                     for item in items if isinstance(item, StreamEvent))
    seen = Counter((key[0], key[1], repr(payload)) for _, key, payload in processed)
    if seen != wanted:
        lost, extra = sorted((wanted - seen).elements()), sorted((seen - wanted).elements())
        return (f"processed events differ from the input: never processed {lost[:5]}"
                f"{' ...' if len(lost) > 5 else ''}; processed but not in the input or twice {extra[:5]}"
                f"{' ...' if len(extra) > 5 else ''}")
    keys = [key for _, key, _ in processed]
    unsorted = next((i for i in range(1, len(keys)) if keys[i] < keys[i - 1]), None)
    if unsorted is not None:
        return (f"processed events are not in key order: {keys[unsorted]} (ts, stream) is listed after "
                f"{keys[unsorted - 1]} (a run's trace is in key order)")
    for by, (ts, stream), payload in processed:
        responsible = owner.get((program.tag(payload), stream))
        if responsible is None or by not in above[responsible]:
            return (f"event {payload!r} (ts {ts}, stream {stream}) processed by {by}, not by its "
                    f"responsible worker {responsible} or an ancestor of it")
    return None


def run_dgs_suite(*, cases: int, seed: int, progress: Progress | None = None, save_dir: str | None = None,
                  engine: str = "reference", spark: Any = None, batch: int = SPARK_BATCH,
                  live: bool = True, shrink_budget: int = SHRINK_EVALUATIONS) -> SuiteResult:
    """Run the reference check and, with ``engine == "spark"``, the Spark checks, on all
    ``cases`` cases (module docstring); ``live``: also every case through the live front
    end (:mod:`conformance.dgs_oplus_live`); ``shrink_budget``: at most that many candidates run
    while shrinking a failure (``--shrink-budget``; 0: none)."""
    result = SuiteResult("dgs", engine, seed)
    drawn = draw_dgs_cases(cases, seed)
    _count_features(result, drawn)
    spark_on = engine == "spark"
    total = len(drawn) * (2 if spark_on else 1)
    tick = _Ticker(progress, total)
    result.checks.append(_run_check(REFERENCE, drawn, reference_engine(), len(drawn) or 1, result, tick,
                                    seed, save_dir, "reference", shrink_budget))
    if not spark_on:
        result.checks.append(CheckResult(SPARK, status="unavailable",
                                         note=f"engine {engine} (the spark check needs --engine spark)"))
        return result
    result.checks.append(_run_check(SPARK, drawn, spark_engine(spark), batch, result, tick, seed, save_dir,
                                    "spark", shrink_budget))
    from conformance.dgs.checks.one_worker import run_check as one_worker

    result.checks.append(one_worker(drawn, spark, result))
    # the Spark-free checks run the executor's code in this process: a crash or a hang there is
    # a failure of the check (conformance.core.watchdog.contained_check), not a crash of the suite
    from conformance.dgs.checks.live_contracts import CHECK as LIVE_CONTRACTS
    from conformance.dgs.checks.live_contracts import run_check as live_contracts
    from conformance.dgs.checks.standin import CHECK as STAND_IN
    from conformance.dgs.checks.standin import run_check as stand_in
    from conformance.core.watchdog import contained_check

    result.checks.append(contained_check(result, PLANS, lambda: _plans_check(drawn, seed, result)))
    result.checks.append(contained_check(result, ORDER, lambda: _order_check(drawn, seed, result, save_dir)))
    result.checks.append(contained_check(result, STAND_IN, lambda: stand_in(drawn, result)))
    result.checks.append(contained_check(result, LIVE_CONTRACTS, lambda: live_contracts(drawn, result)))
    from conformance.dgs.checks.user_error import run_check as user_error

    result.checks.append(user_error(drawn, spark, live, result))
    if live:
        from conformance.dgs_oplus_live import dgs_live_check

        result.checks.append(dgs_live_check(drawn, spark, seed, save_dir, result, shrink_budget))
    return result


ORDER = "spark driver plan vs dependence order"


def _order_check(drawn: Sequence[DgsCase], seed: int, result: SuiteResult, save_dir: str | None) -> CheckResult:
    """:mod:`conformance.dgs.checks.release` on every case; the first failure is shrunk and saved."""
    from conformance.dgs.checks.release import check, problem

    start = time.monotonic()
    found = check(list(drawn))
    checked = CheckResult(ORDER, cases=len(drawn), failed=len(found))
    if found:
        checked.oracle_failures["order"] += len(found)
        index, _ = found[0]
        shrunk, stats = shrink(drawn[index], candidates, lambda batch: [problem(c) is not None for c in batch],
                               max_evaluations=300, deadline_s=30.0)
        explanation = problem(shrunk) or found[0][1]
        report = FailureReport(ORDER, index, ("order",), explanation, _size(drawn[index]), _size(shrunk),
                               stats.steps, case_to_json(shrunk))
        if save_dir is not None:
            json_path, test_path = save_case(save_dir, suite="dgs", engine="driver-plan", scheduler="plan",
                                             faults=(), seed=seed, case=index, oracles=("order",),
                                             explanation=explanation, case_data=case_to_json(shrunk))
            report.replay_file, report.pytest_file = str(json_path), str(test_path)
        result.failures.append(report)
    checked.elapsed_s = time.monotonic() - start
    return checked


PLANS = "spark balanced_plan and plan validation vs their definitions"


def _plans_check(drawn: Sequence[DgsCase], seed: int, result: SuiteResult) -> CheckResult:
    """``spark_impl.dgs.plans.balanced_plan`` on as many random requests as cases, and the plan
    validation on every case's plan and its invalid variants (:mod:`conformance.dgs.checks.plans`:
    a wrong plan would be wrong for the reference and Spark alike)."""
    from conformance.dgs.checks.plans import check, validity_problems

    start = time.monotonic()
    n = len(drawn)
    found = check(n, seed) + validity_problems(drawn)
    checked = CheckResult(PLANS, cases=2 * n, failed=len(found), elapsed_s=time.monotonic() - start)
    if found:
        checked.oracle_failures["plan"] += len(found)
        result.failures.append(FailureReport(PLANS, 0, ("plan",), found[0], 1, 1, 0, {"problems": found[:5]}))
    return checked


class _Ticker:
    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def __call__(self, n: int) -> None:
        self.done += n
        if self.progress is not None:
            self.progress(self.done, self.total)


def _run_check(name: str, drawn: Sequence[DgsCase], engine: BatchEngine, batch: int, result: SuiteResult,
               tick: _Ticker, seed: int, save_dir: str | None, engine_name: str,
               shrink_budget: int = SHRINK_EVALUATIONS) -> CheckResult:
    check = CheckResult(name)
    start = time.monotonic()
    first: tuple[int, tuple[str, ...]] | None = None
    for offset in range(0, len(drawn), max(1, batch)):
        chunk = drawn[offset: offset + batch]
        for i, (case, observed) in enumerate(zip(chunk, engine(chunk))):
            failed = judge(case, observed)
            check.cases += 1
            if failed:
                check.failed += 1
                check.oracle_failures.update(oracle for oracle, _ in failed)
                if first is None:
                    first = (offset + i, tuple(oracle for oracle, _ in failed))
        tick(len(chunk))
    check.elapsed_s = time.monotonic() - start
    if first is not None:
        result.failures.append(_shrink_and_save(name, first[0], drawn[first[0]], set(first[1]), engine,
                                                seed, save_dir, engine_name, shrink_budget))
    return check


def _shrink_and_save(check: str, index: int, case: DgsCase, wanted: set[str], engine: BatchEngine, seed: int,
                     save_dir: str | None, engine_name: str, budget: int = SHRINK_EVALUATIONS) -> FailureReport:
    """Shrink a failing case with ``engine`` (at most ``budget`` candidates; the shrink of one
    failure is also bounded by 3 minutes), check it fails on its own, and save it."""
    def still_fails(batch: Sequence[DgsCase]) -> list[bool]:
        return [bool(wanted & {o for o, _ in judge(c, seen)}) for c, seen in zip(batch, engine(batch))]

    shrunk, stats = shrink(case, candidates, still_fails, batch=16,
                           max_evaluations=min(SHRINK_EVALUATIONS, max(0, budget)), deadline_s=180.0)
    final = judge(shrunk, engine([shrunk])[0])
    reproduced = bool(final)
    if not final:  # passes on its own: report the original case, run alone
        final = judge(case, engine([case])[0]) if shrunk is not case else final
        reproduced, shrunk = bool(final), case
        if not final:
            final = [("outputs", "failed inside its batch, passes when run on its own (timing-dependent)")]
    explanation = (f"program {shrunk.name}, seed {shrunk.seed}, delays <= {shrunk.max_delay} + jitter "
                   f"{shrunk.max_jitter}, tick {shrunk.tick}, inline_below {shrunk.inline_below}\n"
                   + "\n".join(f"[{oracle}] {text}" for oracle, text in final))
    shown = case_to_json(shrunk)
    oracles = tuple(oracle for oracle, _ in final)
    report = FailureReport(check, index, oracles, explanation, _size(case), _size(shrunk), stats.steps, shown,
                           reproduced=reproduced)
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="dgs", engine=engine_name, scheduler="plan", faults=(),
                                         seed=seed, case=index, oracles=oracles, explanation=explanation,
                                         case_data=shown)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    return report


def candidates(case: DgsCase) -> Iterator[DgsCase]:
    """Simpler cases: the one-worker plan, no delays, one tick, no inlining, then a stream
    without any event, then a stream without one event. Heartbeats stay, so each candidate is
    a valid input instance."""
    program = program_of(case.name)
    if case.plan.root.children:
        sequential = Plan(Worker("w0", program.initial, frozenset(impl_universe(program, STREAMS))))
        yield replace(case, plan=sequential)
    if case.max_delay or case.max_jitter:
        yield replace(case, max_delay=0, max_jitter=0)
    if case.tick != 1_000_000:
        yield replace(case, tick=1_000_000)
    if case.inline_below:
        yield replace(case, inline_below=0)
    for stream, items in case.streams.items():
        events = [i for i, item in enumerate(items) if isinstance(item, StreamEvent)]
        if len(events) > 1:
            yield replace(case, streams={**case.streams, stream: [x for x in items if not isinstance(x, StreamEvent)]})
        for i in events:
            yield replace(case, streams={**case.streams, stream: list(items[:i]) + list(items[i + 1:])})


def _size(case: DgsCase) -> int:
    return sum(1 for items in case.streams.values() for item in items if isinstance(item, StreamEvent))


def _count_features(result: SuiteResult, drawn: Sequence[DgsCase]) -> None:
    for case in drawn:
        features = result.features
        features[case.name.split(":")[1]] += 1
        workers = list(case.plan.workers())
        if sum(1 for w in workers if not w.children) >= 3:
            features["plans with 3+ leaves"] += 1
        if case.max_delay or case.max_jitter:
            features["delayed / reordered input"] += 1
        if case.tick < 1_000_000:
            features["several driver ticks"] += 1
        if case.inline_below:
            features["inline_below > 0"] += 1
        impls = {impl for w in workers for impl in w.impl_tags}
        if len(impls) < len({t for t, _ in impls}) * len(STREAMS):
            features["streams carrying some tags only"] += 1


def replay(record: dict[str, Any], faults: frozenset[str] | None) -> tuple[bool, str]:
    """Run a saved DGS case again on its engine; (passes, explanation)."""
    case = case_from_json(record["case_data"])
    if record.get("engine") == "driver-plan":
        from conformance.dgs.checks.release import problem

        found = problem(case)
        return found is None, found or "the driver plans every event once, dependent events in key order"
    if record.get("engine") == "spark-streaming":
        from conformance.dgs.engines.live import streaming_engine

        engine: BatchEngine = streaming_engine()
    else:
        engine = spark_engine() if record.get("engine") == "spark" else reference_engine()
    failed = judge(case, engine([case])[0])
    if not failed:
        return True, "outputs, processed events and final state equal the sequential program's"
    return False, "\n".join(f"[{oracle}] {text}" for oracle, text in failed)
