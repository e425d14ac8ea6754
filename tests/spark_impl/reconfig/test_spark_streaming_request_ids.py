"""Regression: a request ``submit`` ted between batches keeps its number (no Spark needed).

Found on the live path (Fries live case 4, ``streaming_cases(8, 0)[4]``: two requests at
``at=1``, R1 updates A and B, R2 updates B): the Structured Streaming front end submits from
another thread while ``foreachBatch`` steps the executor. A request submitted between two
batches is queued; the next batch's planning took it off the queue, but it is made (numbered)
only once that batch's first tasks started (``Executor._wait_for_tasks``). In that window it
was neither queued nor active, so ``submit`` accepted the second request, numbered it R1, and
the first one then became R2 (its updates logged as R2, R1 applied nowhere). A fake
SparkContext whose batch blocks in ``collect`` holds the executor in exactly that window.
"""

from __future__ import annotations

import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from spec.fries.scenario import scenario_from_json
from spark_impl.reconfig import scenario_job
from spark_impl.reconfig.driver import Executor

CASE = {  # Fries live case 4 (the scenario that failed on every live run)
    "dataflow": {"operators": [{"name": "S0", "kind": "source", "unique": False},
                               {"name": "A", "kind": "one-to-one", "unique": False},
                               {"name": "B", "kind": "one-to-one", "unique": False}],
                 "edges": [["S0", "A"], ["A", "B"], ["S0", "B"]]},
    "functions": {"A": {"op": "map", "mul": 2, "add": 0}, "B": {"op": "fold", "mul": 2}},
    "sources": {"S0": [{"key": 2, "value": 3}, {"key": 3, "value": -2}, {"key": 0, "value": 5},
                       {"key": 2, "value": 2}, {"key": 0, "value": 6}, {"key": 1, "value": 2}]},
    "reconfigurations": [
        {"at": 1, "updates": {"A": {"function": {"op": "map", "mul": 1, "add": -1}, "state": {"mul": 1, "add": 1}},
                              "B": {"function": {"op": "map", "mul": 2, "add": 1}, "state": {"mul": 1, "add": -1}}}},
        {"at": 1, "updates": {"B": {"function": {"op": "map", "mul": 1, "add": 3}, "state": {"mul": 0, "add": 1}}}}],
    "parallelism": {"A": 3},
    "timing": {"seed": 258, "channel_delay": [0.0, 5.0], "fcm_delay": [11.0, 31.0]},
}


class _BlockingRDD:
    """Every transformation returns itself; ``collect`` (the batch's Spark job, run by the
    executor in a worker thread) signals ``collecting`` and blocks until ``release``."""

    def __init__(self) -> None:
        self.collecting = threading.Event()
        self.release = threading.Event()

    def mapPartitionsWithIndex(self, fn: Any) -> _BlockingRDD:  # noqa: N802 - PySpark's name
        return self

    def partitionBy(self, n: int, fn: Any) -> _BlockingRDD:  # noqa: N802 - PySpark's name
        return self

    def values(self) -> _BlockingRDD:
        return self

    def filter(self, fn: Any) -> _BlockingRDD:
        return self

    def collect(self) -> list[Any]:
        self.collecting.set()
        assert self.release.wait(60), "the test never released the batch"
        return []


class _FakeContext:
    defaultParallelism = 2

    def __init__(self, rdd: _BlockingRDD) -> None:
        self.rdd = rdd

    def getConf(self) -> dict[str, str]:  # noqa: N802 - PySpark's name
        return {}

    def parallelize(self, data: Any, n: int) -> _BlockingRDD:
        return self.rdd


class _FakeSpark:
    def __init__(self, rdd: _BlockingRDD) -> None:
        self.sparkContext = _FakeContext(rdd)


def test_submit_refused_while_queued_request_waits_to_be_made(tmp_path: Path) -> None:
    job = scenario_job(scenario_from_json(CASE))
    first, second = (p.request for p in job.planned)
    rdd = _BlockingRDD()
    ex = Executor(_FakeSpark(rdd), [replace(job, planned=())], "fries", str(tmp_path))
    assert ex.submit(0, first) is None  # idle: queued for the next batch
    stepping = threading.Thread(target=ex.step, daemon=True)
    stepping.start()
    try:
        assert rdd.collecting.wait(60)
        # the batch is planned (the queued request taken for it), its tasks have not started:
        # the first request is not made yet, but it is in progress
        answer = ex.submit(0, second)
        assert answer is not None and "R1" in answer and "still in progress" in answer, answer
    finally:
        rdd.release.set()
        stepping.join(60)
    assert not stepping.is_alive()
    st = ex.state[0]
    assert st.queued is None and st.live.made == 1
    active = st.live.active
    assert active is not None and active.j == 1
    assert any(o.startswith("A") for o in active.reconfigured), active.reconfigured  # R1 is the first request
