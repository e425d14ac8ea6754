"""Durable per-batch task files: the state checkpoint, the sink and the schedule trace.

Every task of stage ``L``, partition ``i`` of global batch ``g`` writes one file
``batches/g<g>/L<L>-p<i>.pkl`` (temp file + rename, so a retried or speculative task never
leaves half a file): the complete state of every object it owns (carried forward, so one file
is a full snapshot of its partition), the sink outputs it produced and the schedule
operations it executed in this batch. A batch becomes part of a job's history only when the
driver *commits* it for that job (``progress.json``); a restart drops uncommitted batches, so
the sink is idempotent by batch id: a replayed batch rewrites nothing that is visible.

**Framing (issue 15).** A file is ``MAGIC`` + the payload's length (8 bytes, big endian) + its
BLAKE2b-128 digest + the pickled payload. :func:`read_task_file` checks all three before it
unpickles anything, so a truncated, extended or bit-flipped file (a disk or copy fault, a
half-restored backup, someone editing the checkpoint) raises :class:`CorruptStateError`
naming the file and what is wrong: the executor refuses to continue from it and never uses
altered state silently (a flipped byte inside a pickled number or string still unpickles).
Files without the header (written before the framing existed) are refused the same way.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from dataclasses import dataclass, field
from typing import Any

MAGIC = b"streamproof-task-file/1\n"
_LENGTH = 8
_DIGEST = 16
HEADER = len(MAGIC) + _LENGTH + _DIGEST


class CorruptStateError(RuntimeError):
    """A state file exists but is not exactly what a task wrote (see the module docstring)."""

    def __init__(self, path: str, why: str) -> None:
        self.path = path
        self.why = why
        super().__init__(f"corrupt checkpoint state file {path}: {why}; refusing to use it "
                         "(restore the file or restart from an older checkpoint directory)")


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


def _digest(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_DIGEST).digest()


def frame(payload: bytes) -> bytes:
    """``payload`` with the header of the module docstring."""
    return MAGIC + len(payload).to_bytes(_LENGTH, "big") + _digest(payload) + payload


def unframe(path: str, data: bytes) -> bytes:
    """The payload of a framed file's bytes ``data``; :class:`CorruptStateError` when the
    header is missing or the length or digest does not match."""
    if not data.startswith(MAGIC):
        if len(data) < len(MAGIC) and MAGIC.startswith(data):
            raise CorruptStateError(path, f"truncated to {len(data)} bytes, inside its header")
        raise CorruptStateError(path, "no streamproof task-file header (not written by this executor, "
                                      "or its first bytes were overwritten)")
    if len(data) < HEADER:
        raise CorruptStateError(path, f"truncated to {len(data)} bytes, inside its header")
    length = int.from_bytes(data[len(MAGIC):len(MAGIC) + _LENGTH], "big")
    payload = data[HEADER:]
    if len(payload) != length:
        state = "truncated" if len(payload) < length else "longer than written"
        raise CorruptStateError(path, f"{state}: {len(payload)} payload bytes, the header says {length}")
    if _digest(payload) != data[len(MAGIC) + _LENGTH:HEADER]:
        raise CorruptStateError(path, "checksum mismatch (its content changed after it was written)")
    return payload


def write_task_file(path: str, content: TaskFile) -> None:
    """Atomic write of the framed pickle."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f"{path}.{os.getpid()}.tmp"
    with open(tmp, "wb") as handle:
        handle.write(frame(pickle.dumps(content, protocol=pickle.HIGHEST_PROTOCOL)))
    os.replace(tmp, path)


def read_task_file(path: str) -> TaskFile | None:
    """The file's content, or None if that task never ran (e.g. before the first batch);
    :class:`CorruptStateError` when the file is damaged (module docstring)."""
    try:
        with open(path, "rb") as handle:
            data = handle.read()
    except FileNotFoundError:
        return None
    content = pickle.loads(unframe(path, data))
    if not isinstance(content, TaskFile):
        raise CorruptStateError(path, f"holds a {type(content).__name__}, not a task file")
    return content
