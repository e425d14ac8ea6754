"""Creating the SparkSession.

On a laptop the default master is ``local[*]``; under ``spark-submit`` the master and all
cluster settings come from spark-submit, and nothing here overrides them (``getOrCreate``
returns the session spark-submit configured). Python workers are pointed at the interpreter
running the driver unless ``PYSPARK_PYTHON`` is already set, so a virtual environment works
without extra set-up (otherwise workers start the system Python); under
spark-submit nothing is set, so ``spark.pyspark.python`` of a packed environment wins.
"""

from __future__ import annotations

import os
import shlex
import sys
import tempfile
import zlib
from typing import Any, Mapping


def get_or_create_session(app_name: str = "streamproof", master: str | None = None,
                          conf: Mapping[str, str] | None = None) -> Any:
    """Return the active SparkSession or create one.

    ``master`` defaults to ``$STREAMPROOF_SPARK_MASTER``, else to whatever spark-submit set,
    else ``local[*]``. Settings suited to small micro-batches on a laptop are applied only
    when streamproof creates a local session itself; ``conf`` (extra settings, e.g. a
    long-running driver's) only when this call creates the session. A session that already
    exists - active in this thread or the process's default one, as a thread of the driver sees
    it - is returned untouched: neither its settings nor its log level are applied again."""
    if not _launched_by_spark_submit():
        # under spark-submit, spark.pyspark.python (e.g. ./env/bin/python of a packed
        # environment) decides the workers' interpreter: do not shadow it.
        os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
        os.environ.setdefault("PYSPARK_DRIVER_PYTHON", sys.executable)
    from pyspark.errors import PySparkRuntimeError
    from pyspark.sql import SparkSession

    try:  # the thread's active session, else the process's default one: reused as it is
        return SparkSession.active()
    except PySparkRuntimeError:  # none yet: this call creates it
        pass
    builder = SparkSession.builder.appName(app_name)
    chosen = master or os.environ.get("STREAMPROOF_SPARK_MASTER")
    launched_by_submit = _launched_by_spark_submit()
    if chosen or not launched_by_submit:
        local = chosen or "local[*]"
        builder = builder.master(local)
        if local.startswith("local"):
            # a laptop's local session listens on the loopback interface only (Spark would
            # otherwise pick the first non-loopback address and warn about it)
            os.environ.setdefault("SPARK_LOCAL_IP", "127.0.0.1")
            builder = (
                builder.config("spark.driver.host", "127.0.0.1")
                .config("spark.driver.bindAddress", "127.0.0.1")
                .config("spark.ui.enabled", "false")
                .config("spark.ui.showConsoleProgress", "false")
                .config("spark.sql.shuffle.partitions", "2")
                .config("spark.default.parallelism", "2")
                .config("spark.sql.streaming.stateStore.providerClass",
                        "org.apache.spark.sql.execution.streaming.state.RocksDBStateStoreProvider")
                .config("spark.driver.memory", "2g")
                .config("spark.python.worker.reuse", "true")
            )
    for key, value in (conf or {}).items():
        builder = builder.config(key, value)
    session = builder.getOrCreate()
    session.sparkContext.setLogLevel("ERROR")
    return session


_WORKER_WRAPPER = """#!/bin/sh
# streamproof (spark_impl.session.prefer_installed_pyspark): a Python worker imports the
# installed pyspark (compiled .pyc files) instead of pyspark.zip, which Python compiles anew
# at every worker start
PYTHONPATH=$(printf '%s' "$PYTHONPATH" | tr ':' '\\n' | grep -v '/pyspark\\.zip$' | paste -sd: -)
export PYTHONPATH
exec {python} "$@"
"""


def prefer_installed_pyspark() -> str | None:
    """Point ``PYSPARK_PYTHON`` (unless already set) at a wrapper of this interpreter that
    drops ``pyspark.zip`` from the workers' ``PYTHONPATH``; return the wrapper's path, or None
    if nothing was changed. Call it before the session is created.

    Spark puts its ``pyspark.zip`` first on every Python worker's path. Python caches no
    bytecode for modules imported from a zip, so each fresh worker compiles pyspark's modules
    again: ``import pyspark.sql.streaming.transform_with_state_driver_worker`` takes ~3x as
    long as from the installed package (13 s against 4 s wall at load 56 here). The stateful
    streaming API (``transformWithStateInPandas``) starts such fresh workers, which must
    connect back to the JVM within a fixed 10 s, so on a loaded machine its queries failed.
    Only for a pip-installed pyspark (the zip is the installed package's own,
    same version) and never under spark-submit (a packed environment decides there)."""
    if os.environ.get("PYSPARK_PYTHON") or _launched_by_spark_submit():
        return None
    import pyspark

    package = os.path.dirname(os.path.abspath(pyspark.__file__))
    if not os.path.exists(os.path.join(package, "python", "lib", "pyspark.zip")):
        return None
    text = _WORKER_WRAPPER.format(python=shlex.quote(sys.executable))
    path = os.path.join(tempfile.gettempdir(), f"streamproof-worker-python-{os.getuid()}-{zlib.crc32(text.encode()):08x}.sh")
    if not os.path.exists(path):
        tmp = f"{path}.{os.getpid()}.tmp"
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.chmod(tmp, 0o755)
        os.replace(tmp, path)
    os.environ["PYSPARK_PYTHON"] = path
    return path


def _launched_by_spark_submit() -> bool:
    """True when this driver runs under ``spark-submit`` (or the ``pyspark`` shell).

    spark-submit starts the JVM first and launches Python with ``PYSPARK_GATEWAY_PORT`` set
    (the py4j gateway it already opened); a ``--master`` in ``PYSPARK_SUBMIT_ARGS`` means the
    user chose the master for a plain ``python`` driver. Either way the master is not ours to
    override."""
    if os.environ.get("PYSPARK_GATEWAY_PORT"):
        return True
    return "--master" in os.environ.get("PYSPARK_SUBMIT_ARGS", "")
