"""Epoch-marker alignment (Carbone et al. 2017, Fries §3.1 and Alg. 2), shared by the epoch
and the Fries schedulers.

When an object takes a marker from one of the inputs it aligns on, it stops taking tuples
from that input (they belong to the next epoch) until the marker has come on every such
input; then it is *aligned*. The object keeps processing its other inputs meanwhile (for Fries:
inputs outside its MCS component, which carry no marker).
"""

from __future__ import annotations

from typing import Mapping, Sequence

from reference.fries.schedulers.base import EngineView, Scheduler


class Alignment:
    """Alignment state of one reconfiguration: ``inputs[obj]`` are the senders ``obj``
    aligns on."""

    def __init__(self, rid: int, inputs: Mapping[str, frozenset[str]]) -> None:
        self.rid = rid
        self.inputs = inputs
        self.received: dict[str, set[str]] = {}

    def receive(self, engine: EngineView, obj: str, sender: str) -> bool:
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
    control messages are delivered once every entry object had its FCM.

    A reconfiguration is *complete* (the controller may start the next one) only when its
    epoch is over everywhere: every update applied, every FCM handled and every marker taken
    by its receiver. Completing it as soon as the last update is applied is not enough: an
    FCM to a root that updates nothing may still be on its way, the next reconfiguration's
    FCM can overtake it (FCMs have independent delays), and that root then sends the later
    marker *before* the earlier one on a channel. An object aligning both then holds one
    input for each reconfiguration and neither alignment can finish (a deadlock), or it
    applies the later update first. Waiting for the epoch to end keeps every channel's
    markers in reconfiguration order (docs/fries-simulator.md, "Why two alignments never
    deadlock")."""

    def __init__(self) -> None:
        self._alignments: dict[int, Alignment] = {}
        self._outputs: dict[int, Mapping[str, Sequence[str]]] = {}
        self._entries: dict[int, frozenset[str]] = {}
        self._delivered: dict[int, set[str]] = {}
        self._in_flight: dict[int, int] = {}
        self._all_applied: set[int] = set()
        self._done: set[int] = set()

    def begin(self, engine: EngineView, rid: int, inputs: Mapping[str, frozenset[str]],
              outputs: Mapping[str, Sequence[str]], entries: Sequence[str]) -> None:
        """Start ``rid``: FCMs to ``entries`` in that order (the order decides the seeded FCM
        delays, so it is kept as given). Raises RuntimeError if an earlier reconfiguration's
        epoch is not over (the engine must not overlap them, see the class docstring)."""
        unfinished = sorted(set(self._alignments) - self._done)
        if unfinished:
            raise RuntimeError(f"R{rid} started while the epoch of R{unfinished[0]} is not over")
        self._alignments[rid] = Alignment(rid, inputs)
        self._outputs[rid] = outputs
        self._entries[rid] = frozenset(entries)
        self._delivered[rid] = set()
        self._in_flight[rid] = 0
        for obj in entries:
            engine.send_fcm(obj, rid)

    def on_fcm(self, engine: EngineView, obj: str, payload: object) -> None:
        assert isinstance(payload, int)
        self._aligned(engine, obj, payload)
        delivered = self._delivered[payload]
        delivered.add(obj)
        if delivered == self._entries[payload]:
            engine.control_delivered(payload)
        self._maybe_complete(engine, payload)

    def on_marker(self, engine: EngineView, obj: str, sender: str, rid: int) -> None:
        self._in_flight[rid] -= 1
        if self._alignments[rid].receive(engine, obj, sender):
            self._aligned(engine, obj, rid)
        self._maybe_complete(engine, rid)

    def on_all_applied(self, engine: EngineView, rid: int) -> None:
        self._all_applied.add(rid)
        self._maybe_complete(engine, rid)

    def _aligned(self, engine: EngineView, obj: str, rid: int) -> None:
        engine.apply_update(obj, rid)
        for receiver in self._outputs[rid][obj]:
            self._in_flight[rid] += 1
            engine.send_marker(obj, receiver, rid)

    def _maybe_complete(self, engine: EngineView, rid: int) -> None:
        """Complete ``rid`` once its epoch is over: updates applied, FCMs handled, no marker
        left on a channel."""
        if (rid not in self._done and rid in self._all_applied
                and self._delivered[rid] == self._entries[rid] and self._in_flight[rid] == 0):
            self._done.add(rid)
            engine.complete(rid)
