"""The fast-control-message (FCM, Fries Def. 4.1) channel: a small control store on the
checkpoint's durable storage that running tasks poll.

The driver (the controller) rewrites one JSON file atomically (temp file + rename) whenever a
request is made, re-made after a restart, or completes. A task checks the file's
modification stamp at most every ``POLL_S`` seconds *between two tuples* and re-reads it when it
changed, so a control message reaches a task that is already running, without waiting for the
micro-batch to end - the same on ``local[*]`` and on a cluster, as long as ``checkpoint_dir``
is storage every executor sees (a shared file system or a FUSE mount of object storage).

Each entry says: scenario/job index ``s``, request number ``j`` (1-based), ``attempt`` (bumped
when the request is made again after a restart), ``issued`` (wall-clock seconds), the
scheduler, ``epoch_batch`` (epoch scheduler: the first batch that runs the new
configuration) and the FCM delivery-delay hook ``fcm`` = [lo, hi] ms with ``seed``: the
message to object ``o`` becomes visible at ``issued + delay(o)``, ``delay`` a seeded
deterministic draw (the test hook of control-message delays).
"""

from __future__ import annotations

import json
import os
import random
import time
import zlib
from dataclasses import dataclass
from typing import Any, Sequence

from spec.jsonio import write_json_atomic

POLL_S = 0.001
CONTROL_FILE = "control.json"


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


def control_path(directory: str) -> str:
    """The control store of a checkpoint directory."""
    return os.path.join(directory, CONTROL_FILE)


def write_control(directory: str, entries: Sequence[ControlEntry]) -> None:
    """Driver side: publish the active requests (atomic rewrite)."""
    write_json_atomic(control_path(directory), {"requests": [e.to_json() for e in entries]}, indent=None)


class ControlReader:
    """Task side: a cached view of the control file, refreshed by :meth:`poll`."""

    def __init__(self, directory: str) -> None:
        self.path = control_path(directory)
        self._stamp: tuple[int, int, int] | None = None
        self._checked = 0.0
        self.by_scenario: dict[int, ControlEntry] = {}

    def poll(self, force: bool = False) -> None:
        """Re-read the control file if it changed (checked at most every ``POLL_S``)."""
        now = time.monotonic()
        if not force and now - self._checked < POLL_S:
            return
        self._checked = now
        try:
            info = os.stat(self.path)
        except FileNotFoundError:
            self.by_scenario = {}
            self._stamp = None
            return
        # the inode changes on every atomic rewrite, even where mtime is coarse (NFS)
        stamp = (info.st_ino, info.st_mtime_ns, info.st_size)
        if stamp == self._stamp:
            return
        try:
            with open(self.path, encoding="utf-8") as handle:
                raw = json.load(handle)
        except (OSError, ValueError):
            return  # a concurrent rename: keep the old view, the next poll sees the new file
        self._stamp = stamp
        self.by_scenario = {e.s: e for e in (ControlEntry.from_json(r) for r in raw["requests"])}

    def entry(self, s: int) -> ControlEntry | None:
        """The active request of scenario/job ``s``, if any."""
        return self.by_scenario.get(s)
