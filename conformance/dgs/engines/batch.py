"""spark_impl's DGS batch executor as the engine under test: a batch of cases in one
:func:`spark_impl.dgs.run_dgs_many` call (tick ``t`` of every case of a batch is one Spark job),
under the watchdog and crash isolation of :class:`conformance.core.crashes.Guard`."""

from __future__ import annotations

from typing import Any, Sequence

from reference.dgs.examples import target

import spark_impl.dgs as spark_dgs

from conformance.core.crashes import Guard
from conformance.core.session import shared_session
from conformance.dgs.cases import DgsCase
from conformance.dgs.oracles import BatchEngine, Observed

SPARK_TIMEOUT_S = 1800.0
"""A batch call that takes longer is a liveness failure. The whole default run takes about a
minute on a quiet machine; at a load average of 80-100 on the 2 cores one batch took over 900
s (the former limit) without anything wrong, and every case failed ``engine``."""


def dgs_job(case: DgsCase, plan: Any = None) -> Any:
    """The ``spark_impl.dgs.DgsJob`` of ``case`` (``plan``: another plan instead of its own)."""
    return spark_dgs.DgsJob(target(case.name), case.plan if plan is None else plan, case.streams,
                            spark_dgs.Arrival(case.max_delay, case.max_jitter, case.seed), case.tick,
                            case.inline_below)


def spark_engine(spark: Any = None, timeout_s: float = SPARK_TIMEOUT_S) -> BatchEngine:
    """spark_impl's DGS executor: a batch of cases in one :func:`spark_impl.dgs.run_dgs_many`
    call, under the watchdog and crash isolation of :class:`conformance.core.crashes.Guard`."""
    session = shared_session(spark)

    def run(cases: Sequence[DgsCase]) -> list[Observed]:
        jobs = [dgs_job(c) for c in cases]
        return [(list(r.outputs), r.final_state, list(r.processed)) for r in spark_dgs.run_dgs_many(session(), jobs)]

    guard: Guard[DgsCase, Observed] = Guard(run, timeout_s, on_hang=lambda: session().sparkContext.cancelAllJobs())
    return guard
