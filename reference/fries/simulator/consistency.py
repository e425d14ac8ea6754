"""Is a simulated run consistent? The definition of :mod:`spec.fries.consistency`:
(C1) conflict-serializable (Fries Def. 4.9, decided by the reference checker), (C2) every
channel FIFO and fully consumed, (C3) outputs and final states equal to the replay of the
run's own per-object order - which is the serial execution in the checker's witness order
up to the dependence relation "same object, same key" (exactly that serial execution when
no function is order-sensitive; both are property-tested).

Blocking flushes (``"<op>:final"``) are not part of a serial order - serial_execution runs
them at the end - and transactions that touched no object may go anywhere; both are handled
in :func:`witness_order`.
"""

from __future__ import annotations

from dataclasses import dataclass

from spec.fries.consistency import Replay, replay
from spec.fries.scenario import Scenario, SerialResult, ingestion_order, serial_execution

from reference.fries.serializability import Verdict, check_serializability
from reference.fries.simulator.result import SimulationResult


@dataclass(frozen=True)
class Consistency:
    """The judgement of one run: the checker's verdict and, when serializable, the serial
    execution in its witness order, the replay of the run and whether the run's outputs and
    final states match the replay."""

    verdict: Verdict
    serial: SerialResult | None
    replayed: Replay | None
    outputs_match: bool
    states_match: bool

    @property
    def channels_fifo(self) -> bool:
        """(C2): every channel delivered in send order, nothing lost or invented."""
        return self.replayed is not None and not self.replayed.violations

    @property
    def ok(self) -> bool:
        """(C1)-(C3) of spec.fries.consistency."""
        return self.verdict.serializable and self.channels_fifo and self.outputs_match and self.states_match

    def explain(self) -> str:
        """The judgement in words."""
        if not self.verdict.serializable:
            return self.verdict.explain()
        parts = [self.verdict.explain()]
        if self.replayed is not None and self.replayed.violations:
            parts.append("but " + "; ".join(self.replayed.violations[:3]))
        if not self.outputs_match:
            parts.append("but the outputs differ from the replay of the run (the serial execution up to "
                         "the per-key order)")
        if not self.states_match:
            parts.append("but the final states differ from the replay of the run")
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
        return Consistency(verdict, None, None, False, False)
    serial = serial_execution(scenario, witness_order(scenario, verdict))
    replayed = replay(scenario, result.schedule, result.senders)
    states = dict(result.states)
    return Consistency(verdict, serial, replayed, replayed.outputs == result.outputs,
                       dict(replayed.states) == states)
