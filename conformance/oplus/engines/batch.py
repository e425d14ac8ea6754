"""spark_impl's O+ batch executor as the engine under test (``spark_impl.oplus.run_batch``):
every case of a batch in one batch of Spark jobs, with the injected O+ faults, under the
watchdog and crash isolation of :class:`conformance.core.crashes.Guard`."""

from __future__ import annotations

import importlib
from typing import Any, Sequence

import spark_impl.oplus as spark_oplus

from conformance.core.crashes import Guard
from conformance.core.session import shared_session
from conformance.oplus.cases import SparkCase
from conformance.oplus.oracles import SparkSeen, as_rows


def spark_status() -> str | None:
    """None when spark_impl has an O+ executor, else why not."""
    try:
        importlib.import_module("spark_impl.oplus")
    except ImportError:
        return "spark engine not available (spark_impl has no O+ executor yet: spark_impl.oplus)"
    return None


def spark_engine(faults: frozenset[str], spark: Any = None, timeout_s: float = 1800.0
                 ) -> Guard[SparkCase, SparkSeen]:
    """spark_impl.oplus on a batch of ``(scenario, items per round)`` (one batch of Spark jobs)
    under the watchdog and crash isolation of :class:`conformance.core.crashes.Guard`."""
    session = shared_session(spark)

    def run(cases: Sequence[SparkCase]) -> list[SparkSeen]:
        result = spark_oplus.run_batch(session(), [c for c, _ in cases], faults=sorted(faults),
                           items_per_round=[k for _, k in cases])
        return [(as_rows(r), list(e), a) for r, e, a in zip(result.rows, result.emitted, result.applied)]

    return Guard(run, timeout_s, on_hang=lambda: session().sparkContext.cancelAllJobs())
