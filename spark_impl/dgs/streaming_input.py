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
of its latest item) and the events received but not yet released. A micro-batch's items of a
stream are taken in timestamp order; they must come after the stream's timer (Def. 3.3: a
stream's timestamps increase strictly), else the batch is refused (InputError naming the
stream). Then :func:`spark_impl.dgs.release._release` releases, in key order, every buffered
event no dependent earlier event can still precede; the rest waits for later items
(heartbeats) of the streams it depends on.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from spec.dgs.program import Program
from spec.dgs.streams import Heartbeat, Item, StreamEvent, value_from_json
from spec.errors import InputError
from spec.jsonio import expect_bool, expect_int, expect_object, expect_str, parse_json, reject_unknown_keys

from spark_impl.dgs.release import Key, Released, _release
from spark_impl.dgs.topology import Topology


@dataclass
class Mailbox:
    """One job's mailbox between micro-batches (picklable: it is part of the commit)."""

    timers: dict[str, Key] = field(default_factory=dict)
    buffered: list[Released] = field(default_factory=list)


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


def receive(program: Program, topo: Topology, mailbox: Mailbox, items: Sequence[tuple[str, Item]],
            where: str) -> list[Released]:
    """Receive one micro-batch's items of a job and return the events released now, in key
    order (module docstring). ``mailbox`` is updated in place; on InputError it is unchanged."""
    timers = dict(mailbox.timers)
    buffered = list(mailbox.buffered)
    for stream, item in sorted(items, key=lambda entry: (entry[1].ts, entry[0])):
        last = timers.get(stream)
        if last is not None and item.ts <= last[0]:
            raise InputError(f"stream {stream!r}: timestamp {item.ts} is not after the stream's previous item "
                             f"(ts {last[0]}); a stream's timestamps must increase (DGS Def. 3.3)", where)
        timers[stream] = (item.ts, stream)
        if isinstance(item, StreamEvent):
            tag = program.tag(item.payload)
            buffered.append(Released((item.ts, stream), tag, stream, item.payload, topo.worker_of(tag, stream)))
    released, kept = _release(program, topo, timers, buffered)
    mailbox.timers, mailbox.buffered = timers, kept
    return released


def group_rows(rows: Sequence[Any], jobs: int, batch_id: int) -> list[list[tuple[str, Item]]]:
    """A micro-batch's rows (JSON texts or item dicts), per job: ``[(stream, item), ...]``."""
    grouped: list[list[tuple[str, Item]]] = [[] for _ in range(jobs)]
    for number, text in enumerate(rows):
        if not isinstance(text, (str, dict)):
            raise InputError(f"expected a JSON text or an item, got {type(text).__name__}",
                             f"batch {batch_id}, row {number}")
        job, stream, item = parse_row(text, jobs, f"batch {batch_id}, row {number}")
        grouped[job].append((stream, item))
    return grouped
