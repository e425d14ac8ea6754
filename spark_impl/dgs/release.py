"""The batch-level mailbox of the Spark DGS executor: arrival, timers and release (DGS §3.4).

**Arrival (what the network does).** Item ``i`` of stream ``s`` reaches the driver at
``max(arrival of item i-1 of s, ts_i + delay_s + jitter_i)``: each stream has its own delay,
each message a bounded jitter, a stream's channel is FIFO (Appendix C assumption 4), so items
of *different* streams arrive reordered, by at most ``max delay + jitter``. :class:`Arrival`
draws delays and jitter from a seed.

**Ticks.** The driver polls every ``tick`` time units; the items that arrived by then are
received into per-stream buffers. A stream's *timer* is the order key ``(ts, stream)`` of its
latest received item (events and heartbeats alike, §3.4).

**Release rule (the batch-level equivalent of §3.4's mailboxes).** A buffered event ``e``
with key ``k`` and implementation tag ``(σ, s)`` is released at a tick when

1. every stream of ``D(σ, s)`` (streams carrying a tag dependent on σ, and s) has a timer
   ``>= k`` - no dependent event before ``e`` can still arrive; and
2. no buffered event that stays unreleased has a key ``< k`` and a tag dependent on σ
   (the released set is closed downwards under dependence; computed as a fixpoint).

The released events of a tick are handed to Spark in key order. Two consequences make the
output multiset independent of delays (Theorem 3.5's argument): dependent events are
processed in key order (a dependent earlier event is released no later, and within a tick
in key order), and an event released at a later tick than a later-keyed one is independent of
it, so the two commute for a consistent program (C3).
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from typing import Any, Hashable, Mapping, Sequence

from spec.dgs.program import Program
from spec.dgs.streams import Heartbeat, Item, StreamEvent, Streams, check_valid_input
from spec.errors import InputError

from spark_impl.dgs.topology import Topology

Key = tuple[int, str]


@dataclass(frozen=True)
class Released:
    """One released event: its order key, tag, stream, payload and responsible worker."""

    key: Key
    tag: Hashable
    stream: str
    payload: Any
    worker: str


@dataclass(frozen=True)
class Arrival:
    """Per-stream delays and bounded jitter (module docstring); all zero = in-order input."""

    max_delay: int = 0
    max_jitter: int = 0
    seed: int = 0
    delays: Mapping[str, int] = field(default_factory=dict)  # explicit per-stream delays

    def times(self, streams: Streams) -> dict[str, list[float]]:
        """Arrival time of every item of every stream."""
        rng = random.Random(self.seed)
        result: dict[str, list[float]] = {}
        for stream in sorted(streams):
            delay = self.delays.get(stream, rng.randint(0, self.max_delay))
            last = -math.inf
            times: list[float] = []
            for item in streams[stream]:
                last = max(last, float(item.ts + delay + rng.randint(0, self.max_jitter)))
                times.append(last)
            result[stream] = times
        return result


def release_schedule(program: Program, topo: Topology, streams: Streams, arrival: Arrival,
                     tick: int) -> list[list[Released]]:
    """The events released at each tick, each tick's list in key order (empty ticks dropped).

    Raises InputError for an invalid input instance (Def. 3.3), an event no worker handles,
    or ``tick < 1``."""
    if tick < 1:
        raise InputError(f"must be >= 1, got {tick}", "tick")
    check_valid_input(streams)
    arrivals = arrival.times(streams)
    pending = sorted((time, stream, index) for stream, times in arrivals.items()
                     for index, time in enumerate(times))
    timers: dict[str, Key] = {}
    buffered: list[Released] = []
    ticks: list[list[Released]] = []
    if not pending:
        return ticks
    now, position = math.floor(pending[0][0]), 0
    while position < len(pending) or buffered:
        while position < len(pending) and pending[position][0] <= now:
            _, stream, index = pending[position]
            position += 1
            item: Item = streams[stream][index]
            timers[stream] = (item.ts, stream)
            if isinstance(item, StreamEvent):
                tag = program.tag(item.payload)
                buffered.append(Released((item.ts, stream), tag, stream, item.payload,
                                         topo.worker_of(tag, stream)))
            elif not isinstance(item, Heartbeat):  # pragma: no cover - typed input
                raise InputError(f"unknown item {item!r}", f"stream {stream!r}")
        released, buffered = _release(program, topo, timers, buffered)
        if released:
            ticks.append(released)
        if position >= len(pending) and buffered:
            raise InputError(f"{len(buffered)} events can never be released (input is not a "
                             "valid instance: a stream stops before a dependent event)")
        now += tick
    return ticks


def _release(program: Program, topo: Topology, timers: Mapping[str, Key],
             buffered: Sequence[Released]) -> tuple[list[Released], list[Released]]:
    """Split the buffer into (released in key order, kept) by the module's rule."""
    far = (-math.inf, "")
    ok = [all(timers.get(s, far) >= e.key for s in topo.release_streams[(e.tag, e.stream)])
          for e in buffered]
    changed = True
    while changed:
        earliest: dict[Hashable, Key] = {}
        for e, released in zip(buffered, ok):
            if not released:
                earliest[e.tag] = min(earliest.get(e.tag, e.key), e.key)
        changed = False
        for index, e in enumerate(buffered):
            if ok[index] and any(key < e.key and program.depends(tag, e.tag)
                                 for tag, key in earliest.items()):
                ok[index], changed = False, True
    released_events = sorted((e for e, r in zip(buffered, ok) if r), key=lambda e: e.key)
    return released_events, [e for e, r in zip(buffered, ok) if not r]


release_ready = _release
"""Split the buffer into (released in key order, kept) by the module docstring's release rule
(shared with the live executor's mailbox, :mod:`spark_impl.dgs.streaming_input`)."""
