"""A driver process for the real-kill test of tests/spark_impl/dgs/test_spark_dgs_streaming.py (not a test):

    python tests/support/dgs_live_driver.py ROOT TARGET FILES

starts its own local SparkSession and the live DGS query of the docs/spark.md recipe on
``ROOT/in`` (checkpoint ``ROOT/ckpt``, Parquet ``ROOT/out``) with a 2-leaf keyed plan on
streams s0, s1, then processes until FILES files are committed and exits 0. The test kills it
with SIGKILL part-way and starts it again."""

from __future__ import annotations

import os
import sys
import time

from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.reconfig.sinks import ParquetSink
from spark_impl.session import get_or_create_session
from spec.dgs.loader import load_program


def main(root: str, target: str, files: int) -> int:
    spark = get_or_create_session(app_name="dgs-live-driver")
    plan = keyed_plan(load_program(target), ["s0", "s1"], 2)
    stream = spark.readStream.option("maxFilesPerTrigger", 1).text(os.path.join(root, "in"))
    run = start_dgs_query(spark, [LiveJob(target, plan)], stream, checkpoint_dir=os.path.join(root, "ckpt"),
                          sink=ParquetSink(os.path.join(root, "out")), trigger={"processingTime": "200 milliseconds"})
    while run.committed().delivered < files - 1:
        time.sleep(0.2)
        if not run.query.isActive:
            run.process_all()  # raises the query's error
    run.stop()
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
