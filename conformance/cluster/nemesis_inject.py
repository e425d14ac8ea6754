"""How the nemesis injects each fault of :data:`conformance.cluster.nemesis_faults.FAULTS`
into a :class:`~conformance.cluster.standalone.LocalCluster` (the driver kill and the
executor pause are in :mod:`conformance.cluster.nemesis`, which owns the driver and the clock). Each function returns what it
hit, in words, or None when there was nothing to hit (the fault is then not counted)."""

from __future__ import annotations

import glob
import os
import signal
from typing import Any

from conformance.cluster import processes as proc
from conformance.cluster.nemesis_faults import FaultPlan
from spark_impl.reconfig.progress import read_progress
from spark_impl.reconfig.storage import batch_dir


def executor_pids(cluster: Any) -> list[int]:
    """Live executor JVMs of the cluster."""
    return list(cluster.processes()["executor"])


def python_workers(cluster: Any) -> list[int]:
    """Live PySpark Python workers: Python processes whose grandparent is an executor JVM
    (executor -> PySpark daemon -> worker)."""
    roles = cluster.processes()
    executors = set(roles["executor"])
    found = []
    for pid in roles["python"]:
        parent = proc.parent_of(pid)
        if parent is not None and proc.parent_of(parent) in executors:
            found.append(pid)
    return found


def _kill_one(pids: list[int], plan: FaultPlan) -> int | None:
    """``kill -9`` of one of ``pids`` (None when there is none)."""
    if not pids:
        return None
    pid = plan.pick(sorted(pids))
    os.kill(pid, signal.SIGKILL)
    return pid


def kill_executor(cluster: Any, plan: FaultPlan) -> str | None:
    """``kill -9`` of one executor JVM."""
    pid = _kill_one(executor_pids(cluster), plan)
    return None if pid is None else f"executor JVM {pid}"


def kill_python_worker(cluster: Any, plan: FaultPlan) -> str | None:
    """``kill -9`` of one PySpark worker."""
    pid = _kill_one(python_workers(cluster), plan)
    return None if pid is None else f"Python worker {pid}"


def restart_worker(cluster: Any, plan: FaultPlan) -> str | None:
    """Stop one worker with everything under it and start a new one (not waiting for it to
    register: that is part of the recovery)."""
    index = plan.pick(list(range(cluster.workers)))
    seconds = cluster.restart_worker(index, timeout_s=None)
    return f"worker-{index} stopped and started again ({seconds:.1f} s)"


def committed_state_files(directory: str) -> list[str]:
    """State files of the newest batch some job of the Fries round in ``directory`` has
    committed (so the end of the round reads them for its verdict)."""
    try:
        restored = read_progress(directory)
    except (OSError, ValueError, KeyError):
        return []
    if restored is None:
        return []
    committed = [p.history[-1] for p in restored[1] if p.history]
    if not committed:
        return []
    return sorted(glob.glob(os.path.join(batch_dir(directory, max(committed)), "L*-p*.pkl")))


def damage_state_file(directory: str, plan: FaultPlan, truncate: bool) -> str | None:
    """Truncate (to a random shorter length) or flip one random byte of a committed state
    file; returns its path (first word) and what was done."""
    files = committed_state_files(directory)
    if not files:
        return None
    path = files[plan.below(len(files))]
    size = os.path.getsize(path)
    if size == 0:
        return None
    at = plan.below(size)
    if truncate:
        os.truncate(path, at)
        return f"{path} truncated from {size} to {at} bytes"
    with open(path, "r+b") as handle:
        handle.seek(at)
        byte = handle.read(1)
        handle.seek(at)
        handle.write(bytes([byte[0] ^ (1 << plan.below(8))]))
    return f"{path} byte {at} of {size} flipped"
