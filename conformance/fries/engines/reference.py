"""The reference discrete-event simulator as the Fries engine under test.

Checking it against the spec's serial execution is a differential test of its own (reference
vs spec), and it lets the suite's machinery run where Spark is not available. Its only "fault"
is scheduling with the naive FCM scheduler.
"""

from __future__ import annotations

from typing import Sequence

from spec.fries.scenario import Scenario

from reference.fries import simulator

from conformance.fries.outcome import RunOutcome, outcome_of


class ReferenceEngine:
    """The reference simulator as the engine under test (one simulation per scenario)."""

    def __init__(self, scheduler: str = "fries") -> None:
        self.name = "reference"
        self.scheduler = scheduler

    def __call__(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        """:meth:`run` (the :class:`~conformance.core.protocols.Engine` call)."""
        return self.run(scenarios)

    def run(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        """Simulate each scenario; an exception becomes that case's engine failure."""
        outcomes = []
        for scenario in scenarios:
            try:
                result = simulator.simulate(scenario, self.scheduler)
                outcomes.append(outcome_of(scenario, result.outputs, result.schedule,
                                           getattr(result, "states", None), getattr(result, "delays", ()),
                                           getattr(result, "rejected", ()), getattr(result, "senders", None)))
            except Exception as error:  # noqa: BLE001 - an engine crash is a finding, not a stop
                # (an InputError too: the scenario was validated by spec, so the engine is wrong)
                outcomes.append(RunOutcome.failed(f"{type(error).__name__}: {error}"))
        return outcomes
