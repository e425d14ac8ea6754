"""Fries executor checkpoints: local disk vs an S3 API (moto's server on 127.0.0.1), issue 14.

    python benchmarks/objstore_checkpoints.py                  # 20 batches each, local and S3
    python benchmarks/objstore_checkpoints.py --batches 40 --local-only

Runs the soak's pipeline over a generated source (``S -> M(2 workers) -> T``, string keys,
batches of 8 tuples, one live request at batch 3, ``Retention(2)``) through
:class:`~spark_impl.reconfig.Executor` for ``--batches`` micro-batches with the checkpoint on
a local directory, then (unless ``--local-only``) on ``s3://`` of a moto server this script
starts and stops. Prints the median and total wall time of ``Executor.step`` over the batches
after the first two (warm-up), side by side with the ratio S3 / local. Only APIs that exist
before the object-store checkpoints are used, so the local half also runs on an older tree
(``PYTHONPATH=<old tree>``) for a before/after comparison.
"""

from __future__ import annotations

import argparse
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


def run(spark: Any, checkpoint: str, batches: int) -> list[float]:
    """Wall seconds of every step of one run on ``checkpoint``."""
    from spark_impl.reconfig import Executor
    from spark_impl.reconfig.retention import Retention
    from spark_impl.workloads.soak import generated_job, swap

    ex = Executor(spark, [generated_job(8 * batches, 8)], "fries", checkpoint, retention=Retention(batches=2))
    times = []
    for step in range(batches):
        if step == 3:
            ex.submit(0, swap(1))
        start = time.perf_counter()
        ex.step()
        times.append(time.perf_counter() - start)
    return times


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--batches", type=int, default=20)
    parser.add_argument("--local-only", action="store_true")
    args = parser.parse_args()
    from spark_impl.session import get_or_create_session

    spark = get_or_create_session(app_name="objstore-bench")
    rows: dict[str, list[float]] = {}
    scratch = tempfile.mkdtemp(prefix="objstore-bench-")
    try:
        run(spark, os.path.join(scratch, "warm"), 3)  # Python workers, first jobs
        rows["local"] = run(spark, os.path.join(scratch, "local"), args.batches)
        if not args.local_only:
            from s3_server import s3_server, s3_uri

            with s3_server() as endpoint:
                rows["s3 (moto)"] = run(spark, s3_uri(endpoint, "bench", "ckpt"), args.batches)
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
