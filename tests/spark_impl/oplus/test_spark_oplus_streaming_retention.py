"""The live O+ checkpoint stays flat on a steady stream, and what a restart reads is refused
when damaged. No Spark: the front end's commit protocol
(:func:`spark_impl.oplus.streaming.commit_batch`, the request compaction, the log's prune and
delivery records) run batch after batch on a real checkpoint, with the state and output parts
the tasks would write.

``streamproof soak --front-end oplus --batches 300`` measured the checkpoint 1.55x at the end
with earlier bounds: every commit record kept the last 100 rescales, the request list the last 1000
applied requests. The flatness test fails with those bounds (``KEEP_RESCALES = 100``,
``KEEP_APPLIED = 1000``): up to 22,186 B in batches 360-399 against 9,342 B in 100-139
(2.4x); with the new bounds 4,553 against 4,552 B.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from spec.errors import InputError
from spark_impl.oplus.streaming import OplusStreamingRun, commit_batch, start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit, Log, load_part, part_name, write_part
from spark_impl.records import CorruptStateError
from spark_impl.workloads.soak_oplus import Rescales

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from conformance.oplus.engines.live import applied_counts

KEYS = 50
T0 = 10 ** 7
"""Event times start here, so numbers keep their number of digits (the test is about growth
with batches and rescales, not with the width of a number)."""


def _bytes(directory: Path) -> int:
    return sum(os.path.getsize(os.path.join(d, f)) for d, _, files in os.walk(directory) for f in files)


def _batch(run: OplusStreamingRun, batch: int, rows: int = 200) -> Commit:
    """One batch as the front end commits it: every instance's parts, the commit, the delivery
    record, the prune (the state: ``KEYS`` keys with a window sum each, as the soak's job)."""
    prev = run.log.latest() or Commit(-1, {0: 2}, {0: 2}, 0, watermark={0: -math.inf})
    partitions = prev.parallelism[0]
    for index in range(partitions):
        keys = {f"k{k}": {T0 + batch * rows: k} for k in range(KEYS) if k % partitions == index}
        write_part(run.log.location, "state", batch, index, [(0, keys)])
        write_part(run.log.location, "out", batch, index, [(0, T0 + batch * rows, key, 1) for key in keys])
    mark = float(T0 + (batch + 1) * rows - 1)
    record = commit_batch(run, prev, Commit(batch, {}, {}, partitions, {(0, 0): mark}, {0: mark}, outputs=KEYS))
    run.log.mark_delivered(batch)
    run.log.prune(2)
    return record


def test_the_checkpoint_stays_flat_however_many_rescales(tmp_path: Path) -> None:
    run = OplusStreamingRun(None, [oplus_job("sliding-sum", 200, 400, parallelism=2)], Log(str(tmp_path)))
    soak = Rescales(run)
    sizes: dict[int, int] = {}
    for batch in range(400):
        if batch % 5 == 0:  # the soak's rescale every 5 batches, 2 <-> 3, while one is not in progress
            assert not soak.in_progress(), "the rescale of 5 batches ago must be applied"
            soak.submit(3 if batch % 10 == 0 else 2)
        record = _batch(run, batch)
        sizes[batch] = _bytes(tmp_path)
    assert record.rescaled == {0: 80}, "every rescale counted, also those out of the history window"
    assert 0 < len(record.rescales) <= 8 and len(record.applied) <= 8
    assert len(run.log.requests()) <= 8 and len(run.log.committed()) <= 2
    # the largest size over 40 batches (4 rescale cycles of 2 and 3 instances), batch ids of 3 digits
    start, end = max(sizes[b] for b in range(100, 140)), max(sizes[b] for b in range(360, 400))
    assert end <= 1.01 * start, f"not flat: up to {start} B in batches 100-139, up to {end} B in 360-399"


def test_the_suite_counts_every_applied_rescale_after_compaction(tmp_path: Path) -> None:
    """``conformance.oplus.engines.live``'s ``applied`` oracle reads the per-job counts: with more
    requests than the log keeps, it still sees every one (one live query runs many cases)."""
    jobs = [oplus_job("sliding-sum", 2, 4, parallelism=2) for _ in range(3)]
    run = OplusStreamingRun(None, jobs, Log(str(tmp_path)))
    prev = Commit(-1, {j: 2 for j in range(3)}, {j: 2 for j in range(3)}, 2, watermark={j: -math.inf for j in range(3)})
    for batch in range(30):
        run.rescale(1 + batch % 3, job=batch % 2)
        if batch == 3:
            run.rescale(2, job=2, watermark=10 ** 9)  # never reached: not applied
        prev = commit_batch(run, prev, Commit(batch, {}, {}, 2, {}, {j: float(batch) for j in range(3)}))
    assert len(run.log.requests()) < 30
    assert applied_counts(str(tmp_path), 3) == [15, 15, 0]


def test_a_damaged_part_or_commit_is_refused_not_used(location: str) -> None:
    log = Log(location)
    write_part(log.location, "state", 7, 1, [(0, {"ann": {0: 3}})])
    assert load_part(log.location, "state", 7, 1) == [(0, {"ann": {0: 3}})]
    assert load_part(log.location, "state", 7, 0) is None  # absent: an instance with no keys
    name = part_name("state", 7, 1)
    data = log.store.read(name)
    assert data is not None
    log.store.write_once(name, data[:-3])  # torn
    with pytest.raises(CorruptStateError, match="truncated"):
        load_part(log.location, "state", 7, 1)
    log.write_commit(Commit(3, {0: 1}, {0: 1}, 1))
    raw = log.store.read(log.commits.name(3))
    assert raw is not None
    log.store.write_once(log.commits.name(3), raw.replace(b'"batch":3', b'"batch":4'))  # altered
    with pytest.raises(CorruptStateError, match="checksum"):
        log.latest()


class _Stream:
    isStreaming = True
    columns = ["ts", "key", "value"]


def test_a_uri_checkpoint_needs_a_hadoop_path_for_spark_own_checkpoint() -> None:
    uri = "s3://test:secret@bucket/ckpt?region=us-east-1"
    with pytest.raises(InputError, match="query_checkpoint") as caught:
        start_oplus_query(None, _Stream(), [oplus_job("wordcount", 1, 1)], checkpoint_dir=uri, sink=None)  # type: ignore[arg-type]
    assert "secret" not in str(caught.value)


def test_a_checkpoint_of_the_old_layout_is_refused(tmp_path: Path) -> None:
    """The old O+ log layout was ``commits/<b>.json`` + ``requests.json``: resuming it
    would start the O+ state from scratch while Spark's offsets continue."""
    old = tmp_path / "oplus" / "commits"
    old.mkdir(parents=True)
    (old / "000000000004.json").write_text("{}", encoding="utf-8")
    with pytest.raises(InputError, match="older streamproof"):
        start_oplus_query(None, _Stream(), [oplus_job("wordcount", 1, 1)], checkpoint_dir=str(tmp_path),
                          sink=None)  # type: ignore[arg-type]


def test_request_ids_are_never_reused_after_compaction_and_restart(tmp_path: Any) -> None:
    run = OplusStreamingRun(None, [oplus_job("sliding-sum", 2, 4, parallelism=2)], Log(str(tmp_path)))
    prev = Commit(-1, {0: 2}, {0: 2}, 2, watermark={0: -math.inf})
    issued = []
    for batch in range(20):
        issued.append(run.rescale(2 + batch % 2))
        prev = commit_batch(run, prev, Commit(batch, {}, {}, 2, {}, {0: float(batch)}))
    restarted = OplusStreamingRun(None, run.jobs, Log(str(tmp_path)))  # a new driver on the same checkpoint
    issued.append(restarted.rescale(3))
    assert issued == sorted(set(issued)), "ids rise, also across compaction and a restart"
    record = commit_batch(restarted, prev, Commit(20, {}, {}, 2, {}, {0: 20.0}))
    assert record.rescales[-1]["request"] == issued[-1] and record.rescaled == {0: 21}
