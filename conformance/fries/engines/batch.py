"""spark_impl's reconfiguration executor as the Fries engine under test (``--engine spark``).

Every case of a batch runs in one call of an entry path (:mod:`conformance.fries.engines.paths`;
``planned`` = ``spark_impl.reconfig.run_scenarios``), sharing one SparkSession, so the executor
can pack them into as few Spark jobs as it can. Seeded faults (``spark_impl.faults.FAULTS``)
are passed through. Besides the outputs, every run's reported delays, its record logs
(:mod:`conformance.fries.retention`) and its MCS (:func:`conformance.fries.oracles.mcs_problem`)
are judged here, where the engine's own result is still at hand.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from typing import Any, Mapping, Sequence

from spec.fries.scenario import Scenario

from conformance.core.crashes import Crash, Guard
from conformance.core.session import conformance_session
from conformance.core.spark_logs import adopt
from conformance.fries import retention
from conformance.fries.engines import paths
from conformance.fries.oracles import mcs_problem
from conformance.fries.outcome import RunOutcome, outcome_of


class SparkEngine:
    """spark_impl's executor; the whole batch in one call of the entry ``path``
    (:mod:`conformance.fries.engines.paths`; ``planned`` = ``run_scenarios``)."""

    def __init__(self, scheduler: str, faults: frozenset[str], *, spark: Any = None,
                 checkpoint_dir: str | None = None, timeout_s: float = 900.0, path: str = "planned") -> None:
        self.name = "spark"
        self.scheduler = scheduler
        self.path = path
        self.faults = faults
        self._spark = spark
        self._checkpoint_dir = checkpoint_dir
        self.timeout_s = timeout_s
        self.hung: str | None = None

    @property
    def spark(self) -> Any:
        """The shared SparkSession (created on first use)."""
        if self._spark is None:
            self._spark = conformance_session("streamproof-conformance")
        return adopt(self._spark)

    def __call__(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        """:meth:`run` (the :class:`~conformance.core.protocols.Engine` call)."""
        return self.run(scenarios)

    def run(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        """Run the batch under the watchdog; a call that raises is bisected to the scenarios
        that crash it (:mod:`conformance.core.crashes`: an ``engine`` failure each, never exit 3)."""
        if self.hung is not None:
            return [RunOutcome.failed(f"not run: {self.hung}")] * len(scenarios)
        guard: Guard[Scenario, RunOutcome] = Guard(self._run_batch, self.timeout_s,
                                                   on_hang=lambda: self.spark.sparkContext.cancelAllJobs())
        outcomes = [RunOutcome.failed(r.explain()) if isinstance(r, Crash) else r for r in guard(scenarios)]
        self.hung = guard.hung
        return outcomes

    def _run_batch(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        """One call of the entry path; results are matched to scenarios by ``scenario_index``."""
        scratch = tempfile.mkdtemp(prefix="streamproof-conformance-")
        began = time.monotonic()
        results = paths.run_path(self.spark, self.path, list(scenarios), self.scheduler, faults=self.faults,
                           checkpoint_dir=self._checkpoint_dir or scratch)
        elapsed_ms = (time.monotonic() - began) * 1000.0
        leak = retention.log_problem(self._checkpoint_dir or scratch)
        shutil.rmtree(scratch, ignore_errors=True)
        outcomes: list[RunOutcome] = [RunOutcome.failed("no result reported for this scenario")] * len(scenarios)
        for result in results:
            index = result.scenario_index
            scenario = scenarios[index]
            error = (getattr(result, "error", None) or leak
                     or delay_problem(getattr(result, "delays_ms", ()), elapsed_ms)
                     or self._mcs_problem(scenario))
            if error:
                outcomes[index] = RunOutcome.failed(str(error))
                continue
            outcomes[index] = outcome_of(scenario, result.outputs, result.schedule, getattr(result, "states", None),
                                         getattr(result, "delays_ms", ()), getattr(result, "rejected", ()),
                                         getattr(result, "senders", None))
        return outcomes

    def _mcs_problem(self, scenario: Scenario) -> str | None:
        """spark_impl's MCS for every request of ``scenario`` against the spec's (driver side,
        no Spark: :func:`conformance.fries.oracles.mcs_problem`); only where the fries scheduler runs."""
        if self.scheduler != "fries" or self.path == "epoch":
            return None
        return mcs_problem(scenario)


def delay_problem(delays_ms: Any, elapsed_ms: float) -> str | None:
    """A reported reconfiguration delay that is not a duration inside the run, in words: a
    delay runs from a request's issue to its last reconfigured object's switch, both inside
    the engine call that took ``elapsed_ms`` (so 0 <= delay <= elapsed, 1 ms of slack for the
    clocks' rounding). No other oracle reads the delays."""
    values = list(delays_ms.values() if isinstance(delays_ms, Mapping) else delays_ms or ())
    for number, delay in enumerate(values, start=1):
        if not -1.0 <= float(delay) <= elapsed_ms + 1.0:
            return (f"reconfiguration delay #{number} reported as {float(delay):.1f} ms, not a duration inside "
                    f"the run (0 to {elapsed_ms:.0f} ms)")
    return None
