"""A real driver process with its checkpoint and sink on S3 (moto's server on 127.0.0.1,
started and stopped here) killed with SIGKILL - JVM and Python workers included - at a random
moment after its 4th micro-batch, then a new driver process on the same ``s3://`` checkpoint
with ``resume=True``: the committed table holds every tuple exactly once and M's states count
every tuple once (slow: two driver processes with their own SparkSession)."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

import pytest

from spark_impl.reconfig.objectstore import read_committed

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.s3_server import s3_server, s3_uri  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.spark]
TUPLES, SIZE = 60, 4

DRIVER = """
import json, sys
from spark_impl.reconfig import Executor, collect_results
from spark_impl.reconfig.objectstore import ObjectStoreSink
from spark_impl.reconfig.retention import Retention
from spark_impl.session import get_or_create_session
from spark_impl.workloads.soak import generated_job, swap

ckpt, table, resume = sys.argv[1], sys.argv[2], sys.argv[3] == "resume"
spark = get_or_create_session(app_name="objstore-kill", master="local[2]")
ex = Executor(spark, [generated_job(%d, %d)], "fries", ckpt, resume=resume, sink=ObjectStoreSink(table),
              retention=Retention(batches=2))
step = 0
while not ex.done():
    if not resume and step == 1:
        ex.submit(0, swap(1))
    ex.step()
    step += 1
    print(json.dumps({"step": step, "committed": ex.state[0].committed.history[-1:]}), flush=True)
(result,) = collect_results(ex)
print(json.dumps({"done": True, "M": sum(v for (op, _), v in result.states.items() if op == "M")}), flush=True)
spark.stop()
""" % (TUPLES, SIZE)


def _kill(proc: "subprocess.Popen[str]") -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(30)


def test_a_killed_driver_resumes_exactly_once_from_s3(tmp_path: Path) -> None:
    script = tmp_path / "driver.py"
    script.write_text(DRIVER)
    with s3_server() as endpoint:
        ckpt, table = s3_uri(endpoint, "ckpt", "kill"), s3_uri(endpoint, "results", "kill")

        def start(mode: str) -> "subprocess.Popen[str]":
            return subprocess.Popen([sys.executable, str(script), ckpt, table, mode], stdout=subprocess.PIPE,
                                    stderr=subprocess.DEVNULL, text=True, start_new_session=True, cwd=tmp_path)

        first = start("fresh")
        try:
            assert first.stdout is not None
            for line in first.stdout:
                if json.loads(line)["step"] == 4:
                    break
            time.sleep(random.uniform(0.0, 1.5))  # somewhere inside a later batch or commit
        finally:
            _kill(first)
        second = start("resume")
        try:
            out, _ = second.communicate(timeout=900)
        finally:
            _kill(second)
        lines = [json.loads(line) for line in out.strip().splitlines()]
        assert lines[-1] == {"done": True, "M": TUPLES}, out
        # it resumed (a fresh start would commit batch 1): at least 4 batches ran before the kill
        # and a restart never reuses a batch number
        assert lines[0]["committed"][0] >= 5, out
        rows = read_committed(table).to_pylist()
    counts = Counter(r["txn"] for r in rows)
    assert sorted(counts) == sorted(f"S:{i}" for i in range(TUPLES)) and set(counts.values()) == {1}
    by_key: dict[str, list[int]] = {}
    for r in sorted(rows, key=lambda r: int(r["txn"][2:])):
        by_key.setdefault(r["key"], []).append(int(r["value"].strip("[]").split(",")[1]))
    assert all(tags == sorted(tags) for tags in by_key.values()), by_key
