"""The Fries executor's whole checkpoint on a real S3 API (moto's server on 127.0.0.1, started
and stopped here): task files, plans, start markers, progress and control records, requests,
retention's deletes, the sink's marks and the sink itself, with no rename and no local path.

One job ``S -> M (2 workers) -> T`` with string keys runs twice: on a local directory without
interruption, and on ``s3://`` with two live reconfigurations and two driver crashes between
a batch's task writes and its commit (the batch's objects are on S3, its progress record is
not) - before the first commit and in the middle -, each followed by a new driver with
``resume=True``. The S3 run's committed sink rows equal the local run's (every tuple once;
the version a request tags is timing-dependent under Fries, so it is compared as a property:
per key, versions rise in request order, and the last request's version is emitted), and so
do the final states; the S3 checkpoint stays bounded and nothing is written to a local
path."""

from __future__ import annotations

import os
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spark_impl.reconfig import Executor, collect_results
from spark_impl.reconfig.objectstore import ObjectStoreSink, read_committed
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.sinks import CallbackSink, Sink
from spark_impl.reconfig.storage import batch_name
from spark_impl.records import RecordLog
from spark_impl.store import open_store
from spark_impl.workloads.soak import generated_job, swap

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.s3_server import s3_uri  # noqa: E402

pytestmark = pytest.mark.spark
BATCHES, SIZE = 6, 4
REQUESTS = {1: 1, 4: 2}  # step -> version (the crash at 3 is after request 1 completed)
CRASHES = (0, 3)  # before the first commit, and in the middle


class DriverCrash(RuntimeError):
    """The simulated crash of the driver."""


def _run(spark: Any, ckpt: str, sink: Sink, crash: bool) -> Executor:
    def executor(resume: bool) -> Executor:
        return Executor(spark, [generated_job(BATCHES * SIZE, SIZE)], "fries", ckpt, resume=resume, sink=sink,
                        retention=Retention(batches=2))

    ex = executor(False)
    for step in range(BATCHES + 8):
        if step in REQUESTS:
            assert ex.submit(0, swap(REQUESTS[step])) is None
        if crash and step in CRASHES:
            assert step == 0 or ex.state[0].committed.delays, "request 1 must be committed before the crash"

            def crash_before_commit(plan: Any) -> None:
                raise DriverCrash(f"killed after batch {plan.g}'s task writes, before its commit")

            ex.before_commit = crash_before_commit
            with pytest.raises(DriverCrash):
                ex.step()
            crashed = ex.g
            # the crashed batch's task files are on the store, its progress record is not
            assert any(n.startswith("L") for n in open_store(ckpt).list(batch_name(crashed)))
            ex = executor(True)
            assert ex.g == crashed + 1  # the crashed batch's number is never reused
            continue
        ex.step()
        if ex.done():
            break
    assert ex.done()
    return ex


def _rows_by_txn(rows: list[dict[str, Any]]) -> tuple[Counter[tuple[str, str, str, int]], dict[str, list[int]]]:
    """(operator, txn, key, value) multiset without the version, and each key's versions in
    tuple order."""
    plain: Counter[tuple[str, str, str, int]] = Counter()
    versions: dict[str, list[int]] = {}
    for r in sorted(rows, key=lambda r: int(r["txn"][2:])):
        value, version = (int(x) for x in r["value"].strip("[]").split(","))
        plain[(r["operator"], r["txn"], r["key"], value)] += 1
        versions.setdefault(r["key"], []).append(version)
    return plain, versions


def test_fries_checkpoint_on_s3_with_a_restart_equals_the_local_run(spark: Any, endpoint: str, tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # a URI mistaken for a local path would land here
    delivered: dict[int, list[dict[str, Any]]] = {}

    def collect(df: Any, batch_id: int) -> None:
        delivered[batch_id] = [r.asDict() for r in df.collect()]  # idempotent by batch id

    local = _run(spark, str(tmp_path / "local"), CallbackSink(collect), False)
    ckpt, table = s3_uri(endpoint, "ckpt", "fries"), s3_uri(endpoint, "results", "table")
    remote = _run(spark, ckpt, ObjectStoreSink(table), True)

    local_rows = [r for rows in delivered.values() for r in rows]
    s3_rows = read_committed(table).to_pylist()
    local_plain, local_versions = _rows_by_txn(local_rows)
    s3_plain, s3_versions = _rows_by_txn(s3_rows)
    assert s3_plain == local_plain and set(s3_plain.values()) == {1}
    assert {txn for _, txn, _, _ in s3_plain} == {f"S:{i}" for i in range(BATCHES * SIZE)}
    for versions in (local_versions, s3_versions):
        for tags in versions.values():  # each key's worker switched in request order
            assert tags == sorted(tags), versions
        assert max(max(tags) for tags in versions.values()) == max(REQUESTS.values()), versions
    (local_result,) = collect_results(local)
    (s3_result,) = collect_results(remote)
    assert s3_result.states == local_result.states
    assert sum(v for (op, _), v in s3_result.states.items() if op == "M") == BATCHES * SIZE
    assert len(s3_result.delays_ms) == len(REQUESTS)

    store = open_store(ckpt)
    assert len(store.list("batches")) <= 4, store.list("batches")
    assert len(RecordLog(store, "progress").sequences()) <= 2
    assert len(RecordLog(store, "control").sequences()) <= 2
    assert {n for n in store.list("")} <= {"batches", "control", "progress", "requests", "sink.json"} | {
        n for n in store.list("") if n.startswith("jobs-")}
    assert len([n for n in store.list("") if n.startswith("jobs-")]) == 1  # earlier drivers' jobs files collected
    assert sorted(os.listdir(tmp_path)) == ["local"], os.listdir(tmp_path)
