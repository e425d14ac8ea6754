"""Checksummed objects and the commit protocol without rename.

**Framing.** Every object the executor reads back is ``magic`` + the payload's length (8 bytes,
big endian) + its BLAKE2b-128 digest (``digest_size=16``, no key) + the payload, where ``magic``
is the 21 bytes ``streamproof-record/1\n`` for a JSON record (:data:`RECORD_MAGIC`; the payload is
compact UTF-8 JSON) and ``streamproof-pickle/1\n`` for a pickled object (:data:`PICKLE_MAGIC`) - a
durable format, checked byte for byte by :mod:`conformance.records_check`. :func:`unframe` checks all three, so a
truncated (torn), extended or altered object raises :class:`CorruptStateError` naming it and
what is wrong: it is refused, never used (a flipped byte inside a pickled number or a JSON
digit still parses). Task files (:mod:`spark_impl.reconfig.storage`) use their own magic.

**Commit protocol (:class:`RecordLog`).** A log is a prefix of write-once, sequence-numbered,
framed JSON records ``<prefix>/<seq:020d>.rec``. A writer first writes its data objects
(write-once: a batch's task files, a request), then appends a record that names them: the
commit. The newest record is the current one; it must be complete and its digest must match,
otherwise :meth:`RecordLog.latest` refuses it (CorruptStateError) instead of silently going
back to an older commit that the sink may already have overtaken - with one exception, below.
Nothing is ever renamed or
rewritten in place, so the protocol holds on object stores (S3, GCS, ABFS), where a PUT makes
a whole object visible at once, and readers never read an object no record names (an
uncommitted batch is ignored, and a restart never reuses its batch number). The executor's
progress (commits) and its control messages (FCMs) are logs; old records are pruned.

**A torn newest record (a crash mid-commit on a local disk without rename, ``file://``, HDFS).**
Where a write is not atomic, a driver killed while it writes its newest record leaves a strict
prefix of it: cut inside the header, or with fewer payload bytes than its header says
(:class:`TornRecordError`). That commit never completed, and nothing after it happened: every
front end writes the record as its commit point and does everything that depends on it - the
sink delivery, the next record, pruning - only after the write returns, in the same thread
(the Fries driver: ``_absorb`` writes ``progress/`` then ``_publish``es ``control/``, and
``_maintain`` delivers and collects garbage after it; O+: ``commit_batch`` writes
``commits/<b>.rec``, then ``deliver_pending`` delivers and appends ``delivered/``; DGS:
``Query.commit`` appends ``commits/``, then ``deliver`` delivers and appends the delivery
record). So :meth:`RecordLog.latest` falls back to the previous record, which is exactly the
last completed commit (a batch whose commit record is torn is re-run or re-delivered like one
with no record at all), logs a warning naming the torn object (logger ``streamproof.records``)
and remembers it in :attr:`RecordLog.torn`. The torn object is never silently lost: the next
:meth:`RecordLog.append` (the writer, never a reader: a reader may be looking at a record still
being written) first *sets it aside* as ``<seq>.rec.torn`` beside the log (copied whole, then
the original deleted; kept for the operator, never pruned) and writes above it - sequence
numbers are never reused, the set-aside ones included, so write-once holds. The O+ front end
names a commit record by its batch id, which Structured Streaming replays: it sets the torn
record aside (:meth:`RecordLog.set_aside_torn`) and the replayed batch writes the same number
again - the torn object was never a record. Everything else is still refused, exactly as
before: an *altered* newest record (full length with a checksum mismatch, extended, wrong
magic) - the disk or a person changed it after it was written, and the commits after it may
have happened - and a torn record that is not the newest (the writer appends only after the
previous append returned, so such a record was damaged later). On S3, GCS and ABFS a PUT is
atomic, so a crash mid-commit leaves no object and this case cannot arise.
"""

from __future__ import annotations

import hashlib
import json
import logging
import pickle
from typing import Any

from spark_impl.store import Store, display

RECORD_MAGIC = b"streamproof-record/1\n"
_LENGTH = 8
_DIGEST = 16


class CorruptStateError(RuntimeError):
    """A checkpoint object exists but is not exactly what was written (module docstring)."""

    def __init__(self, path: str, why: str) -> None:
        self.path = display(path)
        self.why = why
        super().__init__(f"corrupt checkpoint state file {self.path}: {why}; refusing to use it "
                         "(restore the file or restart from an older checkpoint directory)")


class TornRecordError(CorruptStateError):
    """A framed object that is a strict prefix of one: cut inside its header or with fewer payload
    bytes than its header says (its writer died mid-write; module docstring)."""


_LOG = logging.getLogger("streamproof.records")
TORN_SUFFIX = ".torn"


def header_size(magic: bytes) -> int:
    """Bytes before the payload."""
    return len(magic) + _LENGTH + _DIGEST


def _digest(payload: bytes) -> bytes:
    return hashlib.blake2b(payload, digest_size=_DIGEST).digest()


def frame(payload: bytes, magic: bytes = RECORD_MAGIC) -> bytes:
    """``payload`` with the header of the module docstring."""
    return magic + len(payload).to_bytes(_LENGTH, "big") + _digest(payload) + payload


def unframe(path: str, data: bytes, magic: bytes = RECORD_MAGIC, kind: str = "record") -> bytes:
    """The payload of framed bytes ``data`` read from ``path``; :class:`CorruptStateError`
    when the header is missing or the length or digest does not match."""
    header = header_size(magic)
    if not data.startswith(magic):
        if len(data) < len(magic) and magic.startswith(data):
            raise TornRecordError(path, f"truncated to {len(data)} bytes, inside its header")
        raise CorruptStateError(path, f"no streamproof {kind} header (not written by this executor, "
                                      "or its first bytes were overwritten)")
    if len(data) < header:
        raise TornRecordError(path, f"truncated to {len(data)} bytes, inside its header")
    length = int.from_bytes(data[len(magic):len(magic) + _LENGTH], "big")
    payload = data[header:]
    if len(payload) < length:
        raise TornRecordError(path, f"truncated: {len(payload)} payload bytes, the header says {length}")
    if len(payload) > length:
        raise CorruptStateError(path, f"longer than written: {len(payload)} payload bytes, the header says {length}")
    if _digest(payload) != data[len(magic) + _LENGTH:header]:
        raise CorruptStateError(path, "checksum mismatch (its content changed after it was written)")
    return payload


def write_json_record(store: Store, name: str, value: Any) -> None:
    """Write ``value`` as one framed JSON object."""
    store.write_once(name, frame(json.dumps(value, separators=(",", ":")).encode("utf-8")))


def parse_json_record(path: str, data: bytes) -> Any:
    """The JSON value of a framed object's bytes (CorruptStateError if damaged)."""
    payload = unframe(path, data)
    try:
        return json.loads(payload.decode("utf-8"))
    except ValueError as error:  # the digest matched: a writer wrote this, not a disk
        raise CorruptStateError(path, f"its JSON does not parse ({error})") from None


def read_json_record(store: Store, name: str) -> Any | None:
    """The JSON value of a framed object, or None if absent (CorruptStateError if damaged)."""
    data = store.read(name)
    return None if data is None else parse_json_record(store.path(name), data)


PICKLE_MAGIC = b"streamproof-pickle/1\n"


def write_pickle_record(store: Store, name: str, value: Any) -> None:
    """Write ``value`` as one framed pickle (e.g. a task's part of a batch's state or outputs)."""
    store.write_once(name, frame(pickle.dumps(value), PICKLE_MAGIC))


def read_pickle_record(store: Store, name: str) -> Any | None:
    """The value of a framed pickle, or None if absent (CorruptStateError if damaged)."""
    data = store.read(name)
    return None if data is None else pickle.loads(unframe(store.path(name), data, PICKLE_MAGIC, "pickled object"))


class RecordLog:
    """Sequence-numbered write-once records under ``prefix`` (module docstring)."""

    def __init__(self, store: Store, prefix: str) -> None:
        self.store, self.prefix = store, prefix
        self.last: int | None = None  # the newest sequence number written or read here
        self._floor: int | None = None  # every record below it was deleted here
        self.torn: set[int] = set()
        """Torn newest records :meth:`latest` fell back from, not yet set aside (module docstring)."""

    def name(self, seq: int) -> str:
        """The object of record ``seq``."""
        return f"{self.prefix}/{seq:020d}.rec"

    def aside_name(self, seq: int) -> str:
        """Where a torn record ``seq`` is set aside (module docstring)."""
        return self.name(seq) + TORN_SUFFIX

    def sequences(self) -> list[int]:
        """Sequence numbers of the records on the store, ascending."""
        return sorted(int(n[:-4]) for n in self.store.list(self.prefix) if n.endswith(".rec") and n[:-4].isdigit())

    def _top(self, seqs: list[int]) -> int:
        """The highest sequence number ever used here: the records ``seqs`` and those set aside."""
        suffix = ".rec" + TORN_SUFFIX
        aside = [int(n[:-len(suffix)]) for n in self.store.list(self.prefix)
                 if n.endswith(suffix) and n[:-len(suffix)].isdigit()]
        return max(seqs + aside, default=0)

    def read(self, seq: int) -> Any | None:
        """Record ``seq``'s value, or None if it is absent (CorruptStateError if damaged)."""
        return read_json_record(self.store, self.name(seq))

    def exists(self, seq: int) -> bool:
        """Is record ``seq`` on the store (a cheap check: a stat or a HEAD request)?"""
        return self.store.exists(self.name(seq))

    def latest(self) -> tuple[int, Any] | None:
        """``(seq, value)`` of the newest completed record, None for an empty log. A torn newest
        record is skipped for the previous one, reported and remembered (module docstring); an
        altered newest record, or a damaged previous one, is refused (CorruptStateError)."""
        for _ in range(5):
            seqs = self.sequences()
            if not seqs:
                self.last = self._top(seqs)
                return None
            try:
                value = self.read(seqs[-1])
            except TornRecordError as error:
                previous = self.read(seqs[-2]) if len(seqs) > 1 else None
                if len(seqs) > 1 and previous is None:
                    continue  # pruned meanwhile (a reader beside the writer): list again
                self._torn_newest(seqs, error)
                return (seqs[-2], previous) if len(seqs) > 1 else None
            if value is not None:
                self.last = seqs[-1]
                return seqs[-1], value
            # pruned between the listing and the read (a reader beside the writer): list again
        raise CorruptStateError(self.store.path(self.prefix), "its newest record vanished five times while it was read")

    def _torn_newest(self, seqs: list[int], error: TornRecordError) -> None:
        """Report and remember the torn newest record ``seqs[-1]`` (module docstring)."""
        torn = seqs[-1]
        _LOG.warning("%s is incomplete (%s: its writer stopped mid-write, or is still writing it); using the "
                     "previous record%s; a writer sets it aside as %s before its next record", error.path, error.why,
                     f" ({seqs[-2]})" if len(seqs) > 1 else " (none: the log is empty)",
                     display(self.store.path(self.aside_name(torn))))
        self.torn.add(torn)
        self.last = max(torn, self._top(seqs))

    def set_aside_torn(self) -> None:
        """Move the torn records :meth:`latest` found to ``<seq>.rec.torn`` (copied whole, then
        deleted; a crash in between leaves both, and the next call copies again)."""
        for seq in sorted(self.torn):
            data = self.store.read(self.name(seq))
            if data is not None:
                self.store.write_once(self.aside_name(seq), data)
                self.store.delete(self.name(seq))
        self.torn.clear()

    def _recover(self) -> None:
        """A writer's first append here: its sequence numbers go above every one used (set
        aside ones too), and a torn newest record is set aside."""
        seqs = self.sequences()
        self.last = self._top(seqs)
        if seqs:
            try:
                self.read(seqs[-1])
            except TornRecordError:
                self.torn.add(seqs[-1])
            except CorruptStateError:
                pass  # altered: refused by every reader, as before; the writer still goes above it

    def append(self, value: Any, keep: int | None = None) -> int:
        """Write the next record (above every sequence number used, module docstring); with
        ``keep``, delete the records older than the newest ``keep``. Returns its sequence number."""
        if self.last is None:
            self._recover()
        self.set_aside_torn()
        assert self.last is not None
        seq = self.last + 1
        write_json_record(self.store, self.name(seq), value)
        self.last = seq
        if keep is not None:
            self.prune(seq - keep + 1)
        return seq

    def prune(self, below: int) -> None:
        """Delete the records numbered below ``below`` (the newest is never deleted; records
        set aside are kept)."""
        if self.last is not None:
            below = min(below, self.last)
        # the first prune lists the log (records a crashed writer left); later ones delete
        # only the records that fell below since (no listing per commit)
        doomed = [s for s in self.sequences() if s < below] if self._floor is None else range(self._floor, below)
        for seq in doomed:
            self.store.delete(self.name(seq))
        self._floor = max(below, self._floor or 0)
