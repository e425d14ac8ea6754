"""The durable-state layer (``spark_impl.store``, ``spark_impl.records``) against its module
docstrings, on a local directory and on the same directory as a ``file://`` URI (pyarrow's file
system: the object-store code path). Every front end keeps its commits, requests and state
through these two modules, but Spark runs reach them only with well-formed logs on a local disk:
a torn newest record with nothing before it, or a prefix deleted on a URI store, never happens
there.

* ``Store``: an object written once reads back whole, is listed under its prefix, and is gone
  after ``delete``, which also removes a whole prefix and ignores a name that is absent;
  ``load`` decodes once and serves from the cache while unchanged; ``stamp`` only for local
  objects; ``join`` and ``display`` as documented;
* the framing is the documented bytes (magic, 8-byte big-endian length, BLAKE2b-128, payload,
  recomputed here); every strict prefix of a framed object is *torn*, every other damage is
  refused as *altered*; a whole record that is not JSON is refused;
* ``RecordLog``: appends number records from 1, ``keep`` prunes all but the newest ones,
  ``latest`` is the newest; a torn newest record is skipped for the previous one (or none) with
  a warning naming the record used; the next append sets it aside and never reuses its number;
  an altered newest record is refused; a reader beside the writer lists again when a record
  vanishes (up to five attempts); only ``<seq:020d>.rec`` objects are records.

Each ``*_problem`` helper names the first broken promise of its part (None: all hold).
"""


from __future__ import annotations

import hashlib
import logging
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

import pytest

from spark_impl.lru import LRU
from spark_impl.records import (
    PICKLE_MAGIC, RECORD_MAGIC, CorruptStateError, RecordLog, TornRecordError, frame, parse_json_record, unframe,
)
from spark_impl.store import Store, display, is_uri, join


def _frame_problem() -> str | None:
    """The framing is the documented format (``spark_impl/records.py``'s docstring): magic +
    8-byte big-endian length + BLAKE2b-128 digest + payload, recomputed here; every strict
    prefix of a framed object is torn, every other damage is refused as corrupt (not torn)."""

    payload = b'{"batch":7}'
    other = b"a caller's magic, 24 B.\n"  # unframe takes any magic (task files use one of 24 bytes)
    for magic, documented in ((RECORD_MAGIC, b"streamproof-record/1\n"), (PICKLE_MAGIC, b"streamproof-pickle/1\n"),
                              (other, other)):
        want = (documented + len(payload).to_bytes(8, "big") + hashlib.blake2b(payload, digest_size=16).digest()
                + payload)
        if frame(payload, magic) != want:
            return f"frame({payload!r}) is {frame(payload, magic)!r}, the documented bytes are {want!r}"
        try:
            whole = unframe("x", want, magic)
        except CorruptStateError as error:
            return f"a whole framed object was refused: {error.why}"
        if whole != payload:
            return f"unframe of a whole framed object gave {whole!r}"
        header = len(documented) + 8 + 16
        for cut in sorted({0, 1, len(documented) - 1, len(documented), len(documented) + 5, header - 1, header,
                           len(want) - 1}):
            try:
                unframe("x", want[:cut], magic)
            except TornRecordError:
                continue
            except CorruptStateError as error:
                return f"a framed object cut to its first {cut} of {len(want)} bytes is refused as altered ({error.why}), not torn"
            return f"a framed object cut to its first {cut} of {len(want)} bytes was accepted"
        shorter = want[:len(documented)] + (len(payload) - 1).to_bytes(8, "big") + want[len(documented) + 8:]
        for damaged, what in ((want + b"x", "extended by a byte"), (b"X" + want[1:], "with another first byte"),
                              (want[:-1] + bytes([want[-1] ^ 1]), "with a payload bit flipped"),
                              (want[:header - 1] + bytes([want[header - 1] ^ 1]) + want[header:], "with a digest bit flipped"),
                              (shorter, "whose header says one payload byte less"), (b"Y", "of one other byte"),
                              (want[:header - 16] + bytes(16) + want[header:], "whose digest is all zero bytes"),
                              (want[:header - 16] + b"\xff" * 16 + want[header:], "whose digest is all 0xff bytes")):
            try:
                unframe("x", damaged, magic)
            except TornRecordError:
                return f"a framed object {what} is taken for torn (it would be skipped, not refused)"
            except CorruptStateError:
                continue
            return f"a framed object {what} was accepted"
    big = b"[" + b"1," * 700 + b"1]"
    try:
        if unframe("x", frame(big)) != big or parse_json_record("x", frame(big)) != [1] * 701:
            return "a framed 1,403-byte payload read back differently"
    except CorruptStateError as error:
        return f"a framed 1,403-byte payload was refused: {error.why}"
    try:
        empty = unframe("x", frame(b""))
    except CorruptStateError as error:
        return f"a framed empty payload was refused: {error.why}"
    if empty != b"":
        return f"a framed empty payload read back as {empty!r}"
    for bad in (b"{not json", b"\xff"):
        try:
            parse_json_record("x", frame(bad))
        except TornRecordError:
            return f"a whole record holding {bad!r} is taken for torn"
        except CorruptStateError:
            continue
        return f"a record holding {bad!r} (not JSON) was accepted"
    return None


def _location_problem() -> str | None:
    """``join`` and ``display`` as ``spark_impl/store.py``'s docstring defines them: names go
    into a URI's path before its query (a local path is joined as a path, a ``?`` in it
    included); a location is shown without credentials or query, a local path as it is."""

    uri = "s3://key:secret@bucket/ckpt?region=us-east-1&scheme=http"
    for got, want in ((join(uri, "commits", "1.rec"), "s3://key:secret@bucket/ckpt/commits/1.rec?region=us-east-1&scheme=http"),
                      (join("file:///tmp/x/", "a"), "file:///tmp/x/a"),
                      (join("/tmp/what?not/", "a", "b"), "/tmp/what?not/a/b"), (join("rel/dir", "a"), "rel/dir/a"),
                      (display(uri + "#frag"), "s3://bucket/ckpt"), (display("gs://bucket"), "gs://bucket"),
                      (display("/tmp/what?not"), "/tmp/what?not"), (display("rel/dir"), "rel/dir")):
        if got != want:
            return f"got {got!r}, the documented location is {want!r}"
    if not is_uri("hdfs://nn:8020/x") or is_uri("/tmp/x") or is_uri("s3:/one-slash"):
        return "is_uri does not tell a URI (scheme://...) from a local path"
    return None


def _load_problem(where: str) -> str | None:
    """``Store.load``: None for an absent object; decoded once and then served from the cache
    while the object is unchanged; a rewritten object is decoded again (never served stale)."""

    store = Store(where)
    cache: LRU[tuple[object, ...], str] = LRU(4)
    decoded: list[bytes] = []

    def decode(data: bytes) -> str:
        decoded.append(data)
        return data.decode()

    if store.load("cached", decode, cache) is not None or decoded:
        return "load of an absent object was not None"
    store.write_once("cached", b"one")
    first, second = store.load("cached", decode, cache), store.load("cached", decode, cache)
    if (first, second) != ("one", "one") or decoded != [b"one"]:
        return f"load read {first!r}, {second!r}, decoding {decoded} (expected 'one' twice, decoded once)"
    store.delete("cached")
    store.write_once("cached", b"two!")
    third = store.load("cached", decode, cache)
    if third != "two!" or decoded != [b"one", b"two!"]:
        return f"load after the object was rewritten gave {third!r} (decoded {decoded}): a stale cache entry"
    if (store.stamp("cached") is None) != (not store.local) or store.stamp("absent") is not None:
        return f"stamp is {store.stamp('cached')} for an object, {store.stamp('absent')} for none (local: {store.local})"
    return None


def _store_problem(where: str) -> str | None:

    store = Store(where)
    store.make_root()
    store.make_root()  # a restart creates it again
    deep = Store(where.rstrip("/") + "/deep/er")
    deep.make_root()
    deep.write_once("one/two/part", b"deep")  # a part under prefixes that do not exist yet
    if deep.read("one/two/part") != b"deep" or store.list("deep") != ["er"]:
        return f"a nested store or object was not created: {store.list('deep')}"
    store.write_once("b1/part-0", b"zero")
    store.write_once("b1/part-1", b"one")
    store.write_once("top", b"top")
    if store.read("b1/part-1") != b"one" or store.list("b1") != ["part-0", "part-1"] or not store.exists("top"):
        return f"written objects do not read back: b1 lists {store.list('b1')}"
    store.delete("top")
    store.delete("b1")
    store.delete("absent")
    store.delete("deep")
    if store.exists("top") or store.exists("b1") or store.list("b1") or store.read("b1/part-0") is not None \
            or store.list() != []:
        return f"delete left objects behind: {store.list()}"
    return None


def _rewrite(store: Store, name: str, change: Callable[[bytes], bytes]) -> None:
    """Replace object ``name`` by ``change`` of its bytes (a torn or altered record, as a crash
    or a disk would leave it)."""
    data = store.read(name)
    assert data is not None
    store.delete(name)
    store.write_once(name, change(data))


class _Warnings(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


@contextmanager
def _listening() -> Iterator[_Warnings]:
    """The warnings of ``streamproof.records`` while inside (kept off the suite's output)."""
    heard = _Warnings()
    logger = logging.getLogger("streamproof.records")
    logger.addHandler(heard)
    try:
        yield heard
    finally:
        logger.removeHandler(heard)


def _log_problem(where: str) -> str | None:

    store = Store(where)
    log = RecordLog(store, "log")
    seqs = [log.append({"n": n}, keep=2) for n in range(1, 5)]
    if seqs != [1, 2, 3, 4] or log.sequences() != [3, 4] or log.latest() != (4, {"n": 4}):
        return f"appends numbered {seqs}, kept {log.sequences()}, latest {log.latest()}"
    # a torn newest record with no record before it, with one, with three; the next append by a
    # fresh writer, or by the reader that found it (a restarted driver: latest, then commit)
    for before, same in ((0, False), (1, False), (3, False), (0, True), (3, True)):
        prefix = f"torn{before}{'-same' if same else ''}"
        writer = RecordLog(store, prefix)
        for n in range(before + 1):
            writer.append({"n": n})
        _rewrite(store, writer.name(before + 1), lambda data: data[:-3])  # a strict prefix: a writer killed mid-write
        reader = RecordLog(store, prefix)
        with _listening() as heard:
            got = reader.latest()
        want = (before, {"n": before - 1}) if before else None
        named = f"({before})" if before else "(none: the log is empty)"
        if got != want or len(heard.messages) != 1 or named not in heard.messages[0]:
            return (f"a torn newest record after {before} record(s): latest {got}, expected {want}, "
                    f"warnings {heard.messages} (expected one naming {named})")
        recovered = reader if same else RecordLog(store, prefix)
        seq = recovered.append({"n": "next"})
        aside = writer.aside_name(before + 1)
        if seq != before + 2 or not store.exists(aside) or recovered.latest() != (seq, {"n": "next"}):
            return f"after a torn record {before + 1}, the next append took {seq} and set aside: {store.exists(aside)}"
        if recovered.sequences() != [*range(1, before + 1), seq]:
            return f"after a torn record {before + 1} was set aside, the log holds {recovered.sequences()}"
    altered = RecordLog(store, "altered")
    altered.append({"n": 1})
    _rewrite(store, altered.name(1), lambda data: data[:-1] + bytes([data[-1] ^ 1]))
    try:
        value = RecordLog(store, "altered").latest()
    except CorruptStateError:
        return None
    return f"an altered newest record was used: {value}"


def _writer_problem(where: str) -> str | None:
    """A writer after an altered newest record numbers above it (readers still refuse it); a
    torn record under a torn newest one is refused, not skipped (module docstring of
    ``spark_impl.records``)."""

    store = Store(where)
    first = RecordLog(store, "altered-writer")
    first.append({"n": 1})
    _rewrite(store, first.name(1), lambda data: data[:-1] + bytes([data[-1] ^ 1]))
    seq = RecordLog(store, "altered-writer").append({"n": 2})
    if seq != 2 or not store.exists(first.name(1)):
        return f"a writer after an altered record 1 appended record {seq} (expected 2, record 1 kept)"
    twice = RecordLog(store, "torn-twice")
    for n in (1, 2):
        twice.append({"n": n})
    for n in (1, 2):
        _rewrite(store, twice.name(n), lambda data: data[:-2])
    try:
        got = RecordLog(store, "torn-twice").latest()
    except CorruptStateError:
        return None
    return f"a torn record under a torn newest record was skipped: latest {got}"


def _reader_problem(where: str) -> str | None:
    """A reader beside the writer (``RecordLog.latest``): a record pruned between the listing and
    the read makes it list again; a newest record that vanishes at every one of its five
    attempts is an error saying so."""

    class Vanishing(Store):
        """Reads of the names in ``gone`` find nothing, as many times as counted there."""

        def __init__(self, location: str, gone: dict[str, int]) -> None:
            super().__init__(location)
            self.gone = gone
            self.reads: list[str] = []

        def read(self, name: str) -> bytes | None:
            self.reads.append(name)
            if self.gone.get(name, 0) > 0:
                self.gone[name] -= 1
                return None
            return super().read(name)

    writer = RecordLog(Store(where), "beside")
    for n in (1, 2):
        writer.append({"n": n})
    for gone, want in (({writer.name(2): 1}, (2, {"n": 2})), ({writer.name(2): 4}, (2, {"n": 2}))):
        try:
            got = RecordLog(Vanishing(where, gone), "beside").latest()
        except CorruptStateError as error:
            return f"a newest record pruned between listing and reading ({gone}) was refused: {error.why}"
        if got != want:
            return f"a newest record pruned between listing and reading ({gone}) gave {got}, expected {want}"
    always = Vanishing(where, {writer.name(2): 10**6})
    try:
        got = RecordLog(always, "beside").latest()
    except CorruptStateError as error:
        if "five times" not in error.why or always.reads.count(writer.name(2)) != 5:
            return f"a newest record vanishing at every read: {error.why} after {len(always.reads)} reads (expected 5)"
    else:
        return f"a newest record vanishing at every read gave {got}"
    _rewrite(Store(where), writer.name(2), lambda data: data[:-2])  # torn newest; the previous one pruned once meanwhile
    try:
        with _listening() as heard:
            got = RecordLog(Vanishing(where, {writer.name(1): 1}), "beside").latest()
    except CorruptStateError as error:
        return f"a torn newest record whose previous one vanished once, then read back, was refused: {error.why}"
    if got != (1, {"n": 1}) or len(heard.messages) != 1:
        return f"a torn newest record whose previous one vanished once, then read back, gave {got}, expected (1, ...)"
    return None


def _names_problem(where: str) -> str | None:
    """The records are exactly the objects ``<seq:020d>.rec`` of the prefix (other objects - a
    crashed writer's temporary file, notes, set-aside records - are not records and do not
    number them, but a set-aside record's number is never reused); a reader that then writes
    numbers above the newest record; ``prune`` never deletes the newest record."""

    store = Store(where)
    log = RecordLog(store, "named")
    for n in (1, 2, 3):
        log.append({"n": n})
    junk = ("notes.rec", "1234x.rec", "00000000000000000007.rec.99.tmp", "123456789.txt", "100000000.notes.x",
            "9x.rec.torn", "123456789x.rec.torn")
    for name in junk:
        store.write_once(f"named/{name}", b"not a record")
    reader = RecordLog(store, "named")
    if reader.sequences() != [1, 2, 3] or reader.latest() != (3, {"n": 3}):
        return f"with other objects {junk} beside records 1-3, the log lists {reader.sequences()}"
    seq = reader.append({"n": 4})
    if seq != 4 or RecordLog(store, "named").read(3) != {"n": 3}:
        return f"a reader that read record 3 then appended took number {seq} (expected 4, record 3 kept)"
    reader.prune(100)
    if reader.sequences() != [4] or not all(store.exists(f"named/{name}") for name in junk):
        return f"prune(100) after record 4 left {reader.sequences()} (the newest must stay; other objects too)"
    seq = RecordLog(store, "named").append({"n": 5})
    if seq != 5:
        return f"a new writer beside other objects {junk} took number {seq} after record 4"
    only = RecordLog(store, "aside-only")
    only.append({"n": 1})
    _rewrite(store, only.name(1), lambda data: data[:-3])
    with _listening():
        torn = RecordLog(store, "aside-only")
        torn.latest()
    torn.set_aside_torn()
    seq = RecordLog(store, "aside-only").append({"n": 2})
    if seq != 2 or not store.exists(only.aside_name(1)):
        return f"after the only record 1 was set aside, a new writer took number {seq} (numbers are never reused)"
    return None


def test_the_framing_is_the_documented_bytes_and_tells_torn_from_altered() -> None:
    assert _frame_problem() is None


def test_locations_join_before_the_query_and_display_without_credentials() -> None:
    assert _location_problem() is None


@pytest.fixture(params=["local", "file"])
def where(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A local directory, or the same kind of directory as a ``file://`` URI."""
    return str(tmp_path) if request.param == "local" else f"file://{tmp_path}"


def test_an_object_written_once_reads_back_lists_and_deletes(where: str) -> None:
    assert _store_problem(where) is None


def test_load_decodes_once_and_again_only_after_a_rewrite(where: str) -> None:
    assert _load_problem(where) is None


def test_a_torn_newest_record_is_skipped_set_aside_and_an_altered_one_refused(where: str) -> None:
    assert _log_problem(where) is None


def test_a_writer_numbers_above_an_altered_record_and_a_torn_record_under_a_torn_one_is_refused(where: str) -> None:
    assert _writer_problem(where) is None


def test_a_reader_beside_the_writer_lists_again_when_a_record_vanishes(where: str) -> None:
    assert _reader_problem(where) is None


def test_only_numbered_record_objects_are_records_and_numbers_are_never_reused(where: str) -> None:
    assert _names_problem(where) is None
