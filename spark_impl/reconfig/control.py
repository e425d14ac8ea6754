"""The fast-control-message (FCM, Fries Def. 4.1) channel: a small control store on the
checkpoint's durable storage that running tasks poll.

The driver (the controller) appends a record to the control log ``control/<seq>.rec``
(:class:`spark_impl.records.RecordLog`: write-once, checksummed, no rename) whenever a request
is made, re-made after a restart, or completes; each record holds every active request. A
batch's plan names the newest record when the batch was planned; a task reads it when it
starts, then checks whether the *next* record exists at most every ``Store.poll_s`` seconds
(1 ms locally - one ``stat`` -, 20 ms on an object store - one HEAD request) *between two
tuples* and reads it when it appears, so a control message reaches a task that is already
running, without waiting for the micro-batch to end - the same on ``local[*]`` and on a
cluster, as long as ``checkpoint_dir`` is storage every executor sees (a shared file system,
HDFS, or an object store through its URI). A torn or altered record is refused
(:class:`~spark_impl.records.CorruptStateError`); on HDFS and ``file://``, where a record is
visible while the driver writes it, a truncated one is read again for up to ``SETTLE_S``
seconds first.

Each entry says: scenario/job index ``s``, request number ``j`` (1-based), ``attempt`` (bumped
when the request is made again after a restart), ``issued`` (wall-clock seconds), the
scheduler, ``epoch_batch`` (epoch scheduler: the first batch that runs the new
configuration) and the FCM delivery-delay hook ``fcm`` = [lo, hi] ms with ``seed``: the
message to object ``o`` becomes visible at ``issued + delay(o)``, ``delay`` a seeded
deterministic draw (the test hook of control-message delays).
"""

from __future__ import annotations

import random
import time
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

from spark_impl.records import CorruptStateError, RecordLog
from spark_impl.store import open_store

CONTROL = "control"
SETTLE_S = 2.0
"""How long a task re-reads a control record it finds truncated (a write still in progress on
a filesystem without whole-object visibility) before it refuses it."""


@dataclass(frozen=True)
class ControlEntry:
    """One request as the tasks see it (see the module docstring)."""

    s: int
    j: int
    attempt: int
    issued: float
    epoch_batch: int
    fcm_lo: float
    fcm_hi: float
    seed: int

    def delay_s(self, obj: str) -> float:
        """Deterministic delivery delay (seconds) of this FCM to object ``obj``."""
        if self.fcm_hi <= 0:
            return 0.0
        rng = random.Random(zlib.crc32(f"{self.seed}/{self.s}/{self.j}/{self.attempt}/{obj}".encode()))
        return rng.uniform(self.fcm_lo, self.fcm_hi) / 1000.0

    def visible_to(self, obj: str, now: float) -> bool:
        """Has the FCM reached ``obj`` by wall-clock time ``now``?"""
        return now >= self.issued + self.delay_s(obj)

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        return {"s": self.s, "j": self.j, "attempt": self.attempt, "issued": self.issued,
                "epoch_batch": self.epoch_batch, "fcm": [self.fcm_lo, self.fcm_hi], "seed": self.seed}

    @staticmethod
    def from_json(raw: dict[str, Any]) -> "ControlEntry":
        """Inverse of :meth:`to_json`."""
        return ControlEntry(int(raw["s"]), int(raw["j"]), int(raw["attempt"]), float(raw["issued"]),
                            int(raw["epoch_batch"]), float(raw["fcm"][0]), float(raw["fcm"][1]), int(raw["seed"]))


def control_log(directory: str) -> RecordLog:
    """The control log of a checkpoint directory (a fresh view: the driver keeps its own)."""
    return RecordLog(open_store(directory), CONTROL)


def write_control(log: RecordLog, entries: Sequence[ControlEntry]) -> int:
    """Driver side: publish the active requests (the next record; the two newest are kept).
    Returns the record's sequence number."""
    return log.append({"requests": [e.to_json() for e in entries]}, keep=2)


class ControlReader:
    """Task side: a view of the control log, refreshed by :meth:`poll`."""

    def __init__(self, directory: str) -> None:
        self.log = control_log(directory)
        self.poll_s = self.log.store.poll_s
        self.seq = -1
        self._checked = 0.0
        self.by_scenario: dict[int, ControlEntry] = {}

    def start(self, seq: int) -> None:
        """Read record ``seq`` (the batch plan's), or the newest if the driver has already
        pruned it (it wrote two newer ones meanwhile)."""
        raw = self.log.read(seq) if seq > 0 else None
        if raw is None and seq > 0:
            found = self.log.latest()
            seq, raw = found if found is not None else (0, None)
        self._view(seq, raw)

    def _view(self, seq: int, raw: Any) -> None:
        self.seq = seq
        self._checked = time.monotonic()
        self.by_scenario = {} if raw is None else {
            e.s: e for e in (ControlEntry.from_json(r) for r in raw["requests"])}

    def poll(self, force: bool = False) -> None:
        """Read the next records if the driver wrote any (checked at most every ``poll_s``)."""
        now = time.monotonic()
        if not force and now - self._checked < self.poll_s:
            return
        self._checked = now
        while self.log.exists(self.seq + 1):
            raw = self._read_settled(self.seq + 1)
            if raw is None:  # pruned between the two calls: newer records exist
                self.start(self.seq + 2)
                return
            self._view(self.seq + 1, raw)
        if force and (self.log.exists(self.seq + 2) or self.seq > 0 and not self.log.exists(self.seq)):
            # the driver wrote three records since this view (keep=2 pruned seq + 1): the next
            # record is gone for good, so read the newest (a member that missed a request would
            # process its new-version tuples with the old logic). Pruning deletes the oldest
            # first, so seq + 1 is gone when seq is; a view of no record (seq 0) sees it by
            # record 2 (four records in between would still leave it behind until its next task)
            self.start(self.seq + 1)

    def _read_settled(self, seq: int) -> Any:
        """Record ``seq``, which has just appeared. On HDFS and ``file://`` an object is visible
        while it is written, so a *truncated* record is read again for up to ``SETTLE_S``
        seconds before it is refused; any other damage is refused at once."""
        deadline = time.monotonic() + SETTLE_S
        while True:
            try:
                return self.log.read(seq)
            except CorruptStateError as error:
                if not error.why.startswith("truncated") or time.monotonic() > deadline:
                    raise
                time.sleep(0.005)

    def entry(self, s: int) -> ControlEntry | None:
        """The active request of scenario/job ``s``, if any."""
        return self.by_scenario.get(s)
