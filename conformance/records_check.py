"""The durable-state layer (``spark_impl.store``, ``spark_impl.records``) against its contract,
without Spark (issue 12, session 6; a part of the Fries suite's contracts check,
:mod:`conformance.fries.contracts_check`).

Every front end keeps its commits, requests and state through these two modules, but the
suite's Spark paths only ever reach them with well-formed logs on a local disk: a torn newest
record with nothing before it, or a prefix deleted on a URI store, never happens there (the
seed-8 campaign's survivors ``records.py`` ``len(seqs) > 1`` -> ``== 1``, not covered, and
``store.py`` ``kind == Directory`` -> ``>``). Here, on a local directory and on the same
directory as a ``file://`` URI (pyarrow's file system: the object-store code path):

* ``Store``: an object written once reads back whole, is listed under its prefix, and is gone
  after ``delete``, which also removes a whole prefix (a batch directory) and ignores a name
  that is absent;
* ``RecordLog``: appends number records from 1, ``keep`` prunes all but the newest ones,
  ``latest`` is the newest; a torn newest record (a strict prefix of its bytes) is skipped
  for the previous record, or for none when it is the only one, with a warning naming the
  record used (``streamproof.records``); the next append sets it aside as
  ``<seq>.rec.torn`` and never reuses its number; an altered newest record is refused.
"""

from __future__ import annotations

import logging
import os
import tempfile


def records_problem() -> str | None:
    """None when the store and the record log keep their contract on both kinds of location
    (module docstring); else the first broken promise."""
    with tempfile.TemporaryDirectory(prefix="streamproof-records-") as root:
        for where in (os.path.join(root, "local"), "file://" + os.path.join(root, "uri")):
            problem = _store_problem(where) or _log_problem(where)
            if problem is not None:
                return f"{where.split(':')[0] if '://' in where else 'local'} store: {problem}"
    return None


def _store_problem(where: str) -> str | None:
    from spark_impl.store import Store

    store = Store(where)
    store.make_root()
    store.write_once("b1/part-0", b"zero")
    store.write_once("b1/part-1", b"one")
    store.write_once("top", b"top")
    if store.read("b1/part-1") != b"one" or store.list("b1") != ["part-0", "part-1"] or not store.exists("top"):
        return f"written objects do not read back: b1 lists {store.list('b1')}"
    store.delete("top")
    store.delete("b1")
    store.delete("absent")
    if store.exists("top") or store.exists("b1") or store.list("b1") or store.read("b1/part-0") is not None:
        return f"delete left objects behind: {store.list()}"
    return None


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


def _log_problem(where: str) -> str | None:
    from spark_impl.records import CorruptStateError, RecordLog
    from spark_impl.store import Store

    store = Store(where)
    log = RecordLog(store, "log")
    seqs = [log.append({"n": n}, keep=2) for n in range(1, 5)]
    if seqs != [1, 2, 3, 4] or log.sequences() != [3, 4] or log.latest() != (4, {"n": 4}):
        return f"appends numbered {seqs}, kept {log.sequences()}, latest {log.latest()}"
    for before in (0, 1):  # a torn newest record with no record before it, then with one
        prefix = f"torn{before}"
        writer = RecordLog(store, prefix)
        for n in range(before + 1):
            writer.append({"n": n})
        data = store.read(writer.name(before + 1))
        assert data is not None
        store.delete(writer.name(before + 1))
        store.write_once(writer.name(before + 1), data[:-3])  # a strict prefix: a writer killed mid-write
        heard = _Warnings()
        logger = logging.getLogger("streamproof.records")
        logger.addHandler(heard)
        try:
            got = RecordLog(store, prefix).latest()
        finally:
            logger.removeHandler(heard)
        want = (before, {"n": before - 1}) if before else None
        named = f"({before})" if before else "(none: the log is empty)"
        if got != want or len(heard.messages) != 1 or named not in heard.messages[0]:
            return (f"a torn newest record after {before} record(s): latest {got}, expected {want}, "
                    f"warnings {heard.messages} (expected one naming {named})")
        recovered = RecordLog(store, prefix)
        seq = recovered.append({"n": "next"})
        aside = writer.aside_name(before + 1)
        if seq != before + 2 or not store.exists(aside) or recovered.latest() != (seq, {"n": "next"}):
            return f"after a torn record {before + 1}, the next append took {seq} and set aside: {store.exists(aside)}"
    altered = RecordLog(store, "altered")
    altered.append({"n": 1})
    data = store.read(altered.name(1))
    assert data is not None
    store.delete(altered.name(1))
    store.write_once(altered.name(1), data[:-1] + bytes([data[-1] ^ 1]))
    try:
        value = RecordLog(store, "altered").latest()
    except CorruptStateError:
        return None
    return f"an altered newest record was used: {value}"
