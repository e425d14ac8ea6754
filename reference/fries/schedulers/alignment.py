"""Epoch-marker alignment (Carbone et al. 2017, Fries §3.1 and Alg. 2), shared by the epoch
and the Fries schedulers.

When an object takes a marker from one of the inputs it aligns on, it stops taking tuples
from that input (they belong to the next epoch) until the marker has come on every such
input; then it is *aligned*. The object keeps processing its other inputs meanwhile (for Fries:
inputs outside its MCS component, which carry no marker).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

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
