"""What the sandboxed user program is doing right now, shared between the two processes.

The child process (:mod:`streamproof.sandbox.child`) writes, on every entry into and exit
from user code, a small record into a memory-mapped file; the parent
(:mod:`streamproof.sandbox.runner`) reads it while it waits, to enforce the per-call time
limit, to say where the time went when a limit is hit, and to draw the progress bar. No system
call per user call: a write is a few ``struct.pack_into`` on shared memory.

The record is guarded by a sequence lock: the writer makes ``seq`` odd, writes, makes it even
again; a reader retries until it reads the same even ``seq`` before and after the fields, so it
never sees a half-written record. Times are ``time.monotonic()``, which on Linux is the
system-wide ``CLOCK_MONOTONIC`` and so comparable between the processes.
"""

from __future__ import annotations

import mmap
import os
import struct
import time
from dataclasses import dataclass

SIZE = 4096
_HEADER = struct.Struct("<QdQbbH")  # seq, activity start, calls, kind, condition, label length
_LABEL_MAX = SIZE - _HEADER.size
NO_CONDITION = -1

OURS = 0
"""Kind of activity: streamproof's own work."""
USER = 1
"""Kind of activity: one call of a user function; held to the per-call limit as a whole."""
MIXED = 2
"""Kind of activity: user code whose time may be spent in streamproof's or a library's code
(the import, reading the members, a draw from ``events()``, a call on the prover's symbolic
values); stopped at the per-call limit only when a stack dump shows the user's code on top."""


@dataclass(frozen=True)
class Snapshot:
    """One consistent reading of the record. ``label`` names the current activity (a user
    callback such as ``P.update``, or a phase such as ``importing prog.py``); ``kind`` is
    :data:`OURS`, :data:`USER` or :data:`MIXED`; ``condition`` is the index of the condition being checked
    (``NO_CONDITION`` before the check starts); ``calls`` counts calls into user code."""

    label: str
    started: float
    kind: int
    condition: int
    calls: int


def create(path: str) -> None:
    """Create the zero-filled record file at ``path`` (the parent does, before the child
    starts)."""
    with open(path, "wb") as handle:
        handle.write(b"\0" * SIZE)


def _map(path: str) -> mmap.mmap:
    fd = os.open(path, os.O_RDWR)
    try:
        return mmap.mmap(fd, SIZE)
    finally:
        os.close(fd)


class Writer:
    """The child's side: :meth:`enter` / :meth:`leave` around every call into user code and
    every phase."""

    def __init__(self, path: str) -> None:
        self._map = _map(path)
        self._seq = 0
        self._calls = 0
        self._condition = NO_CONDITION
        self.label = ""
        self.started = time.monotonic()
        self.kind = OURS

    def enter(self, label: str, kind: int) -> tuple[str, float, int]:
        """Start the activity ``label`` of ``kind``; returns the previous one, for :meth:`leave`."""
        previous = (self.label, self.started, self.kind)
        if kind != OURS:
            self._calls += 1
        self.label, self.started, self.kind = label, time.monotonic(), kind
        self._publish()
        return previous

    def leave(self, previous: tuple[str, float, int]) -> None:
        """Go back to the activity :meth:`enter` returned. Its clock restarts: the per-call
        limit bounds each stretch of user code between two calls, so reading the members may
        take longer than the limit in total when it is spent in many quick ``depends`` calls."""
        self.label, _, self.kind = previous
        self.started = time.monotonic()
        self._publish()

    def condition(self, index: int) -> None:
        """The check of condition number ``index`` (0-based) starts."""
        self._condition = index
        self._publish()

    def _publish(self) -> None:
        label = self.label.encode("utf-8", "replace")[:_LABEL_MAX]
        self._seq += 1
        struct.pack_into("<Q", self._map, 0, self._seq)
        _HEADER.pack_into(
            self._map, 0, self._seq, self.started, self._calls, self.kind, self._condition, len(label)
        )
        self._map[_HEADER.size : _HEADER.size + len(label)] = label
        self._seq += 1
        struct.pack_into("<Q", self._map, 0, self._seq)


class Reader:
    """The parent's side: :meth:`read` a consistent :class:`Snapshot`."""

    def __init__(self, path: str) -> None:
        self._map = _map(path)

    def read(self) -> Snapshot:
        """The current record (retries while the child is in the middle of a write)."""
        while True:
            seq, started, calls, kind, condition, length = _HEADER.unpack_from(self._map, 0)
            label = bytes(self._map[_HEADER.size : _HEADER.size + min(length, _LABEL_MAX)])
            (again,) = struct.unpack_from("<Q", self._map, 0)
            if seq == again and seq % 2 == 0:
                return Snapshot(label.decode("utf-8", "replace"), started, kind, condition, calls)
            time.sleep(0.0005)

    def close(self) -> None:
        """Unmap the record."""
        self._map.close()
