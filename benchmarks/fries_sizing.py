"""Sizing the Fries live front end (docs/production/fries.md, "Sizing"): micro-batch size and
parallelism against batch time, end-to-end latency and state per worker.

    python benchmarks/fries_sizing.py                 # 100, 1 000, 5 000 rows x parallelism 1, 2, 4
    python benchmarks/fries_sizing.py --quick         # 100, 1 000 rows x parallelism 1, 2

Per (rows per batch, parallelism), one query of ``spark_impl.reconfig.streaming.start_query``
reads ``--files`` JSON-lines files of that many rows (``maxFilesPerTrigger=1``: one file = one
micro-batch) whose key is a struct ``(region, id)`` over ``--keys`` customers (a tuple key) and
whose value a nested struct, through a one-operator job ``S -> M`` with ``parallelism`` workers
(state per key: count, total and the last order), with ``Retention(batches=2)`` and a
``ParquetSink`` - the guide's setup. The first micro-batch (Python workers starting) is left out
of the averages. Columns:

* ``batch ms`` - the ``foreachBatch`` wall time (``run.batch_ms``: input-log copy, executor
  batch, sink delivery);
* ``e2e ms`` - from the file's atomic rename into the input directory until
  ``processAllAvailable()`` returns with its rows committed and delivered (includes the
  file source's polling and the query's planning);
* ``rows/s`` - rows per batch / e2e;
* ``state B/worker`` - the pickled key states of ``M`` (``pickle.dumps((key, state))`` summed)
  per worker, the largest worker, after the last batch;
* ``ckpt KiB`` - the checkpoint directory's size after the last batch (retention on).

Every run is checked: the executor committed every row and the sink holds each exactly once
(else the script exits 1). Prints the load average before and after: on a shared machine the
figures are slower than on a quiet one.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import random
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spec.fries.dataflow import dataflow  # noqa: E402
from spark_impl.keys import route  # noqa: E402
from spark_impl.reconfig import ListSource, UserOperator, collect_results, user_job  # noqa: E402
from spark_impl.reconfig.retention import Retention  # noqa: E402
from spark_impl.reconfig.sinks import ParquetSink  # noqa: E402
from spark_impl.reconfig.streaming import start_query  # noqa: E402
from spark_impl.session import get_or_create_session  # noqa: E402

SCHEMA = ("customer struct<region: string, id: bigint>, order struct<sku: string, amount: bigint, "
          "ship: struct<country: string, express: boolean>, tags: array<string>>")
REGIONS = ("eu", "us", "ap", "af")


def _tally(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    count, total, _ = state or (0, 0, None)
    return (count + 1, total + value[1], value), [(key, total + value[1])]


def _land(directory: str, number: int, rows: int, keys: int, rng: random.Random) -> float:
    path = os.path.join(directory, f"f{number:04d}.json")
    tmp = os.path.join(os.path.dirname(directory), f".f{number:04d}.tmp")
    with open(tmp, "w", encoding="utf-8") as handle:
        for _ in range(rows):
            k = rng.randrange(keys)
            handle.write(json.dumps({"customer": {"region": REGIONS[k % len(REGIONS)], "id": k},
                                     "order": {"sku": f"sku-{rng.randrange(50)}", "amount": rng.randrange(1, 100),
                                               "ship": {"country": "fr", "express": rng.random() < 0.3},
                                               "tags": ["gift"] if rng.random() < 0.2 else []}}) + "\n")
    os.utime(tmp, (1_700_000_000 + number, 1_700_000_000 + number))
    started = time.perf_counter()
    os.replace(tmp, path)
    return started


def _size(directory: str) -> int:
    return sum(os.path.getsize(os.path.join(d, n)) for d, _, names in os.walk(directory) for n in names)


def measure(spark: Any, rows: int, parallelism: int, files: int, keys: int) -> dict[str, float]:
    """One query over ``files`` files of ``rows`` rows with ``parallelism`` workers of ``M``."""
    root = tempfile.mkdtemp(prefix="fries-sizing-")
    rng = random.Random(rows * 31 + parallelism)
    try:
        data = os.path.join(root, "in")
        os.makedirs(data)
        flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])
        job = user_job(flow, {"M": UserOperator(flow.kind("M"), _tally)}, ListSource(()),
                       parallelism={"M": parallelism})
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(data)
        ckpt = os.path.join(root, "ckpt")
        run = start_query(spark, job, stream, scheduler="fries", checkpoint_dir=ckpt, key_column="customer",
                          value_column="order", sink=ParquetSink(os.path.join(root, "results"), value_type="long"),
                          retention=Retention(batches=2))
        samples: list[tuple[float, float]] = []
        try:
            for f in range(files):
                landed = _land(data, f, rows, keys, rng)
                run.query.processAllAvailable()
                e2e = (time.perf_counter() - landed) * 1000.0
                samples.append((run.batch_ms[max(run.batch_ms)], e2e))
            committed = run.executor.state[0].committed.offset
        finally:
            run.stop()
        delivered = spark.read.parquet(os.path.join(root, "results")).select("txn").distinct().count()
        total = spark.read.parquet(os.path.join(root, "results")).count()
        if committed != rows * files or delivered != rows * files or total != rows * files:
            print(f"FAILED: {rows} x {files} rows landed, {committed} committed, {total} delivered "
                  f"({delivered} distinct)")
            sys.exit(1)
        (result,) = collect_results(run.executor)
        per_worker = [0] * parallelism
        for (op, key), state in result.states.items():
            if op == "M":
                per_worker[route(key, parallelism)] += len(pickle.dumps((key, state)))
        later = samples[1:] or samples
        n = len(later)
        batch = sum(s[0] for s in later) / n
        e2e = sum(s[1] for s in later) / n
        return {"batch": batch, "e2e": e2e, "rate": rows / (e2e / 1000.0), "state": max(per_worker),
                "ckpt": _size(ckpt) / 1024.0}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 and 1 000 rows, parallelism 1 and 2")
    parser.add_argument("--files", type=int, default=4, help="micro-batches per query (first one not counted)")
    parser.add_argument("--keys", type=int, default=1000, help="distinct customers")
    args = parser.parse_args()
    sizes = (100, 1000) if args.quick else (100, 1000, 5000)
    parallelisms = (1, 2) if args.quick else (1, 2, 4)
    spark = get_or_create_session(conf={"spark.sql.shuffle.partitions": "4"})
    print(f"load average before: {' '.join(open('/proc/loadavg').read().split()[:3])}  (cores: {os.cpu_count()})")
    print(f"{'rows/batch':>10} {'workers':>7} {'batch ms':>9} {'e2e ms':>8} {'rows/s':>8} "
          f"{'state B/worker':>14} {'ckpt KiB':>9}")
    for rows in sizes:
        for p in parallelisms:
            r = measure(spark, rows, p, args.files, args.keys)
            print(f"{rows:>10} {p:>7} {r['batch']:>9.0f} {r['e2e']:>8.0f} {r['rate']:>8.0f} "
                  f"{r['state']:>14.0f} {r['ckpt']:>9.0f}", flush=True)
    print(f"load average after: {' '.join(open('/proc/loadavg').read().split()[:3])}")


if __name__ == "__main__":
    main()
