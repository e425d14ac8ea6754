"""The checkpoint of a live DGS query (``<checkpoint>/dgs/``): what survives a driver kill.

Layout (storage the driver and every executor see)::

    commit.pkl               the commit point (written atomically, last): Commit
    states/<name>/p<i>.pkl   leaf states of partition i ({(job, leaf): state}), written by tasks
    records/b<id>/*.pkl      what batch <id>'s tasks emitted: (job, "out", output) and
                             (job, "processed", (worker, key, payload)) (spark_impl.sink parts)

A micro-batch ``b`` writes ``states/b<b>`` and ``records/b<b>`` first, then ``commit.pkl``
naming them with the jobs' mailboxes; a kill before that leaves the previous commit, and the
replayed batch rewrites both directories from scratch. After the commit the outputs are
delivered to the sink under batch id ``b`` and ``delivered`` is recorded; a kill in between
makes the restarted query deliver ``b`` again under the same id (the sinks are idempotent by
batch id, spark_impl.reconfig.sinks).

Retention: after a delivery every states directory but the committed one is deleted, and the
records of delivered batches unless ``keep_records`` (the conformance suite reads the trace).
"""

from __future__ import annotations

import os
import pickle
import shutil
from dataclasses import dataclass, field
from typing import Any, Iterator

from spark_impl.dgs.streaming_input import Mailbox
from spark_impl.dgs.tasks import PartitionStates
from spark_impl.sink import read_parts, write_part

INITIAL = "init"
"""The states directory of the initial states (``init()`` forked to the leaves)."""


@dataclass
class Commit:
    """The last committed micro-batch (``-1``: none yet), its states directory, the mailboxes,
    the last batch delivered to the sink, and the jobs (``(target, plan JSON, inline_below)``,
    checked on restart)."""

    jobs: list[tuple[str, Any, int]]
    batch: int = -1
    states: str = INITIAL
    mailboxes: list[Mailbox] = field(default_factory=list)
    delivered: int = -1


@dataclass(frozen=True)
class Store:
    """Paths of one query's DGS checkpoint."""

    root: str

    def commit_path(self) -> str:
        """``commit.pkl``."""
        return os.path.join(self.root, "commit.pkl")

    def read(self) -> Commit | None:
        """The committed state, None before the first commit."""
        try:
            with open(self.commit_path(), "rb") as handle:
                (commit,) = pickle.load(handle)
        except FileNotFoundError:
            return None
        assert isinstance(commit, Commit)
        return commit

    def write(self, commit: Commit) -> None:
        """Replace the commit point atomically."""
        os.makedirs(self.root, exist_ok=True)
        write_part(self.root, "commit", [commit])

    def states_dir(self, name: str) -> str:
        """Directory of the leaf states named ``name``."""
        return os.path.join(self.root, "states", name)

    def records_dir(self, batch: int) -> str:
        """Directory of micro-batch ``batch``'s task records."""
        return os.path.join(self.root, "records", f"b{batch:012d}")

    def fresh(self, path: str) -> str:
        """``path`` emptied (a replayed batch starts from scratch) and created."""
        shutil.rmtree(path, ignore_errors=True)
        os.makedirs(path)
        return path

    def records(self, up_to: int) -> Iterator[tuple[int, list[Any]]]:
        """``(batch, records)`` of every batch ``<= up_to`` still on disk, in batch order."""
        base = os.path.join(self.root, "records")
        if not os.path.isdir(base):
            return
        for entry in sorted(os.listdir(base)):
            batch = int(entry[1:])
            if batch <= up_to:
                for _, records in read_parts(os.path.join(base, entry)):
                    yield batch, records

    def prune(self, commit: Commit, keep_records: bool) -> None:
        """Retention (module docstring)."""
        states = os.path.join(self.root, "states")
        for entry in os.listdir(states) if os.path.isdir(states) else []:
            if entry != commit.states:
                shutil.rmtree(os.path.join(states, entry), ignore_errors=True)
        records = os.path.join(self.root, "records")
        if keep_records or not os.path.isdir(records):
            return
        for entry in os.listdir(records):
            if int(entry[1:]) <= commit.delivered:
                shutil.rmtree(os.path.join(records, entry), ignore_errors=True)


def save_states(directory: str) -> Any:
    """Task function: write partition ``i``'s states to ``directory/p<i>.pkl``; yields 1."""
    def task(index: int, parts: Iterator[PartitionStates]) -> Iterator[int]:
        for states in parts:
            write_part(directory, f"p{index:05d}", [states])
            yield 1
    return task


def load_states(directory: str) -> Any:
    """Task function over ``parallelize(range(P), P)``: partition ``i``'s saved states."""
    def task(parts: Iterator[int]) -> Iterator[PartitionStates]:
        for index in parts:
            with open(os.path.join(directory, f"p{index:05d}.pkl"), "rb") as handle:
                (states,) = pickle.load(handle)
            yield states
    return task
