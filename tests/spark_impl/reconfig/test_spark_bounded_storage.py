"""Bounded storage and the exactly-once Parquet sink of the reconfiguration executor
(spark_impl.reconfig.retention, spark_impl.reconfig.sinks), with string keys.

One run of ``S -> M (2 workers) -> T``: a request every three batches, a driver restart in
the middle that also loses the sink's last delivery mark (a crash after the Parquet write,
before the mark: the delivery is made again under the same batch id). Checked: the batch
directories, request files and the checkpoint's size stay bounded; the Parquet table holds
every output exactly once; M's state counts every tuple exactly once."""

from __future__ import annotations

import os
import shutil
import random
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from spark_impl.reconfig import Executor, collect_results, run_scenarios, scenario_job
from spark_impl.workloads.footprint import disk_bytes
from spark_impl.workloads.soak import generated_job, swap
from spark_impl.reconfig.retention import Retention, needed_by
from spark_impl.reconfig.progress import Progress
from spark_impl.reconfig.sinks import ParquetSink, CallbackSink
from support.paths import TESTS
from support.spark_checks import random_scenario

pytestmark = pytest.mark.spark

BATCHES, SIZE = 9, 4


def _job() -> Any:
    return generated_job(BATCHES * SIZE, SIZE)


def _executor(spark: Any, ckpt: Path, table: Path, resume: bool) -> Executor:
    return Executor(spark, [_job()], "fries", str(ckpt), resume=resume, sink=ParquetSink(str(table), value_type="string"),
                    retention=Retention(batches=2))


def test_bounded_checkpoint_and_exactly_once_parquet_across_a_restart(spark: Any, tmp_path: Path) -> None:
    ckpt, table = tmp_path / "ckpt", tmp_path / "table"
    ex = _executor(spark, ckpt, table, resume=False)
    sizes: dict[int, int] = {}
    version = 0
    for step in range(BATCHES + 8):
        if step in (1, 5):  # not at the restart step: a request not committed before a crash is lost
            version += 1
            assert ex.submit(0, swap(version)) is None
        if step == 4:
            saved = (ckpt / "sink.json").read_bytes()
        ex.step()
        if step == 4:
            # crash after the sink wrote this delivery, before its mark; then a driver restart
            (ckpt / "sink.json").write_bytes(saved)
            ex = _executor(spark, ckpt, table, resume=True)
        batch_dirs = os.listdir(ckpt / "batches")
        assert len(batch_dirs) <= 4, batch_dirs
        assert step == 0 or len(os.listdir(ckpt / "requests")) <= 3
        sizes[step] = disk_bytes(str(ckpt))
        if ex.done():
            break
    assert ex.done()
    assert max(sizes.values()) <= 1.5 * sizes[3], sizes
    rows = spark.read.parquet(str(table)).collect()
    counts = Counter(r["txn"] for r in rows)
    assert sorted(counts) == sorted(f"S:{i}" for i in range(BATCHES * SIZE)) and set(counts.values()) == {1}
    assert {r["key"] for r in rows} == {f"k{i}" for i in range(7)}
    by_key: dict[str, list[int]] = {}
    for r in sorted(rows, key=lambda r: int(r["txn"][2:])):
        by_key.setdefault(r["key"], []).append(int(r["value"].strip("[]").split(",")[1]))
    for tags in by_key.values():  # each key's worker switched versions in request order
        assert tags == sorted(tags) and tags[-1] == version, by_key
    (result,) = collect_results(ex)
    assert result.states[("M", "k0")] == len(range(0, BATCHES * SIZE, 7))
    assert sum(v for (op, _), v in result.states.items() if op == "M") == BATCHES * SIZE


def test_a_job_needs_its_pending_undelivered_and_last_committed_batches() -> None:
    prog = Progress(history=[3, 5, 8], pending=[9])
    assert needed_by(prog, 1, None) == {8, 9}
    assert needed_by(prog, 2, None) == {5, 8, 9}
    assert needed_by(prog, 1, 3) == {5, 8, 9}  # 5 and 8 not delivered yet
    assert needed_by(Progress(pending=[4]), 2, None) == {4}
    assert needed_by(Progress(), 2, None) == set()
    with pytest.raises(ValueError):
        Retention(batches=0)


def test_retention_off_keeps_every_batch(spark: Any, tmp_path: Path) -> None:
    ex = Executor(spark, [_job()], "fries", str(tmp_path))
    for _ in range(4):
        ex.step()
    assert len([n for n in os.listdir(tmp_path / "batches") if n.startswith("g")]) == 4
    shutil.rmtree(tmp_path / "batches")


@pytest.mark.slow
def test_retention_and_sink_equal_a_full_run_on_random_scenarios_with_restarts(spark: Any, tmp_path: Path) -> None:
    """Differential: random scenarios with per-job crashes (timing.restarts) and requests, run
    with Retention(1) and a callback sink, deliver exactly the committed outputs of a run that
    keeps everything, and end in the same states (epoch: deterministic switch points)."""
    sys.path.insert(0, str(TESTS))

    scenarios = [random_scenario(random.Random(700 + seed), restarts=True, costly=False) for seed in range(3)]
    expected = run_scenarios(spark, scenarios, "epoch", batch_size=3)
    rows: list[tuple[Any, ...]] = []
    sink = CallbackSink(lambda df, batch_id: rows.extend(tuple(r) for r in df.collect()), key_type="long",
                        value_type="long")
    ex = Executor(spark, [scenario_job(sc, batch_size=3) for sc in scenarios], "epoch", str(tmp_path), sink=sink,
                  retention=Retention(batches=1))
    ex.run()
    # each job's last committed batch (a job that ended early keeps its own) and the last one
    assert len(os.listdir(tmp_path / "batches")) <= len(scenarios) + 1
    for s, (want, got) in enumerate(zip(expected, collect_results(ex))):
        delivered = Counter((op, txn, key, value) for job, _, op, txn, key, value in rows if job == s)
        assert delivered == Counter(want.outputs), f"scenario {s}"
        assert got.states == want.states
