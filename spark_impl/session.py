"""Creating the SparkSession.

On a laptop the default master is ``local[*]``; under ``spark-submit`` the master and all
cluster settings come from spark-submit, and nothing here overrides them (``getOrCreate``
returns the session spark-submit configured). Python workers are pointed at the interpreter
running the driver unless ``PYSPARK_PYTHON`` is already set, so a virtual environment works
without extra set-up (see SPARK-NOTES: otherwise workers start the system Python).
"""

from __future__ import annotations

import os
import sys
from typing import Any


def get_or_create_session(app_name: str = "streamproof", master: str | None = None) -> Any:
    """Return the active SparkSession or create one.

    ``master`` defaults to ``$STREAMPROOF_SPARK_MASTER``, else to whatever spark-submit set,
    else ``local[*]``. Settings suited to small micro-batches on a laptop are applied only
    when streamproof creates a local session itself."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    builder = SparkSession.builder.appName(app_name)
    chosen = master or os.environ.get("STREAMPROOF_SPARK_MASTER")
    launched_by_submit = "spark.master" in _submit_conf()
    if chosen or not launched_by_submit:
        local = chosen or "local[*]"
        builder = builder.master(local)
        if local.startswith("local"):
            builder = (
                builder.config("spark.ui.enabled", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.default.parallelism", "2")
                .config("spark.sql.streaming.stateStore.providerClass",
                        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
                .config("spark.driver.memory", "2g")
            )
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


def _submit_conf() -> dict[str, str]:
    """Settings spark-submit passed to this driver (empty when run as a plain script)."""
    raw = os.environ.get("PYSPARK_SUBMIT_ARGS", "")
    conf: dict[str, str] = {}
    if "--master" in raw:
        conf["spark.master"] = raw
    if os.environ.get("SPARK_ENV_LOADED") or os.environ.get("SPARK_SUBMIT_OPTS"):
        conf["spark.master"] = "submit"
    return conf
