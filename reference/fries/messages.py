"""What travels on a channel: data tuples, epoch markers and checkpoint barriers.

FCMs (Fries Def. 4.1) never travel on a channel: the controller delivers them directly
(:meth:`reference.fries.simulator.engine.Engine.send_fcm`), so data never delays them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Data:
    """A tuple of data transaction ``txn`` (the source tuple's id, Def. 4.4). ``version`` is
    the configuration version the multi-version scheduler tagged at the source (§4.1); the
    other schedulers leave it 0."""

    txn: str
    key: int
    value: int
    version: int = 0


@dataclass(frozen=True)
class Marker:
    """An epoch marker of reconfiguration ``rid`` (EBR §3.1, Fries Alg. 2)."""

    rid: int


@dataclass(frozen=True)
class Barrier:
    """A checkpoint barrier of checkpoint ``checkpoint`` (§7.3)."""

    checkpoint: int


Message = Data | Marker | Barrier
