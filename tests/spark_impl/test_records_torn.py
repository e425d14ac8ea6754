"""A crash mid-commit where writes are not atomic (a local disk, ``file://``, HDFS) leaves a torn
newest record: ``RecordLog.latest`` falls back to the previous record, reports the torn one and
the next append sets it aside and goes above it; an altered record, or a torn one that is not
the newest, is refused as before (spark_impl.records module docstring). Spark-free."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from spark_impl.records import CorruptStateError, RecordLog, TornRecordError, frame, header_size, unframe
from spark_impl.store import Store, open_store


@pytest.fixture(params=["local", "file"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Store:
    location = str(tmp_path / "ckpt") if request.param == "local" else f"file://{tmp_path}/ckpt"
    found = open_store(location)
    found.make_root()
    return found


def _log(store: Store, records: int) -> RecordLog:
    log = RecordLog(store, "log")
    for i in range(records):
        log.append({"i": i, "pad": "x" * 7}, keep=2)
    return log


def _replace(store: Store, name: str, data: bytes) -> None:
    store.delete(name)
    store.write_once(name, data)


def test_a_torn_newest_record_at_every_byte_offset_falls_back_and_is_set_aside(store: Store) -> None:
    whole = store.read(_log(store, 1).name(1))
    assert whole is not None
    for cut in range(len(whole)):  # every strict prefix: inside the magic, length, digest, payload
        store.delete("log")
        writer = _log(store, 3)  # records 2 and 3 kept
        torn = writer.name(3)
        full = store.read(torn)
        assert full is not None
        _replace(store, torn, full[:cut])
        restarted = RecordLog(store, "log")
        assert restarted.latest() == (2, {"i": 1, "pad": "x" * 7}), cut
        assert restarted.torn == {3}
        assert restarted.append({"i": 3}, keep=2) == 4  # above the torn record: never reused
        assert store.read(restarted.aside_name(3)) == full[:cut]  # kept for the operator
        assert not store.exists(torn)
        assert RecordLog(store, "log").latest() == (4, {"i": 3})
        assert RecordLog(store, "log").append({"i": 4}) == 5


def test_a_torn_record_is_classified_torn_only_when_a_strict_prefix() -> None:
    data = frame(b'{"a":1}')
    for cut in range(len(data)):
        with pytest.raises(TornRecordError):
            unframe("x.rec", data[:cut])
    assert unframe("x.rec", data) == b'{"a":1}'


def _altered(data: bytes, how: str) -> bytes:
    head = header_size(b"streamproof-record/1\n")
    if how == "payload":
        return data[:-2] + bytes([data[-2] ^ 1]) + data[-1:]
    if how == "digest":
        return data[:head - 1] + bytes([data[head - 1] ^ 1]) + data[head:]
    if how == "extended":
        return data + b"0"
    if how == "magic":
        return b"X" + data[1:]
    if how == "shorter-length":  # the header says fewer bytes than there are
        length = int.from_bytes(data[21:29], "big") - 1
        return data[:21] + length.to_bytes(8, "big") + data[29:]
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["payload", "digest", "extended", "magic", "shorter-length"])
def test_an_altered_newest_record_is_still_refused(store: Store, how: str) -> None:
    writer = _log(store, 3)
    name = writer.name(3)
    data = store.read(name)
    assert data is not None
    _replace(store, name, _altered(data, how))
    with pytest.raises(CorruptStateError) as caught:
        RecordLog(store, "log").latest()
    assert not isinstance(caught.value, TornRecordError)
    message = str(caught.value)
    assert message.startswith("corrupt checkpoint state file ") and "log/00000000000000000003.rec: " in message
    assert message.endswith("; refusing to use it (restore the file or restart from an older checkpoint directory)")
    assert store.exists(name) and not store.exists(writer.aside_name(3))  # left as it is


@pytest.mark.parametrize("older", ["torn", "altered"])
def test_a_damaged_record_behind_a_torn_newest_is_refused(store: Store, older: str) -> None:
    writer = _log(store, 3)
    for seq, how in ((2, older), (3, "torn")):
        data = store.read(writer.name(seq))
        assert data is not None
        _replace(store, writer.name(seq), data[:-1] if how == "torn" else _altered(data, "payload"))
    with pytest.raises(CorruptStateError, match="00000000000000000002.rec: .*refusing to use it"):
        RecordLog(store, "log").latest()


def test_a_torn_record_that_is_not_the_newest_is_refused_when_read(store: Store) -> None:
    writer = _log(store, 3)
    data = store.read(writer.name(2))
    assert data is not None
    _replace(store, writer.name(2), data[:-4])
    assert RecordLog(store, "log").latest() == (3, {"i": 2, "pad": "x" * 7})  # the newest is whole
    with pytest.raises(CorruptStateError, match="truncated: .*refusing to use it"):
        RecordLog(store, "log").read(2)


class Killed(Exception):
    """The writer process died."""


def _kill_while_writing(store: Store, monkeypatch: pytest.MonkeyPatch, keep: float = 0.5) -> None:
    """The next write of a record leaves only a prefix of it (``keep`` of its bytes), then the
    writer dies: as a killed driver leaves an object where writes are not atomic."""
    write = store.write_once

    def killed(name: str, data: bytes) -> None:
        if name.endswith(".rec"):
            monkeypatch.setattr(store, "write_once", write)
            write(name, data[:int(len(data) * keep)])
            raise Killed(name)
        write(name, data)

    monkeypatch.setattr(store, "write_once", killed)


def test_two_crashes_mid_commit_in_a_row(store: Store, monkeypatch: pytest.MonkeyPatch) -> None:
    writer = _log(store, 3)
    for crash in (4, 5):
        _kill_while_writing(store, monkeypatch)
        with pytest.raises(Killed):
            writer.append({"i": crash}, keep=2)
        writer = RecordLog(store, "log")  # the restarted driver
        assert writer.latest() == (3, {"i": 2, "pad": "x" * 7})
    assert writer.append({"i": 6}, keep=2) == 6
    assert RecordLog(store, "log").latest() == (6, {"i": 6})
    assert store.exists(writer.aside_name(4)) and store.exists(writer.aside_name(5))


def test_a_writer_that_appends_without_reading_first_sets_the_torn_record_aside(store: Store) -> None:
    writer = _log(store, 2)
    data = store.read(writer.name(2))
    assert data is not None
    _replace(store, writer.name(2), data[:-1])
    assert RecordLog(store, "log").append({"i": 9}) == 3
    assert store.read(writer.aside_name(2)) == data[:-1] and not store.exists(writer.name(2))
    # a crash after the aside copy, before the delete: both exist; the next recovery copies again
    _replace(store, writer.name(3), (store.read(writer.name(3)) or b"")[:5])
    store.write_once(writer.aside_name(3), b"partial copy")
    restarted = RecordLog(store, "log")
    assert restarted.latest() == (1, {"i": 0, "pad": "x" * 7}) and restarted.append({"i": 10}) == 4
    assert store.read(writer.aside_name(3)) is not None and len(store.read(writer.aside_name(3)) or b"") == 5


def test_a_torn_only_record_leaves_an_empty_log_and_is_not_reused(store: Store) -> None:
    writer = _log(store, 1)
    _replace(store, writer.name(1), (store.read(writer.name(1)) or b"")[:3])
    restarted = RecordLog(store, "log")
    assert restarted.latest() is None
    assert restarted.append({"i": 1}) == 2
    assert RecordLog(store, "log").latest() == (2, {"i": 1})
    # a set-aside record keeps its number used even when no record is left
    store.delete(restarted.name(2))
    assert RecordLog(store, "log").append({"i": 2}) == 2


def test_a_reader_reports_but_changes_nothing(store: Store, caplog: Any) -> None:
    writer = _log(store, 3)
    data = store.read(writer.name(3))
    assert data is not None
    _replace(store, writer.name(3), data[:-2])
    with caplog.at_level(logging.WARNING, logger="streamproof.records"):
        assert RecordLog(store, "log").latest() == (2, {"i": 1, "pad": "x" * 7})
    assert "00000000000000000003.rec is incomplete (truncated" in caplog.text
    assert "00000000000000000003.rec.torn" in caplog.text
    assert store.read(writer.name(3)) == data[:-2] and not store.exists(writer.aside_name(3))
    # the record completes (a writer was still writing it): readers see it
    _replace(store, writer.name(3), data)
    assert RecordLog(store, "log").latest() == (3, {"i": 2, "pad": "x" * 7})


def test_pruning_keeps_records_set_aside(store: Store) -> None:
    writer = _log(store, 3)
    _replace(store, writer.name(3), (store.read(writer.name(3)) or b"")[:-1])
    restarted = RecordLog(store, "log")
    restarted.latest()
    for i in range(5):
        restarted.append({"i": i}, keep=2)
    assert restarted.sequences() == [7, 8] and store.exists(restarted.aside_name(3))
