"""The durable checkpoint of a live O+ query: commit records, requests, state and outputs.

Layout under ``checkpoint_dir`` (storage the driver and every executor see)::

    query/                 Structured Streaming's own checkpoint (input offsets, its commits)
    oplus/commits/<b>.json one record per committed micro-batch b (written once, atomically)
    oplus/state/b<b>/p<j>.pkl   instance j's key states after batch b (absent = no keys)
    oplus/out/b<b>/p<j>.pkl     instance j's outputs of batch b (until delivered)
    oplus/requests.json    every rescale request ever accepted (append, atomic rewrite)
    oplus/delivered.json   the last batch id delivered to the sink

**Commit protocol of batch b** (``spark_impl.oplus.streaming``): the tasks write
``state/b<b>`` and ``out/b<b>`` (a re-executed task rewrites the same files), then the driver
writes ``commits/<b>.json`` - the commit point - then delivers ``out/b<b>`` to the sink under
batch id ``b`` and writes ``delivered.json``. After a crash, a batch without a commit record
is re-run from the previous commit's state (Structured Streaming replays it with the same
offsets, so it rewrites the same files); a committed batch is never re-run, only
re-delivered if ``delivered.json`` is behind (the sink is idempotent by batch id).

**Bounded storage** (:func:`prune`): after each batch, commit records older than the last
``keep`` (and not waiting for delivery), state of versions no retained commit names, and the
outputs of delivered batches are deleted, so the directory holds O(state) on a steady stream.
"""

from __future__ import annotations

import math
import os
import pickle
import shutil
from dataclasses import dataclass, field
from typing import Any

from spec.jsonio import load_json, write_json_atomic


def encode_time(value: float) -> Any:
    """A watermark or bound as JSON: an int, ``None`` for -inf, ``"inf"`` for +inf."""
    if value == math.inf:
        return "inf"
    if value == -math.inf:
        return None
    return int(value)


def decode_time(value: Any) -> float:
    """The inverse of :func:`encode_time`."""
    if value == "inf":
        return math.inf
    return -math.inf if value is None else float(value)


@dataclass
class Commit:
    """The record of one committed micro-batch.

    ``ran``: per job the parallelism batch ``batch`` ran with (the layout of its state files,
    ``partitions`` of them); ``parallelism``: per job the parallelism of the *next* batch
    (differs from ``ran`` right after a rescale applied at this batch's watermark)."""

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

    def to_json(self) -> dict[str, Any]:
        """The record's JSON form."""
        return {"batch": self.batch, "ran": _pairs(self.ran), "parallelism": _pairs(self.parallelism),
                "partitions": self.partitions,
                "bounds": [[j, s, encode_time(b)] for (j, s), b in sorted(self.bounds.items())],
                "watermark": [[j, encode_time(w)] for j, w in sorted(self.watermark.items())],
                "applied": self.applied, "late": _pairs(self.late), "outputs": self.outputs,
                "rescales": self.rescales}

    @staticmethod
    def from_json(raw: Any) -> "Commit":
        """Parse a record written by :meth:`to_json`."""
        return Commit(int(raw["batch"]), _dict(raw["ran"]), _dict(raw["parallelism"]), int(raw["partitions"]),
                      {(int(j), int(s)): decode_time(b) for j, s, b in raw["bounds"]},
                      {int(j): decode_time(w) for j, w in raw["watermark"]},
                      [int(r) for r in raw["applied"]], _dict(raw["late"]), int(raw["outputs"]),
                      list(raw["rescales"]))


def _pairs(table: dict[int, int]) -> list[list[int]]:
    return [[k, v] for k, v in sorted(table.items())]


def _dict(pairs: Any) -> dict[int, int]:
    return {int(k): int(v) for k, v in pairs}


class Log:
    """Paths and records of one query's ``oplus/`` directory (module docstring)."""

    def __init__(self, checkpoint_dir: str) -> None:
        self.root = os.path.join(os.path.abspath(checkpoint_dir), "oplus")
        for sub in ("commits", "state", "out"):
            os.makedirs(os.path.join(self.root, sub), exist_ok=True)

    def state_dir(self, batch: int) -> str:
        """Where batch ``batch``'s tasks write the key states."""
        return os.path.join(self.root, "state", f"b{batch:012d}")

    def out_dir(self, batch: int) -> str:
        """Where batch ``batch``'s tasks write their outputs."""
        return os.path.join(self.root, "out", f"b{batch:012d}")

    def committed(self) -> list[int]:
        """The batch ids with a commit record, ascending."""
        return sorted(int(n[:-5]) for n in os.listdir(os.path.join(self.root, "commits")) if n.endswith(".json"))

    def commit(self, batch: int) -> Commit:
        """The record of a committed batch."""
        return Commit.from_json(load_json(self._commit_path(batch)))

    def latest(self) -> Commit | None:
        """The last committed batch's record (None before the first commit)."""
        batches = self.committed()
        return self.commit(batches[-1]) if batches else None

    def write_commit(self, record: Commit) -> None:
        """The commit point of a batch."""
        write_json_atomic(self._commit_path(record.batch), record.to_json(), indent=None)

    def _commit_path(self, batch: int) -> str:
        return os.path.join(self.root, "commits", f"{batch:012d}.json")

    def requests(self) -> list[dict[str, Any]]:
        """Every rescale request accepted so far (``id, job, parallelism, watermark``)."""
        path = os.path.join(self.root, "requests.json")
        return list(load_json(path)["requests"]) if os.path.exists(path) else []

    def write_requests(self, requests: list[dict[str, Any]]) -> None:
        """Rewrite the request list atomically (the caller holds the query's lock)."""
        write_json_atomic(os.path.join(self.root, "requests.json"), {"requests": requests}, indent=None)

    def delivered(self) -> int:
        """The last batch id delivered to the sink (-1: none)."""
        path = os.path.join(self.root, "delivered.json")
        return int(load_json(path)["batch"]) if os.path.exists(path) else -1

    def mark_delivered(self, batch: int) -> None:
        """Record a delivery (after the sink has it)."""
        write_json_atomic(os.path.join(self.root, "delivered.json"), {"batch": batch}, indent=None)

    def prune(self, keep: int = 2) -> None:
        """Delete what no restart, replay or delivery needs (module docstring)."""
        batches = self.committed()
        delivered = self.delivered()
        kept = set(batches[-keep:]) | {b for b in batches if b > delivered}
        for old in batches:
            if old not in kept:
                os.unlink(self._commit_path(old))
        latest = batches[-1] if batches else -1
        for sub in ("state", "out"):
            base = os.path.join(self.root, sub)
            for name in os.listdir(base):
                b = int(name[1:]) if name.startswith("b") else None
                needed = b is None or (b in kept or b > latest if sub == "state" else b > delivered)
                if not needed:
                    shutil.rmtree(os.path.join(base, name), ignore_errors=True)


def load_part(directory: str, index: int) -> Any:
    """The pickled part ``p<index>`` of a state or output directory (None if absent; written
    by :func:`spark_impl.sink.write_part`)."""
    path = os.path.join(directory, f"p{index:05d}.pkl")
    if not os.path.exists(path):
        return None
    with open(path, "rb") as handle:
        return pickle.load(handle)


def part_name(index: int) -> str:
    """The name :func:`load_part` reads for instance ``index``."""
    return f"p{index:05d}"
