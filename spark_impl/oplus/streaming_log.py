"""The durable checkpoint of a live O+ query: commit records, requests, state and outputs, on a
local disk or any filesystem ``pyarrow.fs`` opens (S3, GCS, HDFS, ``file://``), without rename.

Everything goes through :class:`spark_impl.store.Store` (write-once objects; locally a
temporary file + ``os.replace``, on an object store one PUT) and :mod:`spark_impl.records`
(framed, checksummed, sequence-numbered records; the newest must verify). Layout under the
query's state location (``<checkpoint_dir>/oplus``)::

    commits/<b:020d>.rec        the commit record of micro-batch b (framed JSON, written once)
    requests/<id:020d>.rec      one accepted rescale request (framed JSON, written once)
    delivered/<seq:020d>.rec    {"batch": b}: the last batch id delivered to the sink
    state/b<b:012d>/p<j:05d>.pkl   instance j's key states after batch b (framed pickle;
                                   absent = no keys)
    out/b<b:012d>/p<j:05d>.pkl     instance j's outputs of batch b (until delivered)

**Commit protocol of batch b** (``spark_impl.oplus.streaming``): the tasks write
``state/b<b>`` and ``out/b<b>`` (a re-executed task rewrites the same objects, whole), then
the driver writes ``commits/<b>.rec`` - the commit point - then delivers ``out/b<b>`` to the
sink under batch id ``b`` and appends a ``delivered`` record. After a crash, a batch without a
commit record is re-run from the previous commit's state (Structured Streaming replays it with
the same offsets, so it rewrites the same objects); a committed batch is never re-run, only
re-delivered if the ``delivered`` log is behind (the sink is idempotent by batch id). An altered
newest record or a damaged part is refused (``CorruptStateError``), never skipped; a torn newest
record (a crash mid-commit where writes are not atomic) is a commit that never happened
(``spark_impl.records``): the batch is replayed and its record is set aside.

**Bounded storage** (:meth:`Log.prune`, and the request compaction of
``spark_impl.oplus.streaming``): after each batch, commit records older than the last ``keep``
(and not waiting for delivery), state of versions no retained commit names, the outputs of
delivered batches and all but the last two ``delivered`` records are deleted; a commit record
is O(jobs + sources + pending requests) with a fixed-length history window. On a steady
stream the location holds O(state), flat however many batches and rescales run.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field
from typing import Any

from spec.errors import InputError

from spark_impl.records import RecordLog, TornRecordError, read_pickle_record, write_json_record, write_pickle_record
from spark_impl.store import Store, is_uri, join, open_store

def encode_time(value: float) -> Any:
    """A watermark or bound as JSON: an int, ``None`` for -inf, ``"inf"`` for +inf."""
    if value == math.inf:
        return "inf"
    if value == -math.inf:
        return None
    return int(value)


def decode_time(value: Any) -> float:
    """The inverse of :func:`encode_time` (a finite time stays an exact ``int``: a float would
    round event times above 2**53, and the scenario format allows up to 2**62)."""
    if value == "inf":
        return math.inf
    return -math.inf if value is None else int(value)


COMMIT_LAYOUT = 2
"""The commit record's layout version: 2 added ``lateness`` (allowed lateness per job; the
``bounds`` are event times minus it). Layout 1 records are read (lateness 0)."""


@dataclass
class Commit:
    """The record of one committed micro-batch.

    ``ran``: per job the parallelism batch ``batch`` ran with (the layout of its state files,
    ``partitions`` of them); ``parallelism``: per job the parallelism of the *next* batch
    (differs from ``ran`` right after a rescale applied at this batch's watermark).
    ``applied``: the applied request ids still kept in ``requests/`` (a restart must not apply
    them again); ``rescales``: the last few rescales (a window, ``KEEP_RESCALES``);
    ``rescaled``: per job, how many rescale requests were applied since the query started.
    ``lateness``: per job, the allowed lateness the batch ran with (its ``bounds`` are event
    times minus it, :mod:`spark_impl.lateness`); ``late`` counts every late tuple since the
    query started, whatever the policy did with it.

    The JSON form carries ``"layout":`` :data:`COMMIT_LAYOUT`; a record without it is layout 1
    (no allowed lateness: read as lateness 0), a newer layout is refused."""

    batch: int
    ran: dict[int, int]
    parallelism: dict[int, int]
    partitions: int
    bounds: dict[tuple[int, int], float] = field(default_factory=dict)
    watermark: dict[int, float] = field(default_factory=dict)
    applied: list[int] = field(default_factory=list)
    late: dict[int, int] = field(default_factory=dict)
    outputs: int = 0
    rescales: list[dict[str, Any]] = field(default_factory=list)
    rescaled: dict[int, int] = field(default_factory=dict)
    lateness: dict[int, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """The record's JSON form."""
        return {"batch": self.batch, "ran": _pairs(self.ran), "parallelism": _pairs(self.parallelism),
                "partitions": self.partitions,
                "bounds": [[j, s, encode_time(b)] for (j, s), b in sorted(self.bounds.items())],
                "watermark": [[j, encode_time(w)] for j, w in sorted(self.watermark.items())],
                "applied": self.applied, "late": _pairs(self.late), "outputs": self.outputs,
                "rescales": self.rescales, "rescaled": _pairs(self.rescaled), "layout": COMMIT_LAYOUT,
                "lateness": _pairs(self.lateness)}

    @staticmethod
    def from_json(raw: Any) -> "Commit":
        """Parse a record written by :meth:`to_json` (layout 1 or 2; InputError on a newer one)."""
        layout = raw.get("layout", 1)
        if layout not in (1, COMMIT_LAYOUT):
            raise InputError(f"commit record of batch {raw.get('batch')} has layout {layout!r}: written by a newer "
                             f"streamproof (this one reads layouts 1-{COMMIT_LAYOUT}); resume it with that version",
                             "checkpoint_dir")
        return Commit(int(raw["batch"]), _dict(raw["ran"]), _dict(raw["parallelism"]), int(raw["partitions"]),
                      {(int(j), int(s)): decode_time(b) for j, s, b in raw["bounds"]},
                      {int(j): decode_time(w) for j, w in raw["watermark"]},
                      [int(r) for r in raw["applied"]], _dict(raw["late"]), int(raw["outputs"]),
                      list(raw["rescales"]), _dict(raw.get("rescaled", [])), _dict(raw.get("lateness", [])))


def _pairs(table: dict[int, int]) -> list[list[int]]:
    return [[k, v] for k, v in sorted(table.items())]


def _dict(pairs: Any) -> dict[int, int]:
    return {int(k): int(v) for k, v in pairs}


def state_location(checkpoint_dir: str) -> str:
    """Where a query's O+ objects go: ``<checkpoint_dir>/oplus`` (a local path is made absolute)."""
    return join(checkpoint_dir if is_uri(checkpoint_dir) else os.path.abspath(checkpoint_dir), "oplus")


class Log:
    """The records and parts of one query's state location (module docstring)."""

    def __init__(self, checkpoint_dir: str) -> None:
        self.location = state_location(checkpoint_dir)
        self.store: Store = open_store(self.location)
        self.store.make_root()
        self.commits = RecordLog(self.store, "commits")
        self.request_log = RecordLog(self.store, "requests")
        self.deliveries = RecordLog(self.store, "delivered")

    def check_layout(self) -> None:
        """Refuse a checkpoint of layout version 1 (``commits/<b>.json``,
        ``requests.json``; this module writes version 2, the record logs): resuming it would restart the O+ state from scratch while
        Structured Streaming's offsets continue (outputs lost)."""
        old = [n for n in self.store.list("commits") if n.endswith(".json")]
        if old or self.store.exists("requests.json") or self.store.exists("delivered.json"):
            raise InputError(f"{self.store!r} was written by an older streamproof (commits/*.json, "
                             "requests.json); finish it with that version or start on an empty directory",
                             "checkpoint_dir")

    def committed(self) -> list[int]:
        """The batch ids with a commit record, ascending."""
        return self.commits.sequences()

    def commit(self, batch: int) -> Commit:
        """The record of a committed batch (CorruptStateError if damaged, KeyError if absent)."""
        raw = self.commits.read(batch)
        if raw is None:
            raise KeyError(f"no commit record of batch {batch}")
        return Commit.from_json(raw)

    def latest(self) -> Commit | None:
        """The last committed batch's record (None before the first commit)."""
        found = self.commits.latest()
        return None if found is None else Commit.from_json(found[1])

    def write_commit(self, record: Commit) -> None:
        """The commit point of a batch (one write-once record named by the batch id). A torn
        record :meth:`latest` skipped (a crash mid-commit, ``spark_impl.records``) is set aside
        first: the replayed batch commits under its own id again."""
        self.commits.set_aside_torn()
        write_json_record(self.store, self.commits.name(record.batch), record.to_json())

    def requests(self) -> list[dict[str, Any]]:
        """The rescale requests kept (``id, job, parallelism, watermark``), by id."""
        found: list[dict[str, Any]] = []
        idents = self.request_log.sequences()
        for ident in idents:
            try:
                raw = self.request_log.read(ident)
            except TornRecordError:
                if ident != idents[-1]:
                    raise
                # a driver killed while it wrote this request (rescale() never returned, or it is
                # still being written): not a request yet; the next add_request sets it aside
                continue
            if raw is not None:  # deleted between the listing and the read
                found.append({"id": ident, **raw})
        return found

    def add_request(self, job: int, parallelism: int, watermark: int | None) -> int:
        """Write a new request (durable on return); its id follows every id ever issued (the
        newest request is never deleted, :meth:`drop_requests`). The caller holds the lock."""
        return self.request_log.append({"job": job, "parallelism": parallelism, "watermark": watermark})

    def drop_requests(self, idents: list[int]) -> None:
        """Delete applied requests (never the newest: the next id follows it)."""
        newest = max(self.request_log.sequences(), default=0)
        for ident in idents:
            if ident != newest:
                self.store.delete(self.request_log.name(ident))

    def delivered(self) -> int:
        """The last batch id delivered to the sink (-1: none)."""
        found = self.deliveries.latest()
        return -1 if found is None else int(found[1]["batch"])

    def mark_delivered(self, batch: int) -> None:
        """Record a delivery (after the sink has it); two records are kept."""
        self.deliveries.append({"batch": batch}, keep=2)

    def prune(self, keep: int = 2) -> None:
        """Delete what no restart, replay or delivery needs (module docstring)."""
        batches = self.committed()
        delivered = self.delivered()
        kept = set(batches[-keep:]) | {b for b in batches if b > delivered}
        for old in batches:
            if old not in kept:
                self.store.delete(self.commits.name(old))
        latest = batches[-1] if batches else -1
        for sub in ("state", "out"):
            for name in self.store.list(sub):
                b = int(name[1:]) if name.startswith("b") and name[1:].isdigit() else None
                needed = b is None or (b in kept or b > latest if sub == "state" else b > delivered)
                if not needed:
                    self.store.delete(f"{sub}/{name}")


def part_name(kind: str, batch: int, index: int) -> str:
    """The object of instance ``index``'s part ``kind`` (``state`` or ``out``) of ``batch``."""
    return f"{kind}/b{batch:012d}/p{index:05d}.pkl"


def write_part(location: str, kind: str, batch: int, index: int, value: list[Any]) -> None:
    """Write a part (framed pickle, whole or not at all); nothing when ``value`` is empty. A
    re-executed task rewrites the same object with the same content."""
    if value:
        write_pickle_record(open_store(location), part_name(kind, batch, index), value)


def load_part(location: str, kind: str, batch: int, index: int) -> Any:
    """A part written by :func:`write_part` (None if absent; CorruptStateError if damaged)."""
    return read_pickle_record(open_store(location), part_name(kind, batch, index))
