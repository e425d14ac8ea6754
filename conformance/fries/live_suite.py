"""The Fries suite on the live path (issue 14, item 6): ``streamproof conformance --engine
spark-streaming --suite fries``.

Every case goes through the Structured Streaming front end
(:func:`conformance.fries.engines.live.run_streaming`: the case's source tuples in several
files of a file-source query, ``foreachBatch`` into the executor, requests submitted while the
query runs) and is judged by the Fries oracles. Two sections, each run by its own *mode*:

``live-stepped`` (first)
    the batch suite's ``stepped`` cases (:func:`conformance.fries.suite.stepped_section`:
    alignment probes - two with a second request -, one probe per MCS pruning shape, race
    cases; every other one crashing while its request's heads are released) that the front
    end can run, with the harness owning the control-message clock through the front end's
    step hook: heads switch micro-batches apart on every run, so ``missing-alignment`` and
    ``naive`` are cycles on the alignment probes, not timing luck.
``live``
    the suite's random scenarios (:func:`conformance.fries.suite.scenario_strategy`) the front
    end can run, with wall-clock control messages and requests submitted while batches run.

The front end takes one source operator and no blocking operator (a live stream has no
end-of-input flush): cases are filtered by :func:`conformance.fries.engines.paths.applicable`.
A case's first restart point is a **driver crash** after a batch's tasks wrote and before its
commit, then a new query on the same checkpoint (``crash_at``), so ``duplicate-after-restart``
shows. The front end runs one job per query, so a batch cannot share Spark jobs; instead
:data:`PARALLEL` queries run at once (threads). The first failure is shrunk (each candidate
batch runs through the same mode) and saved with ``"scheduler": "<scheduler>:<mode>"``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from functools import partial
from typing import Any, Sequence

from spec.fries.scenario import Scenario

from conformance.core.cases import draw_cases
from conformance.fries.engines.catalogue import SparkEngine, _outcome
from conformance.fries.engines.paths import PathFailure, applicable, prepare
from conformance.fries.outcome import RunOutcome
from conformance.core.results import CheckResult, Progress, SuiteResult

PARALLEL = 4
"""Queries running at once."""

CHECK = "spark-streaming vs spec serial execution"
MODES = ("live-stepped", "live")


def live_case(scenario: Scenario) -> Scenario:
    """``scenario`` as the live path runs and judges it: no source reordering (the files fix
    the order); restarts kept (the first one is the driver crash)."""
    return replace(scenario, timing=replace(scenario.timing, reorder_bound=0))


def streaming_cases(n: int, seed: int) -> list[Scenario]:
    """``n`` random scenarios the front end can run (the ``live`` mode's cases)."""
    from conformance.fries.suite import honest_claims, scenario_strategy

    strategy = scenario_strategy()
    assert not isinstance(strategy, str)
    fitting = strategy.filter(partial(applicable, "streaming"))
    return [live_case(honest_claims(s)) for s in draw_cases(fitting, n, seed)]


def stepped_cases(seed: int) -> list[Scenario]:
    """The batch suite's stepped cases for ``seed`` that the front end can run (the
    ``live-stepped`` mode's cases; 8-10 of 11)."""
    from conformance.fries.suite import FriesConfig, stepped_section

    return [live_case(s) for s in stepped_section(FriesConfig(seed=seed)) if applicable("streaming", s)]


class StreamingEngine(SparkEngine):
    """:class:`~conformance.fries.engines.catalogue.SparkEngine` whose batch runs through the streaming
    front end in ``mode`` (:data:`MODES`; ``"planned"`` means ``"live"``), :data:`PARALLEL`
    scenarios at a time, each case's first restart point a driver crash (module docstring)."""

    def __init__(self, scheduler: str, faults: frozenset[str], *, spark: Any = None, mode: str = "live") -> None:
        mode = "live" if mode == "planned" else mode
        if mode not in MODES:
            raise ValueError(f"unknown live mode {mode!r} (expected one of {MODES})")
        super().__init__(scheduler, faults, spark=spark, path="streaming")
        self.name = "spark-streaming"
        self.mode = mode

    def _run_batch(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        from conformance.fries.engines.live import run_streaming

        scratch = tempfile.mkdtemp(prefix="streamproof-fries-live-")

        def one(index: int) -> RunOutcome:
            original = scenarios[index]
            crash = original.timing.restarts[0] if original.timing.restarts else None
            scenario = prepare("streaming", original)
            result = run_streaming(self.spark, scenario, index, self.scheduler, faults=self.faults,
                                   checkpoint_dir=os.path.join(scratch, f"q{index}"), crash_at=crash,
                                   stepped=self.mode == "live-stepped")
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
                        progress: Progress | None = None, spark: Any = None, save_dir: str | None = None,
                        shrink_budget: int = 2000) -> SuiteResult:
    """The Fries suite's check on the live path (module docstring): ``cases`` in all, the
    stepped section first (when ``cases`` >= its size), the rest random; the first failing
    case is shrunk and saved to ``save_dir``."""
    from conformance.fries.suite import FriesConfig, _shrink_and_save, judge_batch

    result = SuiteResult("fries", "spark-streaming", seed, faults=tuple(sorted(faults)), delay_unit="ms")
    check = CheckResult(CHECK)
    result.checks.append(check)
    stepped = stepped_cases(seed)
    stepped = stepped if cases >= len(stepped) else []
    sections = [("live-stepped", stepped), ("live", streaming_cases(cases - len(stepped), seed))]
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
        result.failures.append(_shrink_and_save(config, engines[mode], CHECK, index, scenario, judgement, mode))
    return result
