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

from typing import TYPE_CHECKING

from reference.fries.schedulers.alignment import Alignment
from reference.fries.schedulers.base import Scheduler

if TYPE_CHECKING:
    from reference.fries.simulator.engine import Engine


class EpochScheduler(Scheduler):
    """EBR: markers from the roots through the whole (pipelined) dataflow."""

    name = "epoch"

    def __init__(self) -> None:
        self._alignments: dict[int, Alignment] = {}
        self._injected: dict[int, set[str]] = {}

    def start(self, engine: "Engine", rid: int) -> None:
        topology = engine.topology
        self._alignments[rid] = Alignment(rid, {
            obj: frozenset(topology.pipelined_in[obj]) for obj in topology.objects})
        self._injected[rid] = set()
        for root in topology.roots:
            engine.send_fcm(root, rid)

    def on_fcm(self, engine: "Engine", obj: str, payload: object) -> None:
        assert isinstance(payload, int)
        self._aligned(engine, obj, payload)
        injected = self._injected[payload]
        injected.add(obj)
        if len(injected) == len(engine.topology.roots):
            engine.control_delivered(payload)

    def on_marker(self, engine: "Engine", obj: str, sender: str, rid: int) -> None:
        if self._alignments[rid].receive(engine, obj, sender):
            self._aligned(engine, obj, rid)

    def _aligned(self, engine: "Engine", obj: str, rid: int) -> None:
        engine.apply_update(obj, rid)
        for receiver in engine.topology.pipelined_out[obj]:
            engine.send_marker(obj, receiver, rid)
