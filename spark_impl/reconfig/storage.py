"""Durable per-batch task files: the state checkpoint, the sink and the schedule trace.

Every task of stage ``L``, partition ``i`` of global batch ``g`` writes one file
``batches/g<g>/L<L>-p<i>.pkl`` (:meth:`spark_impl.store.Store.write_once`: a temp file +
rename locally, one PUT on an object store, so a retried task never leaves half a file):
the complete state of every object it owns (carried forward, so one file is a full snapshot
of its partition), the sink outputs it produced and the schedule operations it executed in
this batch. A batch becomes part of a job's history only when the driver *commits* it for
that job (a progress record, :mod:`spark_impl.reconfig.progress`); a restart drops uncommitted batches, so
the sink is idempotent by batch id: a replayed batch rewrites nothing that is visible.

A restart never reuses the number of a batch that ran (``Executor`` resumes after the highest
batch on the store), so task files are written once per name (a retried task rewrites its own)
and the files of an uncommitted batch are never read again: the commit protocol of
:mod:`spark_impl.records` with the progress log as its commit records. ``directory`` is a
local path or a filesystem URI (:mod:`spark_impl.store`).

**Framing.** A file is ``MAGIC`` + the payload's length (8 bytes, big endian) + its
BLAKE2b-128 digest + the pickled payload (:func:`spark_impl.records.frame`).
:func:`read_task_file` checks all three before it unpickles anything, so a truncated, extended or bit-flipped file (a disk or copy fault, a
half-restored backup, someone editing the checkpoint) raises :class:`CorruptStateError`
naming the file and what is wrong: the executor refuses to continue from it and never uses
altered state silently (a flipped byte inside a pickled number or string still unpickles).
Files without the header (written before the framing existed) are refused the same way.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from typing import Any

from spark_impl import records
from spark_impl.records import CorruptStateError as CorruptStateError
from spark_impl.store import Store, join, read_bytes, write_bytes

MAGIC = b"streamproof-task-file/1\n"
HEADER = records.header_size(MAGIC)


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


def batch_name(g: int) -> str:
    """The prefix of global batch ``g``'s objects inside the checkpoint store."""
    return f"batches/g{g:07d}"


def batch_dir(directory: str, g: int) -> str:
    """Directory of global batch ``g``."""
    return join(directory, batch_name(g))


def task_path(directory: str, g: int, level: int, part: int) -> str:
    """File of stage ``level``, partition ``part`` of batch ``g``."""
    return join(batch_dir(directory, g), f"L{level}-p{part}.pkl")


def batches_on(store: Store) -> list[int]:
    """The numbers of the batch directories on the store, ascending."""
    return sorted(int(n[1:]) for n in store.list("batches") if n.startswith("g") and n[1:].isdigit())


def frame(payload: bytes) -> bytes:
    """``payload`` with the header of the module docstring."""
    return records.frame(payload, MAGIC)


def unframe(path: str, data: bytes) -> bytes:
    """The payload of a framed file's bytes ``data``; :class:`CorruptStateError` when the
    header is missing or the length or digest does not match."""
    return records.unframe(path, data, MAGIC, "task-file")


def write_task_file(path: str, content: TaskFile) -> None:
    """Write the framed pickle (whole or not at all)."""
    write_bytes(path, frame(pickle.dumps(content, protocol=pickle.HIGHEST_PROTOCOL)))


def read_task_file(path: str) -> TaskFile | None:
    """The file's content, or None if that task never ran (e.g. before the first batch);
    :class:`CorruptStateError` when the file is damaged (module docstring)."""
    data = read_bytes(path)
    if data is None:
        return None
    content = pickle.loads(unframe(path, data))
    if not isinstance(content, TaskFile):
        raise CorruptStateError(path, f"holds a {type(content).__name__}, not a task file")
    return content
