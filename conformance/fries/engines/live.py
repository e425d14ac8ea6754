"""spark_impl's Structured Streaming front end as a Fries engine under test (``--engine
spark-streaming --suite fries``).

Every case goes through :func:`conformance.fries.engines.live_query.run_streaming` (the case's
source tuples in several files of a file-source query, ``foreachBatch`` into the executor,
requests submitted while the query runs) in one of two *modes*: ``live-stepped`` (the harness
owns the control-message clock through the front end's step hook: heads switch micro-batches
apart on every run) and ``live`` (wall-clock control messages, requests submitted while batches
run), and ``live-typed`` (``live`` with keys and values of nested Spark types, of mixed kinds,
through the front end's encoding: :mod:`conformance.fries.engines.typed`). A case's first
restart point is a **driver crash** after a batch's tasks wrote and before its commit, then a
new query on the same checkpoint. The front end runs one job per query, so
a batch cannot share Spark jobs; instead :data:`PARALLEL` queries run at once (threads).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Sequence

from spec.fries.scenario import Scenario

from conformance.fries.engines.batch import SparkEngine
from conformance.fries.engines.live_query import run_streaming
from conformance.fries.engines.paths import prepare
from conformance.fries.outcome import PathFailure, RunOutcome, outcome_of


PARALLEL = 4
"""Queries running at once."""

MODES = ("live-stepped", "live", "live-typed")
"""``live-typed``: ``live`` with keys and values as nested Spark types of mixed kinds
(:mod:`conformance.fries.engines.typed`)."""


class StreamingEngine(SparkEngine):
    """:class:`~conformance.fries.engines.batch.SparkEngine` whose batch runs through the streaming
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
        scratch = tempfile.mkdtemp(prefix="streamproof-fries-live-")

        def one(index: int) -> RunOutcome:
            original = scenarios[index]
            crash = original.timing.restarts[0] if original.timing.restarts else None
            scenario = prepare("streaming", original)
            result = run_streaming(self.spark, scenario, index, self.scheduler, faults=self.faults,
                                   checkpoint_dir=os.path.join(scratch, f"q{index}"), crash_at=crash,
                                   stepped=self.mode == "live-stepped", typed=self.mode == "live-typed")
            if isinstance(result, PathFailure):
                return RunOutcome.failed(result.error)
            return outcome_of(scenario, result.outputs, result.schedule, getattr(result, "states", None),
                              getattr(result, "delays_ms", ()), getattr(result, "rejected", ()),
                              getattr(result, "senders", None))

        try:
            with ThreadPoolExecutor(PARALLEL) as pool:
                return list(pool.map(one, range(len(scenarios))))
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
