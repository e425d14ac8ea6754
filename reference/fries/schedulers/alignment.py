"""Epoch-marker alignment (Carbone et al. 2017, Fries §3.1 and Alg. 2), shared by the epoch
and the Fries schedulers.

When an object takes a marker from one of the inputs it aligns on, it stops taking tuples
from that input (they belong to the next epoch) until the marker has come on every such
input; then it is *aligned*. The object keeps processing its other inputs meanwhile (for Fries:
inputs outside its MCS component, which carry no marker).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping, Sequence

from reference.fries.schedulers.base import Scheduler

if TYPE_CHECKING:
    from reference.fries.simulator.engine import Engine


class Alignment:
    """Alignment state of one reconfiguration: ``inputs[obj]`` are the senders ``obj``
    aligns on."""

    def __init__(self, rid: int, inputs: Mapping[str, frozenset[str]]) -> None:
        self.rid = rid
        self.inputs = inputs
        self.received: dict[str, set[str]] = {}

    def receive(self, engine: "Engine", obj: str, sender: str) -> bool:
        """Record the marker on ``sender -> obj``; True exactly when ``obj`` becomes aligned
        (its blocked inputs are then released)."""
        expected = self.inputs.get(obj, frozenset())
        if sender not in expected:
            raise RuntimeError(f"{obj!r} got a marker of R{self.rid} from {sender!r}, "
                               f"which is not an input it aligns on")
        got = self.received.setdefault(obj, set())
        if sender in got:
            raise RuntimeError(f"{obj!r} got two markers of R{self.rid} from {sender!r}")
        got.add(sender)
        if got == expected:
            engine.unblock(obj, self.rid)
            return True
        engine.block(obj, sender, self.rid)
        return False


class MarkerScheduler(Scheduler):
    """The epoch-marker protocol both the epoch and the Fries schedulers run; they differ only
    in *where* (:meth:`begin`'s arguments): FCMs go to the ``entries`` objects, which apply
    their update on the FCM; every object aligns markers on ``inputs[obj]``, applies its
    update when aligned and forwards the marker on ``outputs[obj]``. The reconfiguration's
    control messages are delivered once every entry object had its FCM."""

    def __init__(self) -> None:
        self._alignments: dict[int, Alignment] = {}
        self._outputs: dict[int, Mapping[str, Sequence[str]]] = {}
        self._entries: dict[int, frozenset[str]] = {}
        self._delivered: dict[int, set[str]] = {}

    def begin(self, engine: "Engine", rid: int, inputs: Mapping[str, frozenset[str]],
              outputs: Mapping[str, Sequence[str]], entries: Sequence[str]) -> None:
        """Start ``rid``: FCMs to ``entries`` in that order (the order decides the seeded FCM
        delays, so it is kept as given)."""
        self._alignments[rid] = Alignment(rid, inputs)
        self._outputs[rid] = outputs
        self._entries[rid] = frozenset(entries)
        self._delivered[rid] = set()
        for obj in entries:
            engine.send_fcm(obj, rid)

    def on_fcm(self, engine: "Engine", obj: str, payload: object) -> None:
        assert isinstance(payload, int)
        self._aligned(engine, obj, payload)
        delivered = self._delivered[payload]
        delivered.add(obj)
        if delivered == self._entries[payload]:
            engine.control_delivered(payload)

    def on_marker(self, engine: "Engine", obj: str, sender: str, rid: int) -> None:
        if self._alignments[rid].receive(engine, obj, sender):
            self._aligned(engine, obj, rid)

    def _aligned(self, engine: "Engine", obj: str, rid: int) -> None:
        engine.apply_update(obj, rid)
        for receiver in self._outputs[rid][obj]:
            engine.send_marker(obj, receiver, rid)
