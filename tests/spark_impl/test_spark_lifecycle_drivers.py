"""The O+ and DGS live front ends under a supervised driver process
(docs/production/operating.md, "A driver that stops cleanly and says why it ended"): SIGTERM to
the driver stops it at a batch boundary (exit 143, one line; the front end's commit and
Structured Streaming's agree), a restart on the same checkpoint continues exactly once, and a
query that dies mid-stream (bad input for O+, a user function raising for DGS) makes the driver
exit 1 within 30 s with one line naming the error. (The Fries driver: tests/docs/test_docs_operating.py.)
Slow: two driver processes with their own SparkSession per front end."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import pytest

from spark_impl.readers import read_result_rows
from spark_impl.status import read_status

pytestmark = [pytest.mark.slow, pytest.mark.spark]
from support.paths import TESTS
HERE = str(TESTS)
WAIT_S = 600.0
DEAD_WITHIN_S = 30.0

DRIVER = """
import sys
from spark_impl.lifecycle import supervised
from spark_impl.reconfig.sinks import ParquetSink
from spark_impl.session import get_or_create_session

kind, base = sys.argv[1], sys.argv[2]
spark = get_or_create_session()
if kind == "oplus":
    from spark_impl.oplus.streaming import start_oplus_query
    from spark_impl.oplus.streaming_jobs import oplus_job
    stream = (spark.readStream.schema("ts long, key string, value long, watermark long, end boolean")
              .option("maxFilesPerTrigger", 1).json(f"{base}/in"))
    run = start_oplus_query(spark, stream, [oplus_job("sliding-sum", 5, 10, WT="multi", parallelism=2)],
                            checkpoint_dir=f"{base}/ckpt",
                            sink=ParquetSink(f"{base}/results", key_type="string", value_type="long"))
else:
    from spark_impl.dgs.streaming import LiveJob, start_dgs_query
    from spark_impl.dgs.streaming_plan import keyed_plan
    from spec.dgs.loader import load_program
    target = sys.argv[3]
    plan = keyed_plan(load_program(target), ["s0", "s1"], leaves=2)
    stream = spark.readStream.option("maxFilesPerTrigger", 1).text(f"{base}/in")
    run = start_dgs_query(spark, [LiveJob(target, plan)], stream, checkpoint_dir=f"{base}/ckpt",
                          sink=ParquetSink(f"{base}/results"))
with supervised(run):
    print("started", flush=True)
"""


class Driver:
    """The driver script of one front end, its ``BASE`` and its processes."""

    def __init__(self, root: str, kind: str) -> None:
        self.root, self.kind = root, kind
        self.base = os.path.join(root, "base")
        os.makedirs(os.path.join(self.base, "in"))
        self.script = os.path.join(root, "driver.py")
        with open(self.script, "w", encoding="utf-8") as handle:
            handle.write(DRIVER)
        self.landed: list[list[dict[str, Any]]] = []
        self.t0 = int(time.time()) - 10_000
        self.procs: list[subprocess.Popen[bytes]] = []

    def land(self, rows: list[dict[str, Any]]) -> None:
        number = len(self.landed)
        tmp = os.path.join(self.root, f".land-{number}")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.writelines(json.dumps(row) + "\n" for row in rows)
        os.utime(tmp, (self.t0 + number, self.t0 + number))
        os.replace(tmp, os.path.join(self.base, "in", f"part-{number:04d}.json"))
        self.landed.append(rows)

    def start(self) -> subprocess.Popen[bytes]:
        number = len(self.procs)
        extra = [os.path.join(HERE, "support", "dgs_live_programs.py:FailingCounter")] if self.kind == "dgs" else []
        with open(self.err_path(number), "wb") as err:
            proc = subprocess.Popen([sys.executable, self.script, self.kind, self.base, *extra],
                                    stdout=subprocess.DEVNULL, stderr=err, start_new_session=True, cwd=self.root)
        self.procs.append(proc)
        return proc

    def err_path(self, number: int) -> str:
        return os.path.join(self.root, f"driver-{number}.err")

    def err(self, proc: subprocess.Popen[bytes]) -> str:
        with open(self.err_path(self.procs.index(proc)), encoding="utf-8", errors="replace") as handle:
            return handle.read()

    def committed(self, batch: int) -> bool:
        return os.path.exists(os.path.join(self.base, "ckpt", "query", "commits", str(batch)))

    def feed(self, proc: subprocess.Popen[bytes], rows: list[dict[str, Any]] | None = None) -> None:
        """Land ``rows`` (if any), then wait until Structured Streaming committed the last file's batch."""
        if rows is not None:
            self.land(rows)
        batch = len(self.landed) - 1
        deadline = time.monotonic() + WAIT_S
        while not self.committed(batch):
            assert proc.poll() is None, f"the driver exited ({proc.returncode}):\n{self.err(proc)[-3000:]}"
            assert time.monotonic() < deadline, f"no commit of batch {batch}:\n{self.err(proc)[-3000:]}"
            time.sleep(0.2)

    def exit_code(self, proc: subprocess.Popen[bytes], within: float) -> int:
        try:
            return proc.wait(within)
        except subprocess.TimeoutExpired:
            raise AssertionError(f"the driver did not exit within {within} s:\n{self.err(proc)[-3000:]}")

    def cleanup(self) -> None:
        for proc in self.procs:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


def last_line(text: str) -> str:
    lines = [line for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else ""


def run_the_operators_day(driver: Driver, files: list[list[dict[str, Any]]], poison: list[dict[str, Any]],
                          error: str) -> None:
    """files[0..1] with the first driver, SIGTERM, files[2] while down, a restart takes
    files[2..], then the poison: exit 1 within 30 s naming ``error``."""
    first = driver.start()
    driver.feed(first, files[0])
    driver.feed(first, files[1])
    os.kill(first.pid, signal.SIGTERM)
    assert driver.exit_code(first, 120) == 128 + signal.SIGTERM
    err = driver.err(first)
    assert last_line(err) == ("streamproof: stopped by SIGTERM at a batch boundary; start again on the same "
                              "checkpoint to continue")
    assert "Traceback" not in err and "reentrant" not in err
    status = read_status(os.path.join(driver.base, "ckpt"))
    assert status.committed_batch == status.stream_batch == 1  # the front end and Spark agree: a boundary
    driver.land(files[2])
    second = driver.start()
    driver.feed(second)
    for rows in files[3:]:
        driver.feed(second, rows)
    driver.land(poison)
    landed = time.monotonic()
    assert driver.exit_code(second, 300) == 1
    took = time.monotonic() - landed
    assert last_line(driver.err(second)) == f"streamproof: the query failed: {error}"
    assert took < DEAD_WITHIN_S, f"the driver exited {took:.1f} s after the poison landed"


def test_oplus_driver_sigterm_restart_exactly_once_and_death_exit_1(tmp_path: Any) -> None:
    driver = Driver(str(tmp_path), "oplus")
    files = [[{"ts": 10 * n + d, "key": key, "value": 10 * n + d} for d, key in ((1, "ann"), (3, "bob"), (6, "ann"))]
             for n in range(5)]
    try:
        run_the_operators_day(driver, files, [{"key": "ann", "value": 1}], "InputError: stream: batch 5: row of job 0, "
                              "source 0 has no ts, watermark or end")
    finally:
        driver.cleanup()
    found = read_result_rows(os.path.join(driver.base, "results"))
    windows = Counter((r["ts"], r["key"]) for r in found)
    assert windows and max(windows.values()) == 1  # every window exactly once
    tuples = [row for rows in files for row in rows]
    watermark = max(row["ts"] for row in tuples)  # one source: the largest event time
    wanted = {}
    for start in range(-10, watermark, 5):  # windows [start, start + 10), emitted once start + 10 <= watermark
        for key in ("ann", "bob"):
            inside = [r["value"] for r in tuples if r["key"] == key and start <= r["ts"] < start + 10]
            if inside and start + 10 <= watermark:
                wanted[(start + 10, key)] = sum(inside)
    assert {(r["ts"], r["key"]): r["value"] for r in found} == wanted


def test_dgs_driver_sigterm_restart_exactly_once_and_death_exit_1(tmp_path: Any) -> None:
    driver = Driver(str(tmp_path), "dgs")

    def file(n: int, event: list[str]) -> list[dict[str, Any]]:
        return [{"stream": "s0", "ts": 4 * n + 1, "event": event}, {"stream": "s1", "ts": 4 * n + 2, "event": ["r", event[1]]},
                {"stream": "s0", "ts": 4 * n + 3, "heartbeat": True}, {"stream": "s1", "ts": 4 * n + 3, "heartbeat": True}]

    files = [file(n, ["i", ("alice", "bob")[n % 2]]) for n in range(5)]
    try:
        run_the_operators_day(driver, files, file(5, ["i", "eve"]),
                              "InputError: FailingCounter.update: raised ZeroDivisionError: eve cannot be counted "
                              "(called with {'alice': 0}, ('i', 'eve'))")
    finally:
        driver.cleanup()
    found = sorted((r["batch"], r["value"]) for r in read_result_rows(os.path.join(driver.base, "results")))
    assert found == [(n, json.dumps([("alice", "bob")[n % 2], 1])) for n in range(5)]  # each output once
