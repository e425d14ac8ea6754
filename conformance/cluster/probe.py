"""Where did a task run? :func:`where` runs inside a Spark task (a PySpark worker process) and
reports its own pid, the PySpark daemon above it and the executor JVM above that (the first
ancestor whose command line is a ``CoarseGrainedExecutorBackend``), with the executor id.
Module-level so cloudpickle ships it by reference and executors import it from the tree."""

from __future__ import annotations

import os
import re
import socket
from typing import Any

from conformance.cluster.processes import command_line, parent_of


def where(_: Any = None) -> dict[str, Any]:
    """This task's process chain: ``{"host" (the executor's ``--hostname``), "python_pid", "daemon_pid", "executor_pid",
    "executor_id"}`` (``executor_pid`` None when no executor JVM is an ancestor)."""
    chain: list[int] = []
    pid: int | None = os.getpid()
    while pid is not None and pid > 1 and len(chain) < 8:
        chain.append(pid)
        line = command_line(pid)
        if "CoarseGrainedExecutorBackend" in line:
            found = re.search(r"--executor-id\s+(\S+)", line)
            host = re.search(r"--hostname\s+(\S+)", line)
            return {"host": host.group(1) if host else socket.gethostname(), "python_pid": os.getpid(),
                    "daemon_pid": chain[-2] if len(chain) >= 3 else None, "executor_pid": pid,
                    "executor_id": found.group(1) if found else None}
        pid = parent_of(pid)
    return {"host": socket.gethostname(), "python_pid": os.getpid(), "daemon_pid": None,
            "executor_pid": None, "executor_id": None}


def executors(spark: Any, tasks: int) -> list[dict[str, Any]]:
    """Run ``tasks`` tiny tasks and return each one's :func:`where` (distinct chains only)."""
    rows = spark.sparkContext.parallelize(range(tasks), tasks).map(where).collect()
    unique = {tuple(sorted(row.items())): row for row in rows}
    return sorted(unique.values(), key=lambda row: (str(row["executor_id"]), row["python_pid"]))
