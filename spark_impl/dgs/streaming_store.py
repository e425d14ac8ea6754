"""The checkpoint of a live DGS query (``state_dir``, by default ``<checkpoint>/dgs/``): what
survives a driver kill, on a local disk or any filesystem :mod:`spark_impl.store` opens (S3,
GCS, HDFS, ``file://``), with no rename.

Layout (storage the driver and every executor see; a location as :class:`spark_impl.store.Store`
reads it)::

    commits/<seq>.rec        the commit records (spark_impl.records.RecordLog: write-once,
                             numbered, checksummed; the two newest kept): Commit
    states/<name>/p<i>.pkl   leaf states of partition i ({(job, leaf): state}), written by
                             tasks (framed, checksummed pickles: spark_impl.records)
    records/b<id>/*.pkl      what batch <id>'s tasks emitted: (job, "out", output) and
                             (job, "processed", (worker, key, payload)) (spark_impl.sink parts)

A micro-batch ``b`` writes ``states/b<b>`` and ``records/b<b>`` first, then a commit record
naming them with the jobs' mailboxes; a kill before that leaves the previous commit, and the
replayed batch rewrites both prefixes from scratch. After the commit the outputs are delivered
to the sink under batch id ``b`` and a record with ``delivered`` is appended; a kill in between
makes the restarted query deliver ``b`` again under the same id (the sinks are idempotent by
batch id, spark_impl.reconfig.sinks). The newest commit record must verify: an altered one is
refused (:class:`~spark_impl.records.CorruptStateError`), never skipped for an older one; a
torn one (a kill mid-commit where writes are not atomic) is a commit that never happened, and
the previous record is read (:mod:`spark_impl.records`).

A commit record is JSON: ``layout`` (:data:`LAYOUT`), ``batch``, ``states``, ``delivered``,
``jobs`` (``[target, plan JSON, inline_below]``) and ``mailboxes``, the jobs' mailboxes pickled
and base64-encoded (they hold the user's events and tags, of any type). Layout 2 mailboxes hold
the events waiting for reordering, each stream's highest timestamp and late counts (bounded
out-of-orderness, :mod:`spark_impl.dgs.streaming_input`); a record without ``layout`` is of
layout 1 and is read as one (nothing held, nothing late: :meth:`Mailbox.__setstate__
<spark_impl.dgs.streaming_input.Mailbox.__setstate__>`); a newer layout is refused with one line.

Retention: after a delivery every states prefix but the committed one is deleted, and the
records of delivered batches unless ``keep_records`` (the conformance suite reads the trace).
A checkpoint of layout version 1 (``commit.pkl`` rewritten in place; this module writes
version 2, the record logs) is refused
(:func:`check_layout`): resuming it from scratch would skip the input Spark already consumed.
"""

from __future__ import annotations

import base64
import pickle
from dataclasses import dataclass, field
from typing import Any, Iterator

from spec.errors import InputError

from spark_impl.dgs.streaming_input import Mailbox
from spark_impl.dgs.tasks import PartitionStates
from spark_impl.records import RecordLog, read_pickle_record, write_pickle_record
from spark_impl.sink import read_parts
from spark_impl.store import display, join, open_store
from spark_impl.store import Store as Location

INITIAL = "init"
"""The states prefix of the initial states (``init()`` forked to the leaves)."""

COMMITS = "commits"
KEEP = 2

LAYOUT = 2
"""The commit record layout this version writes (module docstring); it reads 1 and 2."""


@dataclass
class Commit:
    """The last committed micro-batch (``-1``: none yet), its states prefix, the mailboxes,
    the last batch delivered to the sink, and the jobs (``(target, plan JSON, inline_below)``,
    checked on restart)."""

    jobs: list[tuple[str, Any, int]]
    batch: int = -1
    states: str = INITIAL
    mailboxes: list[Mailbox] = field(default_factory=list)
    delivered: int = -1

    def to_json(self) -> dict[str, Any]:
        """The record's JSON (module docstring)."""
        return {"layout": LAYOUT, "batch": self.batch, "states": self.states, "delivered": self.delivered,
                "jobs": [list(job) for job in self.jobs],
                "mailboxes": base64.b64encode(pickle.dumps(self.mailboxes)).decode("ascii")}

    @staticmethod
    def from_json(raw: dict[str, Any]) -> "Commit":
        """Inverse of :meth:`to_json` (layouts 1 and 2); InputError for a newer layout."""
        layout = raw.get("layout", 1)
        if layout not in (1, LAYOUT):
            raise InputError(f"a live DGS commit record of layout {layout!r}: this version reads layouts 1 and "
                             f"{LAYOUT}; resume it with the version that wrote it", "checkpoint_dir")
        mailboxes = pickle.loads(base64.b64decode(raw["mailboxes"]))
        return Commit([(str(t), plan, int(i)) for t, plan, i in raw["jobs"]], int(raw["batch"]), str(raw["states"]),
                      mailboxes, int(raw["delivered"]))


class Store:
    """One query's DGS checkpoint at ``root`` (a local path or a URI). The commit log
    remembers its newest record, so a running query lists nothing per commit."""

    def __init__(self, root: str) -> None:
        self.location: Location = open_store(root)
        self.root = self.location.location
        self.log = RecordLog(self.location, COMMITS)

    def __repr__(self) -> str:
        return f"DgsStore({display(self.root)!r})"

    def read(self) -> Commit | None:
        """The committed state (newest record on the store), None before the first commit."""
        self.log.last = None  # another driver may have written since: look at the store
        found = self.log.latest()
        return None if found is None else Commit.from_json(found[1])

    def write(self, commit: Commit) -> None:
        """Commit: append a record (write-once; the older ones but the newest :data:`KEEP`
        are deleted)."""
        if self.log.last is None:
            self.location.make_root()
        self.log.append(commit.to_json(), keep=KEEP)

    def states_dir(self, name: str) -> str:
        """Location of the leaf states named ``name``."""
        return join(self.root, "states", name)

    def records_dir(self, batch: int) -> str:
        """Location of micro-batch ``batch``'s task records."""
        return join(self.root, "records", f"b{batch:012d}")

    def fresh(self, location: str) -> str:
        """``location`` emptied (a replayed batch starts from scratch) and created."""
        where = open_store(location)
        where.delete("")
        if where.local:  # task parts are written beside a temporary file (spark_impl.sink)
            where.make_root()
        return location

    def records(self, up_to: int) -> Iterator[tuple[int, list[Any]]]:
        """``(batch, records)`` of every batch ``<= up_to`` still stored, in batch order."""
        for entry in self.location.list("records"):
            batch = int(entry[1:])
            if batch <= up_to:
                for _, records in read_parts(join(self.root, "records", entry)):
                    yield batch, records

    def prune(self, commit: Commit, keep_records: bool) -> None:
        """Retention (module docstring)."""
        for entry in self.location.list("states"):
            if entry != commit.states:
                self.location.delete(f"states/{entry}")
        if keep_records:
            return
        for entry in self.location.list("records"):
            if int(entry[1:]) <= commit.delivered:
                self.location.delete(f"records/{entry}")


def check_layout(root: str) -> None:
    """Refuse a checkpoint of layout version 1 (module docstring)."""
    where = open_store(root)
    if where.exists("commit.pkl") and not where.list(COMMITS):
        raise InputError(f"{display(root)} holds a live DGS checkpoint of an older layout (commit.pkl); "
                         "this version cannot resume it: finish it with the version that wrote it, or start "
                         "on a new checkpoint directory", "checkpoint_dir")


def save_states(location: str) -> Any:
    """Task function: write partition ``i``'s states to ``<location>/p<i>.pkl``; yields 1."""
    def task(index: int, parts: Iterator[PartitionStates]) -> Iterator[int]:
        where = open_store(location)
        for states in parts:
            write_pickle_record(where, f"p{index:05d}.pkl", states)
            yield 1
    return task


def load_states(location: str) -> Any:
    """Task function over ``parallelize(range(P), P)``: partition ``i``'s saved states."""
    def task(parts: Iterator[int]) -> Iterator[PartitionStates]:
        where = open_store(location)
        for index in parts:
            name = f"p{index:05d}.pkl"
            states: PartitionStates | None = read_pickle_record(where, name)
            if states is None:
                raise FileNotFoundError(f"missing DGS state file {display(where.path(name))}")
            yield states
    return task
