"""The driver's per-job bookkeeping and its checkpointed form.

``Progress`` is what the controller knows about one job: source offset, requests made, the
active request and which objects switched for it, measured delays, rejections, and the job's
*history*: the batches committed for it (their task files are the job's visible sink output,
schedule and state). A commit snapshots every job's view into the next record of the
progress log ``progress/<seq>.rec`` (:class:`spark_impl.records.RecordLog`: write-once,
checksummed, written after the batch's task files; the two newest records are kept), so a
restarted driver - or a simulated crash of one job - resumes from exactly the committed view,
on a local disk or an object store alike. An altered newest record is refused
(:class:`~spark_impl.records.CorruptStateError`); a torn one (a crash mid-commit where writes
are not atomic) is a commit that never happened: the previous record is read
(:mod:`spark_impl.records`).

Delays: ``delays`` maps a completed request to its reconfiguration delay. Under a
:class:`~spark_impl.reconfig.retention.Retention` only the newest ``Retention.delays`` entries
stay in it; the older ones are folded into ``earlier`` (:class:`DelaySummary`: count, total,
max, the last request folded), so a long-running job's record stops growing after a few
requests while :meth:`Progress.delay_stats` still summarizes every request's delay.
"""

from __future__ import annotations

import copy
from dataclasses import asdict, dataclass, field
from typing import Any

from spark_impl.lru import LRU
from spark_impl.records import RecordLog
from spark_impl.store import join, open_store


@dataclass
class Active:
    """The request in progress: FCM bookkeeping and switch reports."""

    j: int
    attempt: int
    issued: float
    epoch_batch: int
    heads: list[str]
    required: list[str]
    reconfigured: list[str]
    switched: dict[str, float] = field(default_factory=dict)
    user: bool = False


@dataclass
class DelaySummary:
    """Delays folded out of :attr:`Progress.delays`: how many, their sum and maximum (ms), and
    the newest request among them (0: none)."""

    count: int = 0
    total_ms: float = 0.0
    max_ms: float = 0.0
    last: int = 0

    def add(self, j: int, delay_ms: float) -> "DelaySummary":
        """This summary with request ``j``'s delay folded in."""
        return DelaySummary(self.count + 1, round(self.total_ms + delay_ms, 3), max(self.max_ms, delay_ms),
                            max(self.last, j))

    @property
    def mean_ms(self) -> float | None:
        """The mean delay (None when there is none)."""
        return self.total_ms / self.count if self.count else None


@dataclass
class Progress:
    """See the module docstring. ``phase``: stream -> flush -> done."""

    offset: int = 0
    made: int = 0
    active: Active | None = None
    delays: dict[int, float] = field(default_factory=dict)
    rejected: list[str] = field(default_factory=list)
    history: list[int] = field(default_factory=list)
    pending: list[int] = field(default_factory=list)
    phase: str = "stream"
    earlier: DelaySummary = field(default_factory=DelaySummary)

    def snapshot(self) -> "Progress":
        """A deep copy (the committed view)."""
        return copy.deepcopy(self)

    def fold_delays(self, keep: int) -> None:
        """Fold all but the newest ``keep`` delays into ``earlier`` (module docstring)."""
        if len(self.delays) > keep:
            for j in sorted(self.delays)[:-keep]:
                self.earlier = self.earlier.add(j, self.delays.pop(j))

    def delay_stats(self) -> DelaySummary:
        """Every completed request's delay summarized (folded and kept alike)."""
        total = self.earlier
        for j in sorted(self.delays):
            total = total.add(j, self.delays[j])
        return total

    def to_json(self) -> dict[str, Any]:
        """JSON form."""
        raw = asdict(self)
        raw["delays"] = {str(k): v for k, v in self.delays.items()}
        return raw

    @staticmethod
    def from_json(raw: dict[str, Any]) -> "Progress":
        """Inverse of :meth:`to_json`."""
        active = Active(**raw["active"]) if raw.get("active") else None
        return Progress(raw["offset"], raw["made"], active, {int(k): float(v) for k, v in raw["delays"].items()},
                        list(raw["rejected"]), list(raw["history"]), list(raw["pending"]), raw["phase"],
                        DelaySummary(**raw["earlier"]) if raw.get("earlier") else DelaySummary())


PROGRESS = "progress"
KEEP = 2
_LOGS: LRU[str, RecordLog] = LRU(16)


def progress_log(directory: str) -> RecordLog:
    """The progress log of a checkpoint directory (one per process and directory: it
    remembers the newest sequence number, so a commit lists nothing)."""
    found = _LOGS.get(directory)
    if found is None:
        found = RecordLog(open_store(directory), PROGRESS)
        _LOGS.put(directory, found)
    return found


def progress_path(directory: str) -> str:
    """Where commits are recorded (the progress log's prefix: on a local disk it exists once
    something was committed, as ``progress.json`` did)."""
    return join(directory, PROGRESS)


def has_progress(directory: str) -> bool:
    """Has anything been committed in this checkpoint directory (a driver resumes then)?"""
    return bool(progress_log(directory).sequences())


def write_progress(directory: str, committed: list[Progress], g: int) -> None:
    """Record the committed view of every job after batch ``g`` (the commit)."""
    progress_log(directory).append({"batch": g, "jobs": [p.to_json() for p in committed]}, keep=KEEP)


def read_progress(directory: str) -> tuple[int, list[Progress]] | None:
    """The last commit, or None for a fresh checkpoint directory."""
    log = progress_log(directory)
    log.last = None  # another driver may have written since: look at the store
    found = log.latest()
    if found is None:
        return None
    raw = found[1]
    return int(raw["batch"]), [Progress.from_json(p) for p in raw["jobs"]]
