"""The Fries suite on the live path (issue 14, item 6): ``streamproof conformance --engine
spark-streaming --suite fries``.

Every case goes through the Structured Streaming front end
(:func:`conformance.fries.streaming_path.run_streaming`: the case's source tuples in several
files of a file-source query, ``foreachBatch`` into the executor, requests submitted while the
query runs) and is judged by the Fries oracles (:func:`conformance.fries.suite.judge_batch`).
The cases are the suite's random scenarios (:func:`conformance.fries.suite.scenario_strategy`)
that the front end can run: one source operator (``start_query`` reads one stream) and no
blocking operator (a live stream has no end-of-input flush) - filtered by
:func:`conformance.fries.frontends.applicable` and made runnable by ``prepare``.

A case whose timing has a restart point keeps it as a **driver restart**: the query is stopped
once that many tuples are in and started again on the same checkpoint (``restart_at``), so the
``duplicate-after-restart`` fault can show. The front end runs one job per query, so a batch
cannot share Spark jobs; instead :data:`PARALLEL` queries run at once (threads), which hides
the driver's latency.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import Any, Sequence

from spec.fries.scenario import Scenario

from conformance.cases import draw_cases
from conformance.fries.engines import SparkEngine, _outcome
from conformance.fries.frontends import PathFailure, applicable, prepare
from conformance.fries.outcome import RunOutcome
from conformance.suite import CheckResult, FailureReport, Progress, SuiteResult

PARALLEL = 4
"""Queries running at once."""

CHECK = "spark-streaming vs spec serial execution"


def streaming_cases(n: int, seed: int) -> list[Scenario]:
    """``n`` random scenarios the front end can run, each with at most one restart point."""
    from conformance.fries.suite import honest_claims, scenario_strategy

    strategy = scenario_strategy()
    assert not isinstance(strategy, str)
    fitting = strategy.filter(partial(applicable, "streaming"))
    return [honest_claims(s) for s in draw_cases(fitting, n, seed)]


class StreamingEngine(SparkEngine):
    """:class:`~conformance.fries.engines.SparkEngine` whose batch runs through the streaming
    front end, :data:`PARALLEL` scenarios at a time, each case's first restart point a driver
    restart (module docstring)."""

    def __init__(self, scheduler: str, faults: frozenset[str], *, spark: Any = None) -> None:
        super().__init__(scheduler, faults, spark=spark, path="streaming")
        self.name = "spark-streaming"

    def _run_batch(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        from conformance.fries.streaming_path import run_streaming

        scratch = tempfile.mkdtemp(prefix="streamproof-fries-live-")

        def one(index: int) -> RunOutcome:
            original = scenarios[index]
            restart = original.timing.restarts[0] if original.timing.restarts else None
            scenario = prepare("streaming", original)
            result = run_streaming(self.spark, scenario, index, self.scheduler, faults=self.faults,
                                   checkpoint_dir=os.path.join(scratch, f"q{index}"), restart_at=restart)
            if isinstance(result, PathFailure):
                return RunOutcome.failed(result.error)
            return _outcome(scenario, result.outputs, result.schedule, getattr(result, "states", None),
                            getattr(result, "delays_ms", ()), getattr(result, "rejected", ()),
                            getattr(result, "senders", None))

        try:
            with ThreadPoolExecutor(PARALLEL) as pool:
                return list(pool.map(one, range(len(scenarios))))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def run_fries_streaming(*, cases: int, seed: int, scheduler: str, faults: frozenset[str], batch: int,
                        progress: Progress | None = None, spark: Any = None) -> SuiteResult:
    """The Fries suite's check on the live path (module docstring); no shrinking: the first
    failing case is reported as drawn (its JSON form, oracles and explanation)."""
    from conformance.fries.oracles import judge
    from conformance.fries.reductions import size
    from conformance.fries.scenario_json import scenario_to_json
    from conformance.fries.suite import explain

    result = SuiteResult("fries", "spark-streaming", seed, faults=tuple(sorted(faults)), delay_unit="ms")
    check = CheckResult(CHECK)
    result.checks.append(check)
    engine = StreamingEngine(scheduler, faults, spark=spark)
    drawn = streaming_cases(cases, seed)
    start = time.monotonic()
    for offset in range(0, len(drawn), max(1, batch)):
        chunk = drawn[offset: offset + batch]
        for position, (scenario, outcome) in enumerate(zip(chunk, engine.run(chunk))):
            judgement = judge(prepare("streaming", scenario), outcome)
            check.cases += 1
            result.delays.extend(outcome.delays)
            result.features["path: streaming"] += 1
            if scenario.timing.restarts:
                result.features["driver restart"] += 1
            if not judgement.ok:
                check.failed += 1
                check.oracle_failures.update(judgement.failed_oracles)
                if not result.failures:
                    shown = scenario_to_json(scenario)
                    result.failures.append(FailureReport(
                        CHECK, offset + position, tuple(judgement.failed_oracles), explain(judgement),
                        size(shown), size(shown), 0, shown))
        if progress is not None:
            progress(offset + len(chunk), len(drawn))
    check.elapsed_s = time.monotonic() - start
    return result

