"""Durable per-batch task files: the state checkpoint, the sink and the schedule trace.

Every task of stage ``L``, partition ``i`` of global batch ``g`` writes one file
``batches/g<g>/L<L>-p<i>.pkl`` (temp file + rename, so a retried or speculative task never
leaves half a file): the complete state of every object it owns (carried forward, so one file
is a full snapshot of its partition), the sink outputs it produced and the schedule
operations it executed in this batch. A batch becomes part of a job's history only when the
driver *commits* it for that job (``progress.json``); a restart drops uncommitted batches, so
the sink is idempotent by batch id: a replayed batch rewrites nothing that is visible.
"""

from __future__ import annotations

import os
import pickle
from dataclasses import dataclass, field
from typing import Any


@dataclass
class ObjState:
    """The checkpointed state of one object (operator worker).

    ``states``: key -> operator state; ``fn_req``: the request whose logic is current (0 =
    the initial logic); ``switched``: the last request this object switched for (its version
    tag); ``markers``: in-component parents whose epoch marker arrived (Fries alignment);
    ``buffer``: new-version input held back until alignment completes."""

    states: dict[Any, Any] = field(default_factory=dict)
    fn_req: int = 0
    switched: int = 0
    markers: set[str] = field(default_factory=set)
    buffer: list[tuple[Any, ...]] = field(default_factory=list)


@dataclass
class TaskFile:
    """What one task of one batch wrote (see the module docstring)."""

    objects: dict[tuple[int, str], ObjState] = field(default_factory=dict)
    outputs: list[tuple[int, str, str, Any, Any]] = field(default_factory=list)
    # (txn, is_update) per operation, plus the sending object for a data operation
    logs: dict[tuple[int, str], list[tuple[Any, ...]]] = field(default_factory=dict)


def batch_dir(directory: str, g: int) -> str:
    """Directory of global batch ``g``."""
    return os.path.join(directory, "batches", f"g{g:07d}")


def task_path(directory: str, g: int, level: int, part: int) -> str:
    """File of stage ``level``, partition ``part`` of batch ``g``."""
    return os.path.join(batch_dir(directory, g), f"L{level}-p{part}.pkl")


def write_task_file(path: str, content: TaskFile) -> None:
    """Atomic write."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as handle:
        pickle.dump(content, handle, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def read_task_file(path: str) -> TaskFile | None:
    """The file's content, or None if that task never ran (e.g. before the first batch)."""
    try:
        with open(path, "rb") as handle:
            content: TaskFile = pickle.load(handle)
            return content
    except FileNotFoundError:
        return None
