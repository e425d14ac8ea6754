"""DGS programs under synchronization plans on PySpark (paper 001; docs/spark-dgs-oplus.md).

Public API: :func:`run_dgs` (program ``file.py:NAME``, plan, input streams -> outputs and
per-tick costs), :class:`Arrival` (per-stream delays and bounded reordering of the input) and
:func:`sequential_plan` (the one-worker plan: the sequential program on Spark).
"""

from __future__ import annotations

from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program
from spec.dgs.streams import StreamEvent, Streams

from spark_impl.dgs.driver import DgsJob, DgsRun, TickStats, run_dgs, run_dgs_many
from spark_impl.dgs.release import Arrival

__all__ = ["Arrival", "DgsJob", "DgsRun", "TickStats", "run_dgs", "run_dgs_many", "sequential_plan"]


def sequential_plan(program: Program, streams: Streams) -> Plan:
    """One worker responsible for every implementation tag of ``streams``: no fork, no join."""
    impl = frozenset((program.tag(item.payload), stream) for stream, items in streams.items()
                     for item in items if isinstance(item, StreamEvent))
    return Plan(Worker("w0", program.initial, impl))
