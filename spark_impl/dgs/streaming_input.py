"""Live DGS input: the rows of a micro-batch as items, and each job's mailbox across batches.

**Rows.** Each row of the live stream is one JSON text, the item format of the streams file
``streamproof dgs-plan`` reads (docs/dgs.md), plus the stream id and, when one query runs
several jobs, the job's index::

    {"stream": "v0", "ts": 3, "event": ["i", "alice"]}
    {"stream": "v0", "ts": 9, "heartbeat": true}
    {"job": 1, "stream": "b", "ts": 4, "event": ["barrier", 0]}

Arrays become tuples (:func:`spec.dgs.streams.value_from_json`), so events, and the keys in
them, may be strings, numbers or tuples of them.

**Mailbox across micro-batches** (the batch-level mailbox of :mod:`spark_impl.dgs.release`,
one micro-batch = one tick). A job's :class:`Mailbox` holds each stream's *timer* (the order key
up to which the stream has been taken: its *watermark*), the events taken but not yet released,
and the events received but not yet taken (held for reordering). Then
:func:`spark_impl.dgs.release.release_ready` releases, in key order, every taken event no dependent
earlier event can still precede; the rest waits for later items (heartbeats) of the streams it
depends on.

**Bounded out-of-orderness** (:func:`take`, ``allowed_lateness`` ``L`` in event-time units, as
Flink's bounded out-of-orderness and Structured Streaming's ``withWatermark`` delay). A
stream's items may arrive out of timestamp order (a file source hands files over in
modification-time order, same-millisecond files in any order) by up to ``L``. At the end of
each micro-batch a stream's watermark moves to ``highest - L - 1`` (``highest``: the largest
timestamp the stream has shown; with ``L = 0``, ``highest`` itself) if that is later, and every
held item at or before it is taken, in timestamp order. An item at or before its stream's
watermark when its micro-batch starts is *late*: it comes more than ``L`` behind an item of an
earlier micro-batch (or repeats a taken timestamp). :func:`take` reports late items and leaves
them out; the front end applies the query's late policy (:mod:`spark_impl.lateness`).
Within one micro-batch order does not matter. So the taken items of every stream are in
timestamp order (DGS Def. 3.3), and when the input's disorder is at most ``L`` nothing is late
and the released events are those of the sorted input, only later: the outputs are the
sequential program's on the event-time-sorted input (Theorem 3.5's argument, as for network
delays). Two events of a stream at one timestamp not yet taken are refused (InputError, Def.
3.3). The price of ``L``: an event waits until its stream has shown a timestamp ``L + 1``
later (send heartbeats), also at the end of the input.

:func:`receive` is :func:`take` with ``L = 0`` that refuses a late item (InputError naming the
stream and its watermark) instead of reporting it: the contract of the batch-level checks.
"""

from __future__ import annotations

import json

from dataclasses import dataclass, field
from typing import Any, Sequence

from spec.dgs.program import Program
from spec.dgs.streams import Heartbeat, Item, StreamEvent, value_from_json
from spec.errors import InputError
from spec.jsonio import expect_bool, expect_int, expect_object, expect_str, parse_json, reject_unknown_keys

from spark_impl.dgs.release import Key, Released
from spark_impl.dgs.release import release_ready as _release  # the name tests patch
from spark_impl.dgs.topology import Topology


@dataclass
class Mailbox:
    """One job's mailbox between micro-batches (picklable: it is part of the commit).

    ``timers``: each stream's watermark as an order key ``(ts, stream)``; ``buffered``: taken
    events not yet released; ``held``: received events not yet taken (behind no watermark yet,
    module docstring); ``highest``: each stream's largest timestamp received; ``late``: late
    events per stream so far (heartbeats are not counted)."""

    timers: dict[str, Key] = field(default_factory=dict)
    buffered: list[Released] = field(default_factory=list)
    held: list[Released] = field(default_factory=list)
    highest: dict[str, int] = field(default_factory=dict)
    late: dict[str, int] = field(default_factory=dict)

    def __setstate__(self, state: dict[str, Any]) -> None:
        """Unpickle, also a mailbox of commit layout 1 (before bounded out-of-orderness): it
        holds nothing for reordering, its streams have shown up to their timers, none late."""
        self.__dict__.update(state)
        self.__dict__.setdefault("held", [])
        self.__dict__.setdefault("highest", {s: key[0] for s, key in self.timers.items()})
        self.__dict__.setdefault("late", {})

    def waiting(self) -> int:
        """The events this mailbox holds: taken and not yet released (``buffered``, waiting for
        a dependency's heartbeat) plus received and not yet taken (``held``, waiting for the
        watermark). Heartbeats are never kept, so these are all the events that wait."""
        return len(self.buffered) + len(self.held)


def backlog(mailboxes: Sequence[Mailbox]) -> int:
    """The DGS backlog (docs/production/operating.md, "Logging"): every event held in the
    mailboxes of every job, waiting for a heartbeat, the watermark or a dependency. The log
    line, the ``streamproof_backlog`` metric and ``status().backlog`` all take it from here."""
    return sum(box.waiting() for box in mailboxes)


@dataclass(frozen=True)
class Late:
    """A late item: its index in the items given to :func:`take` and the watermark (the
    stream's timer's timestamp) it was at or before."""

    index: int
    watermark: int


def parse_row(text: str | dict[str, Any], jobs: int, where: str) -> tuple[int, str, Item]:
    """One row (a JSON text, or an item dict of a struct column,
    :mod:`spark_impl.dgs.streaming_rows`): ``(job, stream, item)``; InputError naming
    ``where`` when malformed."""
    raw = expect_object(text if isinstance(text, dict) else parse_json(text, where), where)
    reject_unknown_keys(raw, {"job", "stream", "ts", "event", "heartbeat"}, where)
    for name in ("stream", "ts"):
        if name not in raw:
            raise InputError(f"missing field {name!r}", where)
    job = expect_int(raw.get("job", 0), f"{where}.job")
    if not 0 <= job < jobs:
        raise InputError(f"job {job} does not exist (the query runs {jobs} job(s))", f"{where}.job")
    stream = expect_str(raw["stream"], f"{where}.stream")
    ts = expect_int(raw["ts"], f"{where}.ts")
    if "event" in raw and "heartbeat" not in raw:
        return job, stream, StreamEvent(ts, value_from_json(raw["event"]))
    if "heartbeat" in raw and "event" not in raw and expect_bool(raw["heartbeat"], f"{where}.heartbeat"):
        return job, stream, Heartbeat(ts)
    raise InputError("expected exactly one of \"event\": ... or \"heartbeat\": true", where)


def take(program: Program, topo: Topology, mailbox: Mailbox, items: Sequence[tuple[str, Item]],
         allowed_lateness: int, where: str) -> tuple[list[Released], list[Late]]:
    """Receive one micro-batch's items of a job with bounded out-of-orderness
    ``allowed_lateness`` (module docstring): the events released now, in key order, and the
    late items, in ``(ts, stream)`` order (events and heartbeats; counted in ``mailbox.late``
    for events). ``mailbox`` is updated in place; on InputError (two events of a stream at one
    timestamp, an event no worker handles, a user function's error) it is unchanged."""
    timers = dict(mailbox.timers)
    highest = dict(mailbox.highest)
    held = list(mailbox.held)
    counts = dict(mailbox.late)
    waiting = {(e.stream, e.key[0]) for e in held}
    late: list[Late] = []
    for index, (stream, item) in enumerate(items):  # the watermarks are the batch's start's: any order
        last = timers.get(stream)
        if last is not None and item.ts <= last[0]:
            late.append(Late(index, last[0]))
            if isinstance(item, StreamEvent):
                counts[stream] = counts.get(stream, 0) + 1
            continue
        highest[stream] = max(highest.get(stream, item.ts), item.ts)
        if isinstance(item, StreamEvent):
            if (stream, item.ts) in waiting:
                raise InputError(f"stream {stream!r}: two events at timestamp {item.ts}; a stream's timestamps must "
                                 "increase (DGS Def. 3.3)", where)
            waiting.add((stream, item.ts))
            tag = program.tag(item.payload)
            held.append(Released((item.ts, stream), tag, stream, item.payload, topo.worker_of(tag, stream)))
    for stream, top in highest.items():
        mark = top if allowed_lateness == 0 else top - allowed_lateness - 1
        if stream not in timers or mark > timers[stream][0]:
            timers[stream] = (mark, stream)
    taken = [e for e in held if e.key <= timers[e.stream]]
    buffered = list(mailbox.buffered) + sorted(taken, key=lambda e: e.key)
    released, kept = _release(program, topo, timers, buffered)
    mailbox.timers, mailbox.buffered, mailbox.highest, mailbox.late = timers, kept, highest, counts
    mailbox.held = sorted((e for e in held if e.key > timers[e.stream]), key=lambda e: e.key)
    late.sort(key=lambda entry: (items[entry.index][1].ts, items[entry.index][0]))
    return released, late


def receive(program: Program, topo: Topology, mailbox: Mailbox, items: Sequence[tuple[str, Item]],
            where: str) -> list[Released]:
    """Receive one micro-batch's items of a job in stream order and return the events released
    now, in key order (module docstring): :func:`take` with no lateness allowed, refusing a
    late item. ``mailbox`` is updated in place; on InputError it is unchanged."""
    trial = Mailbox(mailbox.timers, mailbox.buffered, mailbox.held, mailbox.highest, mailbox.late)
    released, late = take(program, topo, trial, items, 0, where)
    if late:
        stream, item = items[late[0].index]
        raise InputError(f"stream {stream!r}: timestamp {item.ts} is not after the stream's previous item "
                         f"(ts {late[0].watermark}); a stream's timestamps must increase (DGS Def. 3.3)", where)
    mailbox.timers, mailbox.buffered, mailbox.held = trial.timers, trial.buffered, trial.held
    mailbox.highest, mailbox.late = trial.highest, trial.late
    return released


def split_rows(rows: Sequence[Any], jobs: int, batch_id: int) -> tuple[list[list[tuple[str, Item]]], list[list[str]]]:
    """A micro-batch's rows (JSON texts or item dicts of a struct column,
    :mod:`spark_impl.dgs.streaming_rows`), per job: ``[(stream, item), ...]`` and the rows as
    texts, in the same order (an item dict as its JSON text: what a late sink receives)."""
    grouped: list[list[tuple[str, Item]]] = [[] for _ in range(jobs)]
    texts: list[list[str]] = [[] for _ in range(jobs)]
    for number, text in enumerate(rows):
        if not isinstance(text, (str, dict)):
            raise InputError(f"expected a JSON text or an item, got {type(text).__name__}",
                             f"batch {batch_id}, row {number}")
        job, stream, item = parse_row(text, jobs, f"batch {batch_id}, row {number}")
        grouped[job].append((stream, item))
        texts[job].append(text if isinstance(text, str) else json.dumps(text, default=str, sort_keys=True))
    return grouped, texts


def group_rows(rows: Sequence[Any], jobs: int, batch_id: int) -> list[list[tuple[str, Item]]]:
    """A micro-batch's rows (JSON texts or item dicts), per job: ``[(stream, item), ...]``."""
    return split_rows(rows, jobs, batch_id)[0]
