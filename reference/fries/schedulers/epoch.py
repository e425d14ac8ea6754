"""The epoch-based scheduler EBR (Fries §3.1, Def. 3.1; the Chi implementation).

On a request the controller starts a new epoch: it injects an epoch marker, carrying the
reconfiguration, at every root object (the sources, and the first operators of downstream
pipelined regions, §7.1) - a control message, so it takes an FCM delay. A root forwards the
marker on all its pipelined outputs at once. Every other object aligns the marker on *all*
its pipelined inputs, applies its update when aligned (if it is reconfigured) and forwards
the marker on all its pipelined outputs. Every tuple of the old epoch therefore meets every
reconfigured object before the update, every tuple of the new epoch after it (Lemma 4.10).
"""

from __future__ import annotations

from reference.fries.schedulers.alignment import MarkerScheduler
from reference.fries.schedulers.base import EngineView


class EpochScheduler(MarkerScheduler):
    """EBR: markers from the roots through the whole (pipelined) dataflow."""

    name = "epoch"

    def start(self, engine: EngineView, rid: int) -> None:
        topology = engine.topology
        self.begin(engine, rid, {obj: frozenset(topology.pipelined_in[obj]) for obj in topology.objects},
                   topology.pipelined_out, list(topology.roots))
