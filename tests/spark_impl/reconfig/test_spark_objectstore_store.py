"""The checkpoint store and its commit protocol without rename (spark_impl.store,
spark_impl.records), without Spark: on a local path, on pyarrow's ``file://`` filesystem (no
atomic rename, writes in place) and on a real S3 API (moto's server on 127.0.0.1, started and
stopped here). An object no commit record names is never read; a torn or altered record is
refused with a message naming it (and never the credentials of its URI)."""

from __future__ import annotations

import json
import sys
import threading
from pathlib import Path

import pytest

from spark_impl.reconfig.control import ControlEntry, ControlReader, control_log, write_control
from spark_impl.reconfig.layout import load_request, save_request
from spark_impl.reconfig.progress import Progress, has_progress, read_progress, write_progress
from spark_impl.records import CorruptStateError, RecordLog, header_size, RECORD_MAGIC, frame
from spark_impl.store import Store, display, join, open_store
from spark_impl.workloads.soak import swap

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from spark_impl.reconfig import Executor, control
from spec.errors import InputError


def test_store_objects_round_trip(location: str) -> None:
    store = Store(location)
    store.make_root()
    assert store.read("a/b.bin") is None and not store.exists("a/b.bin") and store.list("a") == []
    store.write_once("a/b.bin", b"one")
    store.write_once("a/c/d.bin", b"two")
    store.write_once("top.bin", b"")
    assert store.read("a/b.bin") == b"one" and store.read("top.bin") == b""
    assert store.exists("a/c/d.bin") and store.list("a") == ["b.bin", "c"]
    store.delete("a/c")  # a prefix: everything under it
    assert store.list("a") == ["b.bin"] and store.read("a/c/d.bin") is None
    store.delete("a/b.bin")
    store.delete("missing")  # nothing to delete is fine
    assert store.read("a/b.bin") is None
    assert not [n for n in store.list("") if n.endswith(".tmp")]


def test_join_keeps_the_query_last_and_display_hides_credentials() -> None:
    uri = "s3://key:secret@bucket/ckpt?region=us-east-1&endpoint_override=127.0.0.1:9"
    assert join(uri, "batches", "g1") == "s3://key:secret@bucket/ckpt/batches/g1?region=us-east-1&endpoint_override=127.0.0.1:9"
    assert display(join(uri, "progress")) == "s3://bucket/ckpt/progress"
    assert join("/tmp/x", "a", "b") == "/tmp/x/a/b"


def test_progress_log_keeps_two_write_once_records_and_the_newest_wins(location: str) -> None:
    assert read_progress(location) is None and not has_progress(location)
    for g in range(1, 5):
        write_progress(location, [Progress(offset=g, history=list(range(1, g + 1)))], g)
    log = RecordLog(open_store(location), "progress")
    assert log.sequences() == [3, 4]  # older records pruned; each written once, never rewritten
    batch, (prog,) = read_progress(location) or (0, [])
    assert batch == 4 and prog.offset == 4 and prog.history == [1, 2, 3, 4] and has_progress(location)


def test_uncommitted_objects_are_never_read(location: str) -> None:
    """Data objects written after the last commit record (a batch that crashed before its
    commit) change nothing a reader sees; only the next record makes them visible."""
    store = open_store(location)
    write_progress(location, [Progress(offset=4, history=[1])], 1)
    store.write_once("batches/g0000002/L1-p0.pkl", b"state of an uncommitted batch")
    store.write_once("progress/notes.txt", b"not a record")
    assert read_progress(location) == (1, [Progress(offset=4, history=[1])])
    write_progress(location, [Progress(offset=8, history=[1, 2])], 2)
    assert read_progress(location) == (2, [Progress(offset=8, history=[1, 2])])


def _damage(store: Store, name: str, how: str) -> None:
    data = bytearray(store.read(name) or b"")
    if how == "torn":
        data = data[:len(data) - 3]
    elif how == "torn-header":
        data = data[:header_size(RECORD_MAGIC) - 4]
    elif how == "altered":  # a digit inside the JSON: it still parses without the digest
        at = bytes(data).rfind(b"7")
        data[at:at + 1] = b"8"
    store.write_once(name, bytes(data))


@pytest.mark.parametrize("how", ["torn", "torn-header", "altered"])
def test_a_torn_or_altered_progress_record_is_refused(location: str, how: str) -> None:
    write_progress(location, [Progress(offset=7)], 1)
    write_progress(location, [Progress(offset=17)], 2)
    store = open_store(location)
    _damage(store, "progress/00000000000000000002.rec", how)
    if how != "altered":  # a crash mid-commit: the previous commit (tests/spark_impl/test_records_torn.py)
        assert read_progress(location) == (1, [Progress(offset=7)])
        return
    with pytest.raises(CorruptStateError) as caught:
        read_progress(location)
    message = str(caught.value)
    assert "progress/00000000000000000002.rec" in message and "refusing to use it" in message
    assert "secret" not in message and "test:test" not in message  # no credentials in messages


def test_control_records_reach_a_reader_between_two_polls(location: str) -> None:
    log = control_log(location)
    first = write_control(log, [])
    reader = ControlReader(location)
    reader.start(first)
    assert reader.entry(0) is None
    entry = ControlEntry(0, 1, 1, 12.5, 3, 0.0, 0.0, 7)
    write_control(log, [entry])
    reader.poll(force=True)
    assert reader.entry(0) == entry
    # a batch planned at record ``first``, started after the driver wrote two newer records
    # (the older ones are pruned): the task reads the newest
    write_control(log, [])
    write_control(log, [entry])
    late = ControlReader(location)
    late.start(first)
    assert late.entry(0) == entry and late.seq == first + 3
    _damage(open_store(location), log.name(first + 3), "altered")
    with pytest.raises(CorruptStateError):
        ControlReader(location).start(first + 3)


def test_a_request_file_is_checksummed(location: str) -> None:
    save_request(location, 0, 1, swap(3))
    assert set(load_request(location, 0, 1).updates) == {"M"}
    store = open_store(location)
    data = bytearray(store.read("requests/s0-r1.pkl") or b"")
    data[-5] ^= 0x01
    store.write_once("requests/s0-r1.pkl", bytes(data))
    with pytest.raises(CorruptStateError, match="checksum mismatch"):
        load_request(location, 0, 1)


def test_a_reader_beside_the_writer_lists_again_when_the_newest_was_pruned(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    writer = RecordLog(open_store(str(tmp_path)), "log")
    for i in range(3):
        writer.append({"i": i}, keep=2)
    reader = RecordLog(open_store(str(tmp_path)), "log")
    listing = reader.sequences
    raced: list[bool] = []

    def racing() -> list[int]:
        seqs = listing()
        if not raced:  # right after this listing the writer commits twice and prunes what was listed
            raced.append(True)
            writer.append({"i": 3}, keep=2)
            writer.append({"i": 4}, keep=2)
        return seqs

    monkeypatch.setattr(reader, "sequences", racing)
    assert reader.latest() == (5, {"i": 4}) and raced


def test_a_checkpoint_in_the_old_layout_is_refused_not_restarted(tmp_path: Path) -> None:
    """Before the record logs a commit was ``progress.json``: resuming such a directory would
    find no progress record and silently start from scratch (re-running the whole input)."""
    class _Conf:
        def get(self, key: str, default: str) -> str:
            return default

    class _Context:
        defaultParallelism = 2

        def getConf(self) -> _Conf:  # noqa: N802 - PySpark's name
            return _Conf()

    class _Spark:
        sparkContext = _Context()

    (tmp_path / "progress.json").write_text('{"batch": 3, "jobs": []}')
    with pytest.raises(InputError, match="layout before the record logs"):
        Executor(_Spark(), [], "fries", str(tmp_path), resume=True)


def test_a_control_record_still_being_written_is_read_again(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """On ``file://`` (and HDFS) a record is visible while the driver writes it: a task that
    finds it truncated reads it again (up to SETTLE_S) instead of failing; one that stays torn
    is refused."""
    location = f"file://{tmp_path}/ckpt"
    log = control_log(location)
    first = write_control(log, [])
    reader = ControlReader(location)
    reader.start(first)
    entry = ControlEntry(0, 1, 1, 12.5, 3, 0.0, 0.0, 7)
    whole = frame(b'{"requests":[' + json.dumps(entry.to_json()).encode() + b"]}")
    store = open_store(location)
    store.write_once(log.name(first + 1), whole[:len(whole) - 10])  # the driver is mid-write
    finish = threading.Timer(0.1, lambda: store.write_once(log.name(first + 1), whole))
    finish.start()
    reader.poll(force=True)
    finish.join()
    assert reader.entry(0) == entry
    monkeypatch.setattr(control, "SETTLE_S", 0.05)
    store.write_once(log.name(first + 2), whole[:len(whole) - 10])
    with pytest.raises(CorruptStateError, match="truncated"):
        reader.poll(force=True)
