"""A real Spark standalone cluster on 127.0.0.1: a job submitted in client
mode runs in executor JVMs that are separate processes from the driver, conforms, and nothing
is left behind - neither after the job nor after the cluster stops, nor when the process that
started the cluster is killed with SIGKILL.

Marked ``cluster`` and ``slow`` (about 3-4 minutes on this loaded 2-core machine: ~35 s to start
the cluster, ~2 min for spark-submit); run with ``pytest -m cluster``.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from typing import Any, Iterator

import pytest

from conformance.cluster import processes as proc
from conformance.cluster.standalone import MARKER, LocalCluster, java_problem
import conformance.cluster.job as job
from spec.jsonio import load_json

pytestmark = [pytest.mark.cluster, pytest.mark.slow,
              pytest.mark.skipif(java_problem() is not None, reason=str(java_problem()))]


@pytest.fixture(scope="session")
def local_cluster() -> Iterator[LocalCluster]:
    """A master and two workers on 127.0.0.1 for the whole session; on teardown every process
    the cluster ever saw (master, workers, executors, PySpark daemons and workers, drivers) must
    be gone - a leftover is a test error, not a warning. The nemesis can take
    ``cluster.processes()`` for the pids to kill."""
    cluster = LocalCluster(workers=2)
    with cluster:
        yield cluster
    assert cluster.leftovers() == [], f"processes left behind: {cluster.leftovers()}"


def _wait_gone(pids: list[int], timeout_s: float = 60.0) -> list[int]:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline and any(proc.alive(p) for p in pids):
        time.sleep(0.5)
    return [p for p in pids if proc.alive(p)]


def test_a_fries_job_runs_in_separate_executor_processes_and_conforms(local_cluster: LocalCluster) -> None:
    assert local_cluster.alive_workers() == 2
    daemons = local_cluster.processes()
    assert len(daemons["master"]) == 1 and len(daemons["worker"]) == 2
    out = os.path.join(local_cluster.shared_dir, "fries.json")
    submission = local_cluster.submit(job.__file__, [
        "--job", "fries", "--cases", "2", "--seed", "1", "--executors", "2",
        "--checkpoint", os.path.join(local_cluster.shared_dir, "checkpoints"), "--out", out], timeout_s=900)
    assert submission.returncode == 0 and not submission.timed_out, submission.tail()
    assert submission.leftovers == []
    report: Any = load_json(out)
    assert report["master"] == local_cluster.master_url
    assert report["registered_executors"] == 2
    assert [c["failures"] for c in report["cases"]] == [[], []]
    rows = report["before"] + report["after"]
    executor_jvms = {row["executor_pid"] for row in rows}
    python_workers = {row["python_pid"] for row in rows}
    driver = report["driver"]
    assert None not in executor_jvms and len(executor_jvms) == 2, rows
    assert {row["executor_id"] for row in rows} == {"0", "1"}
    assert driver["jvm_pid"] not in executor_jvms and driver["python_pid"] not in python_workers
    assert {row["host"] for row in rows} == {"127.0.0.1"}
    # the driver's processes are gone; the application's executors and Python workers go with it
    assert _wait_gone([driver["jvm_pid"], driver["python_pid"]], 5.0) == []
    assert _wait_gone(sorted(executor_jvms | python_workers)) == []
    assert len(local_cluster.processes()["worker"]) == 2  # the workers stay for the next job


def test_sigkill_of_the_process_that_started_a_cluster_leaves_nothing(tmp_path: Any) -> None:
    script = ("import sys, time\n"
              "from conformance.cluster.standalone import LocalCluster\n"
              f"cluster = LocalCluster(1, directory={str(tmp_path)!r})\n"
              "cluster.start()\n"
              "print('ready', flush=True)\n"
              "time.sleep(600)\n")
    starter = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert starter.stdout is not None and starter.stdout.readline().strip() == "ready"
        started = proc.matching(f"{MARKER}{tmp_path}")
        assert len(started) == 2  # the master and the worker JVMs
        os.kill(starter.pid, signal.SIGKILL)
        starter.wait(timeout=10)
        assert _wait_gone(started) == []
        assert proc.matching(f"{MARKER}{tmp_path}") == []
    finally:
        if starter.poll() is None:
            starter.kill()
        proc.kill_tree(proc.matching(f"{MARKER}{tmp_path}"), grace_s=1.0)
