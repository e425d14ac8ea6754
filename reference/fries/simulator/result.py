"""What a simulation yields (the public result type of :func:`simulate`)."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Mapping

from spec.fries.scenario import Output
from spec.fries.schedule import Schedule


@dataclass(frozen=True)
class CheckpointRecord:
    """One checkpoint (§7.3): when it started and completed (None: never completed), whether
    the controller cancelled it, and per object the reconfigurations (ids, 1-based) that
    object had applied when it took its snapshot."""

    checkpoint: int
    started: float
    completed: float | None
    cancelled: bool
    snapshot: Mapping[str, frozenset[int]]


@dataclass(frozen=True)
class SimulationStats:
    """Control traffic of a run: FCMs sent by the controller, epoch markers sent on
    channels, and the number of distinct channels that carried at least one marker."""

    fcms: int = 0
    markers: int = 0
    marker_channels: int = 0


@dataclass(frozen=True)
class SimulationResult:
    """The outcome of one simulated run.

    ``outputs``: the sink records (sink, transaction, key, value) with multiplicity;
    ``schedule``: per object, its data and update operations in execution order (source
    objects keep no state and are left out); ``states``: final state per (operator, key);
    ``delays``: per reconfiguration, request time to the time its last update took effect;
    ``end_time``: when the last event happened. ``checkpoints`` lists the checkpoints taken
    (only with a checkpoint interval); ``uniqueness_violations`` names operators declared
    ``unique`` that emitted more than one tuple for some data transaction in this run (the
    uniqueness pruning rule is only sound when the declaration is true); ``senders``, parallel to
    the schedule's logs, the object that sent the tuple of each data operation (None for
    updates and flushes), the channels :mod:`spec.fries.consistency` checks."""

    outputs: Counter[Output]
    schedule: Schedule
    states: Mapping[tuple[str, int], int]
    delays: tuple[float, ...]
    end_time: float
    stats: SimulationStats = field(default_factory=SimulationStats)
    checkpoints: tuple[CheckpointRecord, ...] = ()
    uniqueness_violations: tuple[str, ...] = ()
    senders: Mapping[str, tuple[str | None, ...]] | None = None
