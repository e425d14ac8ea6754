"""The nemesis' view of the driver: it tails ``events.jsonl`` (written by
:mod:`conformance.cluster.nemesis_job`) and keeps what is true *now* - the round in
progress, whether a reconfiguration or a rescale is in progress, the last heartbeat - and
everything finished (results, driver starts)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Beat:
    """One heartbeat: time, driver pid, registered executors, finished work."""

    t: float
    pid: int
    executors: int
    work: int


@dataclass
class EventLog:
    """Incremental reader of the events file (see the module docstring)."""

    path: str
    offset: int = 0
    partial: str = ""
    current: dict[str, Any] | None = None        # the round event of the round in progress
    reconfiguring: bool = False
    rescaling: bool = False
    beats: list[Beat] = field(default_factory=list)
    drivers: list[dict[str, Any]] = field(default_factory=list)
    results: list[dict[str, Any]] = field(default_factory=list)
    collecting: set[int] = field(default_factory=set)  # rounds whose Fries results are being read
    stopped: bool = False
    next_round: int = 0

    def poll(self) -> None:
        """Read what was appended since the last call."""
        if not os.path.exists(self.path):
            return
        with open(self.path, encoding="utf-8") as handle:
            handle.seek(self.offset)
            chunk = handle.read()
            self.offset = handle.tell()
        lines = (self.partial + chunk).split("\n")
        self.partial = lines.pop()
        for line in lines:
            if line.strip():
                self._apply(json.loads(line))

    def _apply(self, event: dict[str, Any]) -> None:
        kind = event["e"]
        if kind == "beat":
            self.beats.append(Beat(event["t"], event["pid"], event["executors"], event["work"]))
            del self.beats[:-2000]
        elif kind == "driver":
            self.drivers.append(event)
            self.current, self.reconfiguring, self.rescaling = None, False, False
        elif kind == "round":
            self.current, self.reconfiguring, self.rescaling = event, False, False
        elif kind == "batch":
            self.reconfiguring = bool(event["reconfiguring"])
        elif kind == "rescale":
            self.rescaling = event["phase"] == "start"
        elif kind == "collect":
            self.collecting.add(int(event["round"]))
        elif kind == "result":
            self.results.append(event)
            self.current, self.reconfiguring, self.rescaling = None, False, False
            self.next_round = max(self.next_round, int(event["round"]) + 1)
        elif kind == "stopped":
            self.stopped = True

    def phase(self) -> str:
        """What the driver is doing now: ``reconfiguring``, ``rescaling``, the round's job, or
        ``between rounds``."""
        if self.current is None:
            return "between rounds"
        if self.reconfiguring:
            return "reconfiguring"
        if self.rescaling:
            return "rescaling"
        return str(self.current["job"])

    def last_beat(self, pid: int | None = None) -> Beat | None:
        """The latest heartbeat (of driver ``pid`` when given)."""
        for beat in reversed(self.beats):
            if pid is None or beat.pid == pid:
                return beat
        return None

    def result_of(self, round_index: int, after: float) -> dict[str, Any] | None:
        """The result event of round ``round_index`` written after time ``after``."""
        for event in self.results:
            if event["round"] == round_index and event["t"] >= after:
                return event
        return None
