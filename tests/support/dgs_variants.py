"""The DGS suite's drawn cases changed where a Spark run cannot afford a second pass: longer
inlining bounds and explicit per-stream delays (``spark_impl.dgs.release.Arrival.delays``,
never set by a drawn case). Used by the tests that run the batch driver and the live front
end on the pure-Python Spark stand-in."""

from __future__ import annotations

from dataclasses import replace

from reference.dgs.examples import target
from spark_impl.dgs import Arrival, DgsJob

from conformance.dgs.cases import DgsCase

INLINE = (1, 3, 8, 50)
"""The inlining bounds the variants cycle through (the drawn cases use 0, 2 or 5)."""


def variant(case: DgsCase, index: int) -> tuple[DgsCase, DgsJob]:
    """``case`` with the ``index``-th inlining bound of :data:`INLINE`, and its batch job with
    explicit stream delays on top of the case's delays and jitter."""
    changed = replace(case, inline_below=INLINE[index % len(INLINE)])
    delays = {stream: (index + n) % 5 for n, stream in enumerate(sorted(case.streams)) if (index + n) % 3}
    arrival = Arrival(case.max_delay, case.max_jitter, case.seed, delays)
    return changed, DgsJob(target(case.name), case.plan, case.streams, arrival, case.tick, changed.inline_below)
