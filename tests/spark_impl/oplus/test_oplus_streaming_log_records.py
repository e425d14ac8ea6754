"""The durable checkpoint of a live O+ query (``spark_impl.oplus.streaming_log``), without Spark.

* requests (:meth:`~spark_impl.oplus.streaming_log.Log.requests`): "a torn newest record (a
  crash mid-commit where writes are not atomic) is a commit that never happened" - a driver
  killed mid-``rescale`` leaves no request -, an altered older one is refused
  (``CorruptStateError``), never skipped; ``drop_requests`` never deletes the newest request
  (its id is the next id's base);
* ``commit(b)`` of a batch without a record is a KeyError;
* the durable form of a time: ``encode_time`` "A watermark or bound as JSON: an int, ``None``
  for -inf, ``"inf"`` for +inf", ``decode_time`` its inverse (a finite time stays an exact
  ``int``); a commit record with finite and infinite times reads back equal;
* **Bounded storage** (:meth:`~spark_impl.oplus.streaming_log.Log.prune`): commit records older
  than the last ``keep`` and already delivered are deleted, state parts of batches no retained
  commit names (an uncommitted newer batch's are kept, also when nothing is committed yet),
  outputs of delivered batches, and all but the last two ``delivered`` records; objects not
  named ``b<digits>`` stay; batch ids use all 12 digits of a part's name.
"""

from __future__ import annotations

import json
import math
import os
from pathlib import Path
from typing import Any

import pytest

from spark_impl.oplus.streaming_log import Commit, Log, decode_time, encode_time, write_part
from spark_impl.records import CorruptStateError, write_pickle_record


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


@pytest.mark.parametrize("value, form", [(float("inf"), "inf"), (float("-inf"), None), (7.0, 7), (-3.0, -3), (0.0, 0),
                                         (2**60 + 1, 2**60 + 1), (-(2**62) + 1, -(2**62) + 1)])
def test_a_time_is_written_in_its_documented_form_and_read_back(value: float, form: Any) -> None:
    written = encode_time(value)
    assert written == form and type(written) is type(form)
    assert decode_time(json.loads(json.dumps(written))) == value


def test_a_commit_record_reads_back_equal() -> None:
    record = Commit(12, {0: 2, 1: 1}, {0: 3, 1: 1}, 3, {(0, 0): 5.0, (0, 1): math.inf, (1, 0): -math.inf},
                    {0: 5.0, 1: -math.inf}, [4, 9], {0: 2, 1: 0}, 17,
                    [{"request": 9, "job": 0, "batch": 12, "watermark": 5, "before": 2, "after": 3}], {0: 4})
    assert Commit.from_json(json.loads(json.dumps(record.to_json()))) == record


FOREIGN = ("other", "x0001", "bz0001")
"""Objects under ``state/`` and ``out/`` that are no batch's (``b<digits>``)."""


@pytest.mark.parametrize("keep, delivered, base, committed", [(2, 6, 0, 10), (1, 9, 10**11, 10), (2, -1, 0, 0)],
                         ids=["keep 2", "keep 1, ids above 10**11", "nothing committed"])
def test_prune_keeps_what_the_documented_bound_keeps(tmp_path: Path, keep: int, delivered: int, base: int,
                                                     committed: int) -> None:
    log = Log(str(tmp_path))
    for batch in range(committed):
        log.write_commit(Commit(base + batch, {0: 1}, {0: 1}, 1))
    for batch in range(committed + 1):  # the last: written by a round, not committed yet
        for kind in ("state", "out"):
            write_part(log.location, kind, base + batch, 0, [batch])
    for kind in ("state", "out"):
        for other in FOREIGN:
            write_pickle_record(log.store, f"{kind}/{other}/p00000.pkl", [0])
    marks = [b for b in (delivered - 2, delivered - 1, delivered) if b >= 0]
    for batch in marks:
        log.mark_delivered(base + batch)
    log.prune(keep)
    kept = sorted(set(range(max(0, committed - keep), committed)) | set(range(delivered + 1, committed)))
    assert [b - base for b in log.committed()] == kept
    for kind, want in (("state", kept + [committed]), ("out", list(range(delivered + 1, committed + 1)))):
        names = log.store.list(kind)
        assert set(FOREIGN) <= set(names)
        assert sorted(int(n[1:]) - base for n in names if n not in FOREIGN) == want, kind
    assert len(log.deliveries.sequences()) == min(2, len(marks))
