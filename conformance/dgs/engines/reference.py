"""The reference plan executor as the DGS engine under test: :func:`reference.dgs.executor.execute_plan`
(simulated workers, mailboxes, heartbeats; DGS Theorem 3.5), case by case."""

from __future__ import annotations

from typing import Sequence

from reference.dgs.executor import execute_plan

from conformance.core.crashes import Crash, describe
from conformance.dgs.cases import DgsCase, program_of
from conformance.dgs.oracles import BatchEngine, Observed


def reference_engine() -> BatchEngine:
    """The reference plan executor, case by case (an exception is that case's crash)."""

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
