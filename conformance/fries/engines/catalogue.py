"""Engines under test: something that runs a batch of Fries scenarios and reports outcomes.

* :class:`SparkEngine` - spark_impl's executor (``spark_impl.reconfig.run_scenarios``): every
  case of a batch runs in one call, sharing one SparkSession, so the executor can pack them
  into as few Spark jobs as it can. Seeded faults (``spark_impl.faults.FAULTS``) are passed
  through.
* :class:`ReferenceEngine` - the reference discrete-event simulator
  (``reference.fries.simulator.simulate``). Checking it against the spec's serial execution is
  a differential test of its own (reference vs spec), and it lets the suite's machinery run
  where Spark is not available. Its only "fault" is scheduling with the naive FCM scheduler.

Both are imported lazily: :func:`engine_status` says whether an engine can run here, and why
not, so the CLI reports "spark engine not available" instead of pretending.
"""

from __future__ import annotations

import importlib
import shutil
import tempfile
import time
from typing import Any, Mapping, Protocol, Sequence

from spec.errors import InputError
from spec.fries.scenario import Scenario
from spec.fries.schedule import Schedule

from conformance.fries.outcome import RunOutcome, expand_outputs, rejected_ids
from conformance.core.crashes import Crash, Guard

ENGINES = ("spark", "reference", "spark-streaming")


class FriesEngine(Protocol):
    """Runs scenarios; one outcome per scenario, in order."""

    name: str

    def run(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        """Run every scenario of the batch."""
        ...


def engine_status(name: str) -> str | None:
    """None when engine ``name`` can run here, else the reason it cannot."""
    module = {"spark": "spark_impl.reconfig", "spark-streaming": "spark_impl.reconfig",
              "reference": "reference.fries.simulator"}.get(name)
    if module is None:
        raise InputError(f"unknown engine {name!r} (expected one of {list(ENGINES)})", "--engine")
    try:
        importlib.import_module(module)
    except ImportError as error:
        return f"{name} engine not available ({module}: {error})"
    return None


def available_faults(name: str) -> dict[str, str]:
    """The seeded faults of engine ``name``: fault name -> what it breaks."""
    if name == "reference":
        return {"naive": "naive FCM scheduling where fries is asked (the reference's naive scheduler)"}
    if engine_status("spark") is not None:
        return {}
    faults_module = importlib.import_module("spark_impl.faults")
    return dict(getattr(faults_module, "FAULTS"))


def make_engine(name: str, *, scheduler: str = "fries", faults: frozenset[str] = frozenset(),
                spark: Any = None, checkpoint_dir: str | None = None, path: str = "planned") -> FriesEngine:
    """The engine called ``name`` with the given scheduler and injected faults (InputError on
    an unknown fault). ``path``: the Spark executor's entry path
    (:mod:`conformance.fries.engines.paths`; the reference simulator has one path only; for
    ``spark-streaming``, the live mode of :mod:`conformance.fries.live_suite`, which
    ``--replay`` of a saved live case passes as ``"fries:live"`` or ``"fries:live-stepped"``)."""
    known = available_faults(name)
    for fault in sorted(faults):
        if fault not in known:
            raise InputError(
                f"unknown fault {fault!r} for the {name} engine (known: {', '.join(sorted(known)) or 'none'})",
                "--inject-fault")
    if name == "reference":
        return ReferenceEngine("naive" if "naive" in faults else "epoch" if path == "epoch" else scheduler)
    if name == "spark":
        return SparkEngine(scheduler, faults, spark=spark, checkpoint_dir=checkpoint_dir, path=path)
    if name == "spark-streaming":
        from conformance.fries.live_suite import StreamingEngine

        return StreamingEngine(scheduler, faults, spark=spark, mode=path)
    raise InputError(f"unknown engine {name!r} (expected one of {list(ENGINES)})", "--engine")


class ReferenceEngine:
    """The reference simulator as the engine under test (one simulation per scenario)."""

    def __init__(self, scheduler: str = "fries") -> None:
        self.name = "reference"
        self.scheduler = scheduler

    def run(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        """Simulate each scenario; an exception becomes that case's engine failure."""
        simulator = importlib.import_module("reference.fries.simulator")
        outcomes = []
        for scenario in scenarios:
            try:
                result = simulator.simulate(scenario, self.scheduler)
                outcomes.append(_outcome(scenario, result.outputs, result.schedule,
                                         getattr(result, "states", None), getattr(result, "delays", ()),
                                         getattr(result, "rejected", ()), getattr(result, "senders", None)))
            except Exception as error:  # noqa: BLE001 - an engine crash is a finding, not a stop
                # (an InputError too: the scenario was validated by spec, so the engine is wrong)
                outcomes.append(RunOutcome.failed(f"{type(error).__name__}: {error}"))
        return outcomes


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
            from spark_impl.session import get_or_create_session

            self._spark = get_or_create_session(app_name="streamproof-conformance")
        return self._spark

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
        from conformance.fries.engines.paths import run_path

        scratch = tempfile.mkdtemp(prefix="streamproof-conformance-")
        began = time.monotonic()
        results = run_path(self.spark, self.path, list(scenarios), self.scheduler, faults=self.faults,
                           checkpoint_dir=self._checkpoint_dir or scratch)
        elapsed_ms = (time.monotonic() - began) * 1000.0
        from conformance.fries.retention import log_problem  # record logs pruned (set C bug 18)

        leak = log_problem(self._checkpoint_dir or scratch)
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
            outcomes[index] = _outcome(scenario, result.outputs, result.schedule, getattr(result, "states", None),
                                       getattr(result, "delays_ms", ()), getattr(result, "rejected", ()),
                                       getattr(result, "senders", None))
        return outcomes


    def _mcs_problem(self, scenario: Scenario) -> str | None:
        """spark_impl's MCS for every request of ``scenario`` against the spec's (driver side,
        no Spark: :mod:`conformance.fries.checks.mcs`); only where the fries scheduler runs."""
        if self.scheduler != "fries" or self.path == "epoch":
            return None
        from conformance.fries.checks.mcs import mcs_problem

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


def _outcome(scenario: Scenario, outputs: Any, schedule: Any, states: Any, delays: Any,
             rejected: Any, senders: Any = None) -> RunOutcome:
    """Normalise an engine's result fields into a :class:`RunOutcome`."""
    if not isinstance(schedule, Schedule):
        schedule = Schedule.from_json(schedule.to_json() if hasattr(schedule, "to_json") else schedule)
    return RunOutcome(
        outputs=expand_outputs(outputs),
        schedule=schedule,
        states=_states(states),
        delays=tuple(float(d) for d in (delays.values() if isinstance(delays, Mapping) else delays or ())),
        rejected=rejected_ids(scenario, rejected or ()),
        senders={str(obj): tuple(None if x is None else str(x) for x in log) for obj, log in dict(senders).items()}
        if senders else None,
    )


def _states(states: Any) -> dict[tuple[str, int], int] | None:
    if states is None:
        return None
    return {(str(op), int(key)): int(value) for (op, key), value in dict(states).items()}
