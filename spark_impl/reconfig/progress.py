"""The driver's per-job bookkeeping and its checkpointed form.

``Progress`` is what the controller knows about one job: source offset, requests made, the
active request and which objects switched for it, measured delays, rejections, and the job's
*history*: the batches committed for it (their task files are the job's visible sink output,
schedule and state). A commit snapshots it into ``progress.json`` (atomically, with the
batch files already on disk), so a restarted driver - or a simulated crash of one job -
resumes from exactly the committed view.
"""

from __future__ import annotations

import copy
import os
from dataclasses import asdict, dataclass, field
from typing import Any

from spec.jsonio import load_json, write_json_atomic


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

    def snapshot(self) -> "Progress":
        """A deep copy (the committed view)."""
        return copy.deepcopy(self)

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
                        list(raw["rejected"]), list(raw["history"]), list(raw["pending"]), raw["phase"])


def progress_path(directory: str) -> str:
    """Where commits are recorded."""
    return os.path.join(directory, "progress.json")


def write_progress(directory: str, committed: list[Progress], g: int) -> None:
    """Record the committed view of every job after batch ``g``."""
    write_json_atomic(progress_path(directory), {"batch": g, "jobs": [p.to_json() for p in committed]}, indent=None)


def read_progress(directory: str) -> tuple[int, list[Progress]] | None:
    """The last commit, or None for a fresh checkpoint directory."""
    if not os.path.exists(progress_path(directory)):
        return None
    raw = load_json(progress_path(directory))
    return int(raw["batch"]), [Progress.from_json(p) for p in raw["jobs"]]
