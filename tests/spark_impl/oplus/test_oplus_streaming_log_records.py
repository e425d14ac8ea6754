"""The durable checkpoint of a live O+ query (``spark_impl.oplus.streaming_log``), without Spark.

* requests (:meth:`~spark_impl.oplus.streaming_log.Log.requests`): "a torn newest record (a
  crash mid-commit where writes are not atomic) is a commit that never happened" - a driver
  killed mid-``rescale`` leaves no request -, an altered older one is refused
  (``CorruptStateError``), never skipped; ``drop_requests`` never deletes the newest request
  (its id is the next id's base);
* ``commit(b)`` of a batch without a record is a KeyError.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from spark_impl.oplus.streaming_log import Log
from spark_impl.records import CorruptStateError


def _tear(path: str) -> bytes:
    with open(path, "rb") as handle:
        data = handle.read()
    with open(path, "wb") as handle:
        handle.write(data[: len(data) // 2])
    return data


def test_the_commit_of_a_batch_without_a_record_is_a_key_error(tmp_path: Path) -> None:
    with pytest.raises(KeyError):
        Log(str(tmp_path)).commit(5)


def test_a_torn_newest_request_is_no_request_and_a_torn_older_one_is_refused(tmp_path: Path) -> None:
    log = Log(str(tmp_path))
    zeroth, first, second = log.add_request(1, 1, 3), log.add_request(0, 2, None), log.add_request(0, 3, 7)
    newest = os.path.join(log.location, log.request_log.name(second))
    data = _tear(newest)  # a driver killed while it wrote the request
    assert [r["id"] for r in log.requests()] == [zeroth, first]
    with open(newest, "wb") as handle:
        handle.write(data)
    _tear(os.path.join(log.location, log.request_log.name(first)))
    with pytest.raises(CorruptStateError):
        log.requests()


@pytest.mark.parametrize("count", [1, 3, 12])
def test_dropping_every_request_keeps_the_newest(tmp_path: Path, count: int) -> None:
    log = Log(str(tmp_path))
    idents = [log.add_request(0, 2, None) for _ in range(count)]
    log.drop_requests(idents)
    assert log.request_log.sequences() == [idents[-1]]
    assert log.add_request(0, 3, None) > idents[-1]  # ids are never reused
