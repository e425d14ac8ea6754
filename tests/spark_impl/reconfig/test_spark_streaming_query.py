"""The Structured Streaming front end (spark_impl.reconfig.streaming): a file-source query
whose micro-batches run on the reconfiguration executor; a request made mid-stream under
Fries is serializable and equals a serial execution; a restart from the query's checkpoint
(with the last Structured Streaming commit removed, so that batch is replayed) loses and
duplicates nothing."""

from __future__ import annotations

import json
import os
import sys
import time
import threading
from pathlib import Path
from typing import Any
from types import SimpleNamespace

import pytest

from spec.fries.scenario import Scenario, scenario_from_json
from spark_impl.reconfig.api import collect_results, scenario_job
from spark_impl.reconfig.model import CatalogueLogic, CatalogueTransform, Request, Update
from spark_impl.reconfig.streaming import StreamingRun, start_query, DriverCrash

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.spark_checks import problems, serial_order  # noqa: E402

pytestmark = pytest.mark.spark

FLOW = {"operators": [{"name": "S", "kind": "source"}, {"name": "A", "kind": "one-to-one"},
                      {"name": "B", "kind": "one-to-one"}],
        "edges": [["S", "A"], ["A", "B"]]}
FUNCTIONS = {"A": {"op": "map", "mul": 2, "add": 1}, "B": {"op": "map", "mul": 1, "add": 3}}
UPDATES = {"A": {"function": {"op": "map", "mul": 3, "add": 0}, "state": {"mul": 2, "add": 1}},
           "B": {"function": {"op": "map", "mul": 1, "add": 7}, "state": {"mul": 0, "add": 5}}}


def _scenario(tuples: list[tuple[int, Any]], reconfigure: bool) -> Scenario:
    return scenario_from_json({
        "dataflow": FLOW, "functions": FUNCTIONS, "parallelism": {"A": 2, "B": 1},
        "sources": {"S": [{"key": k, "value": v} for k, v in tuples]},
        "reconfigurations": [{"at": 0, "updates": UPDATES}] if reconfigure else [],
        "timing": {"operator_cost": {"A": 25, "B": 25}, "fcm_delay": [0, 400], "seed": 16},
    })


def _request(scenario: Scenario) -> Request:
    (r,) = scenario.reconfigurations
    flow = scenario.dataflow
    return Request({o: Update(CatalogueLogic(u.function, flow.children(o)), CatalogueTransform(u.state))
                    for o, u in r.updates.items()})


def _write_file(directory: Path, i: int, rows: int) -> None:
    lines = [json.dumps({"key": (i * rows + r) % 5, "value": i * 10 + r}) for r in range(rows)]
    tmp = directory.parent / f".f{i}.json"
    tmp.write_text("\n".join(lines) + "\n")
    os.replace(tmp, directory / f"f{i}.json")


def _start(spark: Any, data: Path, ckpt: Path, scenario: Scenario) -> StreamingRun:
    job = scenario_job(scenario, batch_size=1 << 30)
    job = type(job)(job.dataflow, job.logic, job.source, job.parallelism, (), job.timing, job.trace)
    stream = spark.readStream.schema("key long, value long").option("maxFilesPerTrigger", 1).json(str(data))
    return start_query(spark, job, stream, scheduler="fries", checkpoint_dir=str(ckpt))


def _ingested(run: StreamingRun) -> list[tuple[int, Any]]:
    return [run.source.get(i)[2:] for i in range(run.source.count())]


def test_request_mid_stream_is_serializable_and_equals_a_serial_execution(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    for i in range(4):
        _write_file(data, i, 6)
    template = _scenario([(0, 0)], reconfigure=True)
    run = _start(spark, data, tmp_path / "ckpt", template)
    try:
        deadline = time.monotonic() + 40
        # submit while an executor batch of the second Structured Streaming batch runs
        while not (1 in run.batches and run.executor.running) and time.monotonic() < deadline:
            time.sleep(0.002)
        assert 1 in run.batches, "the second Structured Streaming batch never started"
        assert run.submit(_request(template)) is None
        run.query.processAllAvailable()
        assert not run.in_progress()
    finally:
        run.stop()
    assert sorted(run.batches) == [0, 1, 2, 3]
    (result,) = collect_results(run.executor)
    tuples = _ingested(run)
    assert len(tuples) == 24 and len(result.outputs) == 24
    assert len(result.delays_ms) == 1 and not result.rejected
    scenario = _scenario(tuples, reconfigure=True)
    assert problems(scenario, result) == []
    # the request really was mid-stream: tuples before and after it in the serial order
    order = serial_order(scenario, result.schedule)
    assert order is not None and 6 <= order.index("R1") < len(order) - 6


def test_restart_from_checkpoint_loses_and_duplicates_nothing(spark: Any, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    ckpt = tmp_path / "ckpt"
    template = _scenario([(0, 0)], reconfigure=False)
    for i in range(2):
        _write_file(data, i, 5)
    first = _start(spark, data, ckpt, template)
    try:
        first.query.processAllAvailable()
    finally:
        first.stop()
    assert sorted(first.batches) == [0, 1]
    # a crash after the executor committed batch 1 but before Structured Streaming did:
    for name in ("1", ".1.crc"):
        (ckpt / "query" / "commits" / name).unlink(missing_ok=True)
    for i in range(2, 4):
        _write_file(data, i, 5)
    second = _start(spark, data, ckpt, template)
    try:
        second.query.processAllAvailable()
    finally:
        second.stop()
    assert second.replayed == [1]
    (result,) = collect_results(second.executor)
    tuples = _ingested(second)
    assert len(tuples) == 20
    assert sorted(t[1] for t in result.outputs) == sorted(f"S:{i}" for i in range(20))
    assert problems(_scenario(tuples, reconfigure=False), result) == []


class _FakeExecutor:
    """Just enough of an Executor for StreamingRun.step: batches of 4 tuples, a commit per batch."""

    def __init__(self) -> None:
        self.lock = threading.RLock()
        self.g, self.offset = 1, 0
        self.committed: list[int] = []
        self.before_commit: Any = None

    def step(self) -> None:
        plan = SimpleNamespace(g=self.g, ranges={0: (self.offset, self.offset + 4)})
        self.offset += 4
        if self.before_commit is not None:  # the driver's seam: tasks ran, now the commit
            self.before_commit(plan)
        self.committed.append(plan.g)
        self.g += 1


def test_crash_before_commit_fires_once_between_tasks_and_commit_and_the_hook_runs_around_steps() -> None:
    fake = _FakeExecutor()
    calls: list[tuple[str, int, bool]] = []

    class Hook:
        def before(self, executor: Any) -> Any:
            calls.append(("before", executor.g, executor.lock._is_owned()))
            return executor.g

        def after(self, executor: Any, token: Any) -> None:
            calls.append(("after", token, executor.lock._is_owned()))

    run = StreamingRun(None, fake, None, hook=Hook())  # type: ignore[arg-type]
    run.crash_before_commit(6)
    run.step()  # tuples 0-4: below the crash point, committed
    with pytest.raises(DriverCrash, match="executor batch 2's tasks .tuples up to 8. and before its commit"):
        run.step()
    assert fake.committed == [1] and fake.g == 2  # batch 2 ran its tasks, never committed
    assert run.crashed is not None and run.crash_offset is None and fake.before_commit is None
    run.step()  # one-shot: the next step commits again (the fake reuses the number 2)
    assert fake.committed == [1, 2]
    assert calls == [("before", 1, True), ("after", 1, False), ("before", 2, True), ("before", 2, True),
                     ("after", 2, False)]
