"""PySpark's worker daemon, measuring coverage in every forked Python worker.

Spark starts ``python -m <spark.python.daemon.module>`` once per executor; the daemon forks one
worker per task slot and, with ``spark.python.worker.reuse``, keeps it for many tasks. A worker
never exits normally: it is SIGKILLed when idle and SIGHUPed with its process group when the
SparkContext stops, so coverage.py's usual ways of saving data (``atexit``, ``patch = _exit``)
lose everything it measured. This module is that daemon with one change: every forked worker
starts its own ``coverage.Coverage`` (the configuration file named by
``$STREAMPROOF_COVERAGE_RC``, written by :mod:`conformance.output.coverage`) on its first task
and saves after each task, so a killed worker loses nothing.

Selected with ``--conf spark.python.daemon.module=conformance.output.coverage_daemon`` (set by
:func:`conformance.output.coverage.measuring` before the SparkSession starts). Without
``$STREAMPROOF_COVERAGE_RC`` it is plain ``pyspark.daemon``.
"""

from __future__ import annotations

import os
from typing import Any

RC_VARIABLE = "STREAMPROOF_COVERAGE_RC"

_started: dict[int, Any] = {}


def _measured(worker: Any, rc: str) -> Any:
    """``worker`` (pyspark.daemon.worker) run under this process's Coverage, saved after each task."""

    def run(sock: Any, authenticated: bool) -> Any:
        import coverage

        cov = _started.get(os.getpid())
        if cov is None:
            _started.clear()  # a forked child inherits the parent's entry: never reuse it
            cov = coverage.Coverage(config_file=rc, data_suffix=True)
            _started[os.getpid()] = cov
            cov.start()
        try:
            return worker(sock, authenticated)
        finally:
            try:
                cov.save()
            except Exception:  # noqa: BLE001 - a lost sample must not fail the task
                pass

    return run


def main() -> None:
    """Run the daemon, measuring workers when ``$STREAMPROOF_COVERAGE_RC`` names a config."""
    from pyspark import daemon

    rc = os.environ.get(RC_VARIABLE)
    if rc:
        daemon.worker = _measured(daemon.worker, rc)
    daemon.manager()


if __name__ == "__main__":
    main()
