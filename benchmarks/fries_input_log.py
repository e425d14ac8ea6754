"""What the Fries live front end's input log costs (docs/production/sources.md, "The Fries
input log").

    python benchmarks/fries_input_log.py            # 1 000, 10 000 and 40 000 rows per batch
    python benchmarks/fries_input_log.py --quick    # 200 and 2 000

``spark_impl.reconfig.streaming.start_query`` copies every Structured Streaming batch into its
own JSON-lines input log (``<checkpoint>/input/``) before the executor runs it. Per batch size,
one query reads ``--files`` JSON-lines files of that many rows (``maxFilesPerTrigger=1``, one
file = one batch; a string key and a ``--payload``-character string value, the shape of a
decoded Kafka record) through a one-operator job ``S -> M`` (identity, 2 workers), twice: with
``Retention(batches=2)`` and without a retention. The first batch (Python workers starting) is
left out of the averages. Columns:

* ``input B`` - bytes of one input file; ``log B`` - bytes the log wrote for that batch
  (its ``b<batch>-p<part>.jsonl`` files, in the run without a retention);
* ``batch ms`` - the ``foreachBatch`` wall time (``run.batch_ms``); ``steps ms`` - the part of it
  spent in executor steps (timed by a ``StepHook``); ``log ms`` = batch - steps: the copy
  (a Spark job writing the files), the index rewrite and, with a retention, the deletion;
* ``ret.`` - the same with the retention; ``kept B`` - bytes under ``input/`` when the query
  stopped, with and without the retention (without one the log keeps every batch).

Every run is checked: the executor committed every row, and the log holds exactly the rows
that landed (else the script exits 1).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from spec.fries.dataflow import dataflow  # noqa: E402
from spark_impl.reconfig import ListSource, UserOperator, user_job  # noqa: E402
from spark_impl.reconfig.retention import Retention  # noqa: E402
from spark_impl.reconfig.streaming import start_query  # noqa: E402
from spark_impl.session import get_or_create_session  # noqa: E402


class StepClock:
    """A ``StepHook`` adding up the wall time of the executor's steps."""

    def __init__(self) -> None:
        self.total = 0.0

    def before(self, executor: Any) -> float:
        """The step's start."""
        return time.perf_counter()

    def after(self, executor: Any, token: Any) -> None:
        """Add the step's time."""
        self.total += time.perf_counter() - float(token)


def _identity(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    return state, [(key, value)]


def _land(directory: str, number: int, rows: int, payload: int) -> int:
    path = os.path.join(directory, f"f{number:04d}.json")
    tmp = os.path.join(os.path.dirname(directory), f".f{number:04d}.tmp")
    pad = "x" * payload
    with open(tmp, "w", encoding="utf-8") as handle:
        for r in range(rows):
            handle.write(json.dumps({"user": f"user-{(number * rows + r) % 997}", "note": f"{r}:{pad}"}) + "\n")
    os.utime(tmp, (1_700_000_000 + number, 1_700_000_000 + number))
    os.replace(tmp, path)
    return os.path.getsize(path)


def _bytes(directory: str, prefix: str = "") -> int:
    return sum(os.path.getsize(os.path.join(directory, n)) for n in os.listdir(directory) if n.startswith(prefix))


def measure(spark: Any, rows: int, files: int, payload: int, retention: bool) -> dict[str, float]:
    """One query over ``files`` files of ``rows`` rows; averages over the batches after the first."""
    root = tempfile.mkdtemp(prefix="fries-input-log-")
    try:
        data = os.path.join(root, "in")
        os.makedirs(data)
        flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])
        job = user_job(flow, {"M": UserOperator(flow.kind("M"), _identity)}, ListSource(()), parallelism={"M": 2})
        clock = StepClock()
        stream = spark.readStream.schema("user string, note string").option("maxFilesPerTrigger", 1).json(data)
        run = start_query(spark, job, stream, scheduler="fries", checkpoint_dir=os.path.join(root, "ckpt"),
                          key_column="user", value_column="note", step_hook=clock,
                          retention=Retention(batches=2) if retention else None)
        log_dir = os.path.join(root, "ckpt", "input")
        samples: list[tuple[int, int, float, float]] = []
        try:
            for f in range(files):
                size = _land(data, f, rows, payload)
                before = clock.total
                run.query.processAllAvailable()
                batch = max(run.batch_ms)
                log_bytes = _bytes(log_dir, f"b{batch:012d}-")  # 0 once a retention deleted them
                samples.append((size, log_bytes, run.batch_ms[batch], (clock.total - before) * 1000.0))
            committed = run.executor.state[0].committed.offset
        finally:
            run.stop()
        if committed != rows * files or run.source.count() != rows * files:
            print(f"FAILED: {rows} x {files} rows landed, {run.source.count()} logged, {committed} committed")
            sys.exit(1)
        kept = _bytes(log_dir)
        later = samples[1:] or samples
        n = len(later)
        return {"input": sum(s[0] for s in later) / n, "log": sum(s[1] for s in later) / n,
                "batch": sum(s[2] for s in later) / n, "steps": sum(s[3] for s in later) / n, "kept": kept}
    finally:
        shutil.rmtree(root, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="200 and 2 000 rows per batch")
    parser.add_argument("--files", type=int, default=4, help="batches per query (default 4)")
    parser.add_argument("--payload", type=int, default=64, help="characters of each value (default 64)")
    args = parser.parse_args()
    sizes = (200, 2_000) if args.quick else (1_000, 10_000, 40_000)
    spark = get_or_create_session(app_name="fries-input-log")
    print(f"{'rows/batch':>10} {'input B':>10} {'log B':>10} {'log/input':>9} {'batch ms':>9} {'steps ms':>9} "
          f"{'log ms':>8} {'log %':>6} {'batch ms, ret.':>14} {'log ms, ret.':>12} {'kept B, ret.':>12} "
          f"{'kept B, none':>13}")
    for rows in sizes:
        without = measure(spark, rows, args.files, args.payload, retention=False)
        bounded = measure(spark, rows, args.files, args.payload, retention=True)
        log_ms = without["batch"] - without["steps"]
        print(f"{rows:>10} {without['input']:>10.0f} {without['log']:>10.0f} {without['log'] / without['input']:>9.2f} "
              f"{without['batch']:>9.0f} {without['steps']:>9.0f} {log_ms:>8.0f} {100 * log_ms / without['batch']:>6.1f} "
              f"{bounded['batch']:>14.0f} {bounded['batch'] - bounded['steps']:>12.0f} {bounded['kept']:>12.0f} "
              f"{without['kept']:>13.0f}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
