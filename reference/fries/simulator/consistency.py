"""Is a simulated run consistent? Conflict-serializable (Fries Def. 4.9) *and* computing
what the equivalent serial execution computes (spec.fries.scenario.serial_execution).

Serializability alone says nothing about values; comparing with the serial execution in the
checker's witness order closes the loop: with the scenario catalogue, what a run computes
is fixed by which data transactions each reconfigured object processed before its update,
which is exactly what the witness order records (see spec.fries.scenario). Blocking flushes
(``"<op>:final"``) are not part of a serial order - serial_execution runs them at the end -
and transactions that touched no object may go anywhere; both are handled here.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec.fries.scenario import Scenario, SerialResult, ingestion_order, serial_execution

from reference.fries.serializability import Verdict, check_serializability
from reference.fries.simulator.result import SimulationResult


@dataclass(frozen=True)
class Consistency:
    """The judgement of one run: the checker's verdict and, when serializable, the serial
    execution in its witness order and whether outputs and final states match it."""

    verdict: Verdict
    serial: SerialResult | None
    outputs_match: bool
    states_match: bool

    @property
    def ok(self) -> bool:
        """Serializable, with the outputs and states of the equivalent serial execution."""
        return self.verdict.serializable and self.outputs_match and self.states_match

    def explain(self) -> str:
        """The judgement in words."""
        if not self.verdict.serializable:
            return self.verdict.explain()
        parts = [self.verdict.explain()]
        if not self.outputs_match:
            parts.append("but the outputs differ from that serial execution")
        if not self.states_match:
            parts.append("but the final states differ from that serial execution")
        return "; ".join(parts)


def witness_order(scenario: Scenario, verdict: Verdict) -> tuple[str, ...]:
    """The checker's serial order as a serial_execution order: without flushes, with the
    transactions absent from the schedule appended in ingestion order."""
    assert verdict.serial_order is not None
    order = [t for t in verdict.serial_order if not t.endswith(":final")]
    seen = set(order)
    order += [t.txn for t in ingestion_order(scenario) if t.txn not in seen]
    order += [f"R{j}" for j in range(1, len(scenario.reconfigurations) + 1) if f"R{j}" not in seen]
    return tuple(order)


def check_run(scenario: Scenario, result: SimulationResult) -> Consistency:
    """Judge ``result`` (a run of ``scenario``) against the spec."""
    verdict = check_serializability(result.schedule)
    if not verdict.serializable:
        return Consistency(verdict, None, False, False)
    serial = serial_execution(scenario, witness_order(scenario, verdict))
    states = {k: v for k, v in result.states.items()}
    return Consistency(verdict, serial, serial.outputs == result.outputs, dict(serial.states) == states)
