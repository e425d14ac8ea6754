"""Each front end's commit log after a crash mid-commit (a torn newest commit record, where
writes are not atomic: a local disk without rename, ``file://``, HDFS), without Spark: the
restart reads the previous commit, the next commit goes above (or, for O+, the replayed batch
commits under its own id after the torn record is set aside); an altered record is still
refused (spark_impl.records module docstring)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_impl.records import CorruptStateError
from spark_impl.store import Store, open_store
from spark_impl.dgs.streaming_store import Store as DgsStore
from spark_impl.lru import LRU
from spark_impl.oplus.streaming_log import Log
from spark_impl.reconfig import progress
from spark_impl.reconfig.control import ControlReader, control_log, write_control
from spark_impl.reconfig.progress import Progress, read_progress, write_progress
from spark_impl.dgs.streaming_store import Commit as DgsCommit
from spark_impl.oplus.streaming_log import Commit as OplusCommit


def _tear(store: Store, name: str) -> bytes:
    data = store.read(name)
    assert data is not None
    store.delete(name)
    store.write_once(name, data[:len(data) - 5])
    return data


@pytest.fixture(params=["local", "file"])
def location(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    return str(tmp_path / "ckpt") if request.param == "local" else f"file://{tmp_path}/ckpt"


def test_fries_progress_log(location: str, monkeypatch: pytest.MonkeyPatch) -> None:
    write_progress(location, [Progress(offset=4, history=[1])], 1)
    write_progress(location, [Progress(offset=8, history=[1, 2])], 2)
    store = open_store(location)
    _tear(store, "progress/00000000000000000002.rec")
    monkeypatch.setattr(progress, "_LOGS", LRU(16))  # a restarted driver (a new process)
    assert read_progress(location) == (1, [Progress(offset=4, history=[1])])
    write_progress(location, [Progress(offset=8, history=[1, 2])], 2)
    assert store.list("progress") == ["00000000000000000002.rec.torn", "00000000000000000003.rec"]
    monkeypatch.setattr(progress, "_LOGS", LRU(16))
    assert read_progress(location) == (2, [Progress(offset=8, history=[1, 2])])


def test_fries_control_log_goes_above_a_torn_record(location: str) -> None:
    log = control_log(location)
    write_control(log, [])
    write_control(log, [])
    _tear(log.store, log.name(2))
    restarted = control_log(location)  # the restarted driver publishes first
    assert write_control(restarted, []) == 3
    assert restarted.store.exists(restarted.aside_name(2)) and not restarted.exists(2)
    reader = ControlReader(location)
    reader.start(3)
    assert reader.seq == 3


def test_oplus_commit_log(location: str) -> None:

    log = Log(location)
    log.write_commit(OplusCommit(0, {0: 1}, {0: 1}, 1, outputs=3))
    log.write_commit(OplusCommit(1, {0: 1}, {0: 2}, 1, outputs=4))
    torn = _tear(log.store, log.commits.name(1))
    restarted = Log(location)
    found = restarted.latest()
    assert found is not None and found.batch == 0  # batch 1 is replayed
    restarted.write_commit(OplusCommit(1, {0: 1}, {0: 2}, 1, outputs=4))  # the replayed batch's commit
    assert restarted.store.read(restarted.commits.aside_name(1)) == torn[:len(torn) - 5]
    again = Log(location).latest()
    assert again is not None and again.batch == 1 and again.parallelism == {0: 2}
    # the delivery log: a torn delivery record means the batch is delivered again
    restarted.mark_delivered(0)
    restarted.mark_delivered(1)
    _tear(restarted.store, restarted.deliveries.name(2))
    assert Log(location).delivered() == 0


def test_oplus_torn_newest_request_is_not_a_request(location: str) -> None:
    log = Log(location)
    assert log.add_request(0, 3, None) == 1
    assert log.add_request(1, 2, 40) == 2
    _tear(log.store, log.request_log.name(2))  # killed inside rescale(): it never returned
    restarted = Log(location)
    assert restarted.requests() == [{"id": 1, "job": 0, "parallelism": 3, "watermark": None}]
    assert restarted.add_request(1, 2, 40) == 3  # the request made again: a new id
    assert restarted.store.exists(restarted.request_log.aside_name(2))
    assert [r["id"] for r in Log(location).requests()] == [1, 3]
    _tear(log.store, log.request_log.name(1))  # torn, not the newest: refused
    with pytest.raises(CorruptStateError, match="00000000000000000001.rec: truncated"):
        Log(location).requests()


def test_oplus_altered_commit_is_refused(location: str) -> None:

    log = Log(location)
    log.write_commit(OplusCommit(0, {0: 1}, {0: 1}, 1))
    log.write_commit(OplusCommit(1, {0: 1}, {0: 1}, 1))
    data = log.store.read(log.commits.name(1)) or b""
    log.store.delete(log.commits.name(1))
    log.store.write_once(log.commits.name(1), data + b" ")
    with pytest.raises(CorruptStateError, match="longer than written"):
        Log(location).latest()


def test_dgs_commit_log(location: str) -> None:

    store = DgsStore(location)
    jobs = [("t", {"plan": 1}, 0)]
    store.write(DgsCommit(jobs, 0, "b000000000000", [], -1))
    store.write(DgsCommit(jobs, 0, "b000000000000", [], 0))  # the delivery record
    store.write(DgsCommit(jobs, 1, "b000000000001", [], 0))
    _tear(store.location, store.log.name(3))
    restarted = DgsStore(location)
    found = restarted.read()
    assert found is not None and (found.batch, found.delivered) == (0, 0)  # batch 1 is replayed
    restarted.write(DgsCommit(jobs, 1, "b000000000001", [], 0))
    assert restarted.log.sequences()[-1] == 4 and restarted.location.exists(restarted.log.aside_name(3))
    again = DgsStore(location).read()
    assert again is not None and again.batch == 1
