"""A correct Fries run built by hand (no engine): the run an executor would produce if it
executed the transactions one after another in a given order. The oracle tests break it in one
way each and check that the oracle meant for that way names it."""

from __future__ import annotations

from spec.fries.dataflow import OperatorKind
from spec.fries.scenario import Output, Scenario, serial_execution
from spec.fries.schedule import Operation, Schedule

from conformance.fries.outcome import RunOutcome


def serial_run(scenario: Scenario, order: list[str]) -> RunOutcome:
    """Every non-source operator's log follows ``order`` (a request logs an update on the
    operators it reconfigures, a source tuple an operation on every one), a blocking operator's
    log ends with its final flush ``<name>:final``; outputs and states are those of the serial
    execution in ``order``."""
    flow = scenario.dataflow
    operators = [n for n in flow.names if flow.kind(n) is not OperatorKind.SOURCE]
    logs: dict[str, list[Operation]] = {op: [] for op in operators}
    updates = {f"R{j + 1}": r for j, r in enumerate(scenario.reconfigurations)}
    for txn in order:
        if txn in updates:
            for op in updates[txn].updates:
                logs[op].append(Operation(txn, update=True))
        else:
            for op in operators:
                logs[op].append(Operation(txn))
    for op in operators:
        if flow.kind(op) is OperatorKind.BLOCKING:
            logs[op].append(Operation(f"{op}:final"))
    result = serial_execution(scenario, order)
    outputs: list[Output] = sorted(result.outputs.elements())
    return RunOutcome(tuple(outputs), Schedule({k: tuple(v) for k, v in logs.items()}), dict(result.states))
