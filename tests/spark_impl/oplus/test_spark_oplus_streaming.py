"""O+ windowed operators on a live stream (spark_impl.oplus.streaming).

The default test is docs/spark.md's recipe "O+ on a live stream": string keys, files landing
in a source directory, a rescale requested from another thread while the query runs, two
driver crashes (at different points) and restarts on the same checkpoint, a rescale down,
results read from Parquet and compared with the sequential reference (the O+ suite's oracle).
"""

from __future__ import annotations

import json
import os
import random
import sys
import threading
import time
import signal
import subprocess
from collections import Counter
from typing import Any

import pytest

from spec.errors import InputError

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.oplus_live_stream import expected_rows, file_rows, land_file, recipe_query, stream_data  # noqa: E402
from conformance.oplus.engines.reference import reference_rows
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import route_key, oplus_job, plain
from spark_impl.oplus.streaming_log import Log
from spark_impl.reconfig.sinks import CallbackSink
from spec.oplus.scenario import instance_of
from support.s3_server import s3_uri


def test_recipe_live_oplus_string_keys_rescale_crash_restart_parquet(spark: Any, tmp_path: Any) -> None:
    source_dir, checkpoint, table, start = recipe_query(spark, tmp_path)

    data = stream_data()
    # a late tuple: source 1 of job 0 sends ts 0 after job 0's watermark passed it (dropped, counted)
    data[(0, 1)][3].append({"ts": 0, "user": "ann", "amount": 100})
    bound = min(max(i["ts"] for c in data[(0, s)][:3] for i in c) for s in (0, 1))
    assert bound > 0, "the drawn data must make the extra tuple late (job 0's watermark after file 2)"
    late = {(0, 1, 0)}
    files = len(data[(0, 0)])
    run = start()
    crashes = {2: "after-commit", 4: "after-delivery"}
    requested: dict[str, int] = {}
    for f in range(files):
        if f in crashes:
            run.crash_at(crashes[f])
        land_file(source_dir, f, file_rows(data, f, f == files - 1))
        if f == 1:  # while the query runs a batch: a rescale of job 0 to 4 instances
            threading.Timer(0.2, lambda run=run: requested.setdefault("up", run.rescale(4, job=0))).start()
        try:
            run.query.processAllAvailable()
        except Exception as error:  # the simulated driver crash stops the query
            assert "simulated driver crash" in str(error), error
            run.stop()
            run = start()  # restart on the same checkpoint: exactly once
            run.query.processAllAvailable()
        if f == 3:
            requested["down"] = run.rescale(1, job=1, watermark=0)
        time.sleep(0.3 if f == 1 else 0)
    run.query.processAllAvailable()
    status = run.status()
    run.stop()
    assert status is not None and status.batch == files - 1
    assert sorted(status.applied) == sorted(requested.values())
    moves = {(r["job"], r["before"], r["after"]) for r in status.rescales}
    assert moves == {(0, 2, 4), (1, 3, 1)}
    assert status.late == {0: 1, 1: 0}
    got = spark.read.parquet(table).collect()
    for job, wt in ((0, "multi"), (1, "single")):
        rows = Counter((int(r["ts"]), r["key"], json.dumps(int(r["value"]))) for r in got if r["job"] == job)
        assert rows == expected_rows(data, job, wt, late), job
    # every row comes from its key's instance under the parallelism in force in its batch
    for job, before in ((0, 2), (1, 3)):
        (change,) = [r for r in status.rescales if r["job"] == job]
        for r in got:
            if r["job"] == job:
                size = before if r["batch"] <= change["batch"] else change["after"]
                assert r["instance"] == route_key(r["key"], size), (r, change)
    # bounded storage: the last commit (and none waiting for delivery), one state version
    root = os.path.join(checkpoint, "oplus")
    assert len(os.listdir(os.path.join(root, "commits"))) <= 2
    assert len(os.listdir(os.path.join(root, "state"))) <= 2
    assert os.listdir(os.path.join(root, "out")) == []


@pytest.mark.slow
def test_struct_keys_through_a_callback_sink(spark: Any, tmp_path: Any) -> None:
    """Tuple keys (a struct column) routed by spark_impl.keys, delivered to a foreachBatch-style
    callback idempotent by batch id; outputs equal the sequential reference's (keys as JSON text)."""
    source_dir = str(tmp_path / "in")
    os.makedirs(source_dir)
    delivered: dict[int, list[Any]] = {}
    sink = CallbackSink(lambda df, batch: delivered.__setitem__(batch, df.collect()), value_type="long")
    stream = (spark.readStream.schema("ts long, end boolean, key struct<user: string, n: long>, value long")
              .option("maxFilesPerTrigger", 1).json(source_dir))
    run = start_oplus_query(spark, stream, [oplus_job("sliding-sum", 2, 4, WT="single", parallelism=3)],
                            checkpoint_dir=str(tmp_path / "ckpt"), sink=sink)
    rng = random.Random(3)
    items: list[dict[str, Any]] = [{"ts": t, "key": {"user": rng.choice("ab"), "n": rng.randint(0, 2)}, "value": rng.randint(0, 5)}
             for t in sorted(rng.randint(0, 20) for _ in range(24))]
    try:
        for f, chunk in enumerate((items[:8], items[8:16], items[16:] + [{"end": True}])):
            land_file(source_dir, f, chunk)
            run.query.processAllAvailable()
            if f == 0:
                run.rescale(2)
    finally:
        run.stop()
    got = Counter((int(r["ts"]), r["key"], json.dumps(int(r["value"]))) for rows in delivered.values() for r in rows)
    case = {"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "single", "parallelism": 1,
            "inputs": [[{"ts": i["ts"], "key": json.dumps([i["key"]["user"], i["key"]["n"]]), "value": i["value"]}
                        for i in items]]}
    assert got == Counter(reference_rows(case, "sequential"))
    status = run.status()
    assert status is not None and [(r["before"], r["after"]) for r in status.rescales] == [(3, 2)]


def test_bad_input_is_refused_with_a_message(spark: Any, tmp_path: Any) -> None:
    with pytest.raises(InputError, match="WS"):
        oplus_job("sliding-sum", 5, 3)
    with pytest.raises(InputError, match="unknown operator"):
        oplus_job("median", 5, 10)
    with pytest.raises(InputError, match="streaming DataFrame"):
        start_oplus_query(spark, spark.range(3), [oplus_job("wordcount", 1, 1)], checkpoint_dir=str(tmp_path),
                          sink=CallbackSink(lambda df, b: None))


def test_route_key_types() -> None:
    from spark_impl.keys import route  # noqa: PLC0415 - read when called: spark_impl.keys.route is replaced at run time

    assert all(route_key(k, 7) == instance_of(k, 7) for k in ("a", "dé", ""))
    assert route_key(12, 5) == 2 and route_key(("a", 1), 4) == route(("a", 1), 4)
    assert plain(["a", [1, 2]]) == ("a", (1, 2))


_DRIVER = '''
import sys
from spark_impl.session import get_or_create_session
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.reconfig.sinks import ParquetSink

source, checkpoint, table, rescale = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
query = sys.argv[5] if len(sys.argv) > 5 else None  # Spark's own checkpoint (with an object-store checkpoint)
spark = get_or_create_session(app_name="oplus-live-driver", master="local[2]")
stream = spark.readStream.schema("ts long, end boolean, text string").option("maxFilesPerTrigger", 1).json(source)
run = start_oplus_query(spark, stream, [oplus_job("wordcount", 2, 6, WT="single", parallelism=2)],
                        checkpoint_dir=checkpoint, query_checkpoint=query, sink=ParquetSink(table, value_type="long"))
if rescale:
    run.rescale(rescale)
print("started", flush=True)
run.query.awaitTermination()
'''


@pytest.mark.slow
@pytest.mark.parametrize("store", ["local", "s3"])
def test_a_killed_driver_process_restarts_exactly_once(spark: Any, tmp_path: Any, store: str,
                                                       request: pytest.FixtureRequest) -> None:
    """A real driver process (its own SparkSession) killed with SIGKILL mid-stream, restarted
    on the same checkpoint: the Parquet table equals the sequential reference. ``s3``: the O+
    state on moto's S3 server on 127.0.0.1 (the objstore tests' fixture; a kill can land in the
    middle of a PUT), Structured Streaming's own checkpoint local."""
    source, checkpoint, table = (str(tmp_path / n) for n in ("in", "ckpt", "out"))
    extra: list[str] = []
    if store == "s3":
        checkpoint = s3_uri(request.getfixturevalue("endpoint"), "oplus-kill", tmp_path.name)
        extra = [str(tmp_path / "query")]
    os.makedirs(source)
    script = tmp_path / "driver.py"
    script.write_text(_DRIVER)
    rng = random.Random(5)
    items, ts = [], 0
    for _ in range(60):
        ts += rng.randint(0, 2)
        items.append({"ts": ts, "text": " ".join(rng.choice("abcde") for _ in range(rng.randint(1, 3)))})
    chunks = [items[i:i + 5] for i in range(0, len(items), 5)]
    for f, chunk in enumerate(chunks):
        rows = chunk + ([{"end": True}] if f == len(chunks) - 1 else [])
        land_file(source, f, rows)
        os.utime(os.path.join(source, f"part-{f:03d}.json"), (1_000_000 + f, 1_000_000 + f))
    log = Log(checkpoint)

    def driver(rescale: int) -> Any:
        return subprocess.Popen([sys.executable, str(script), source, checkpoint, table, str(rescale), *extra],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)

    first = driver(3)
    try:
        deadline = time.time() + 600
        while len(log.committed()) == 0 or log.committed()[-1] < 3:
            assert time.time() < deadline and first.poll() is None, "the first driver made no progress"
            time.sleep(0.2)
        time.sleep(rng.random())  # somewhere inside a later batch
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    killed_at = log.committed()[-1]
    second = driver(0)
    try:
        deadline = time.time() + 600
        while log.delivered() < len(chunks) - 1:
            assert time.time() < deadline and second.poll() is None, "the restarted driver did not finish"
            time.sleep(0.5)
    finally:
        os.killpg(second.pid, signal.SIGKILL)
        second.wait()
    status = log.latest()
    assert status is not None and killed_at < len(chunks) - 1
    assert [(r["before"], r["after"]) for r in status.rescales] == [(2, 3)]
    got = Counter((int(r["ts"]), r["key"], json.dumps(int(r["value"])))
                  for r in spark.read.parquet(table).collect())
    case = {"operator": "wordcount", "WA": 2, "WS": 6, "WT": "single", "parallelism": 1, "inputs": [items]}
    assert got == Counter(reference_rows(case, "sequential"))
