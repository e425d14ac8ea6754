"""Fries executor checkpoints: local disk vs an S3 API (moto's server on 127.0.0.1).

    python benchmarks/objstore_checkpoints.py                  # 20 batches each, local and S3
    python benchmarks/objstore_checkpoints.py --batches 40 --local-only
    python benchmarks/objstore_checkpoints.py --io          # per-operation local I/O, no Spark

Runs the soak's pipeline over a generated source (``S -> M(2 workers) -> T``, string keys,
batches of 8 tuples, one live request at batch 3, ``Retention(2)``) through
:class:`~spark_impl.reconfig.Executor` for ``--batches`` micro-batches with the checkpoint on
a local directory, then (unless ``--local-only``) on ``s3://`` of a moto server this script
starts and stops. Prints the median and total wall time of ``Executor.step`` over the batches
after the first two (warm-up), side by side with the ratio S3 / local. Only APIs that exist
before the object-store checkpoints are used, so the local half also runs on an older tree
(``PYTHONPATH=<old tree>``) for a before/after comparison. ``--io`` times the executor's
local checkpoint operations one by one (the fastest of 10 rounds of 200 calls, no Spark), on either tree.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.append(str(ROOT))
sys.path.append(str(ROOT / "tests"))

from spark_impl.reconfig import Executor, control, layout, progress, storage, task  # noqa: E402
from spark_impl.reconfig.retention import Retention  # noqa: E402
from spark_impl.session import get_or_create_session  # noqa: E402
from spark_impl.workloads.soak import generated_job, swap  # noqa: E402


def run(spark: Any, checkpoint: str, batches: int) -> list[float]:
    """Wall seconds of every step of one run on ``checkpoint``."""
    ex = Executor(spark, [generated_job(8 * batches, 8)], "fries", checkpoint, retention=Retention(batches=2))
    times = []
    for step in range(batches):
        if step == 3:
            ex.submit(0, swap(1))
        start = time.perf_counter()
        ex.step()
        times.append(time.perf_counter() - start)
    return times


def io_costs(calls: int = 2000) -> None:
    """Microseconds per local checkpoint operation (works on the trees before and after the
    object-store checkpoints: the control channel's API differs)."""
    d = tempfile.mkdtemp(prefix="objstore-io-")

    def timed(label: str, fn: Any) -> None:
        """The fastest of 10 rounds (the least disturbed by other processes), per call."""
        fn()
        rounds = []
        for _ in range(10):
            start = time.perf_counter()
            for _ in range(calls // 10):
                fn()
            rounds.append((time.perf_counter() - start) / (calls // 10))
        print(f"{label:<36} {min(rounds) * 1e6:8.1f} us")

    def write_read() -> None:
        storage.write_task_file(path, content)
        storage.read_task_file(path)

    try:
        content = storage.TaskFile(objects={(0, f"M#{i}"): storage.ObjState(states={f"k{k}": k for k in range(50)})
                                            for i in range(2)})
        path = storage.task_path(d, 1, 1, 0)
        timed("task file write + read", write_read)
        jobs = [progress.Progress(offset=4, history=[1, 2, 3])]
        timed("commit (write_progress)", lambda: progress.write_progress(d, jobs, 3))
        plan = task.BatchPlan(1, d, d + "/jobs.pkl", 0.0, 2, "fries", frozenset(), {0: (0, 4)}, frozenset({0}),
                              frozenset())
        timed("plan write", lambda: task.write_plan(plan))
        timed("plan load (cached)", lambda: task.load_plan(d, 1))
        layout.save_request(d, 0, 1, swap(1))
        timed("request load (cached)", lambda: layout.load_request(d, 0, 1))
        entry = control.ControlEntry(0, 1, 1, 1.0, 2, 0.0, 0.0, 1)
        publish: Any = getattr(control, "write_control")
        if "log" in inspect.signature(publish).parameters:
            log = getattr(control, "control_log")(d)
            publish(log, [entry])
            timed("control publish", lambda: publish(log, [entry]))
            reader = control.ControlReader(d)
            timed("task start: control view", lambda: getattr(reader, "start")(log.last))
        else:
            publish(d, [entry])
            timed("control publish", lambda: publish(d, [entry]))
            reader = control.ControlReader(d)
            timed("task start: control view", lambda: reader.poll(force=True))
        timed("poll between tuples (forced)", lambda: reader.poll(force=True))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    print(f"load average: {os.getloadavg()[0]:.1f}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--local-only", action="store_true")
    parser.add_argument("--io", action="store_true", help="per-operation local I/O costs, no Spark")
    args = parser.parse_args()
    if args.io:
        io_costs()
        return 0

    spark = get_or_create_session(app_name="objstore-bench")
    rows: dict[str, list[float]] = {}
    scratch = tempfile.mkdtemp(prefix="objstore-bench-")
    try:
        run(spark, os.path.join(scratch, "warm"), 3)  # Python workers, first jobs
        rows["local"] = run(spark, os.path.join(scratch, "local"), args.batches)
        if not args.local_only:
            s3 = importlib.import_module("support.s3_server")  # tests/support/s3_server.py
            with s3.s3_server() as endpoint:
                rows["s3 (moto)"] = run(spark, s3.s3_uri(endpoint, "bench", "ckpt"), args.batches)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
        spark.stop()
    print(f"{'checkpoint':<12} {'batches':>7} {'median ms':>10} {'total s':>8} {'ratio':>6}")
    base = statistics.median(rows["local"][2:])
    for name, times in rows.items():
        med = statistics.median(times[2:])
        print(f"{name:<12} {len(times):>7} {med * 1000:>10.1f} {sum(times[2:]):>8.2f} {med / base:>6.2f}")
    print(f"load average: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
