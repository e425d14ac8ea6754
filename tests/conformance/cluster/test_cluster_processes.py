"""The process bookkeeping of the local cluster (conformance.cluster.processes), without Java:
a process tree whose grandchild moved to a process group of its own (as PySpark's daemon does)
is killed entirely, and a missing Java runtime is a clear ClusterError before anything starts."""

from __future__ import annotations

import os
import sys
import tempfile
import time

import pytest

from conformance.cluster import processes as proc
from conformance.cluster.standalone import ClusterError, LocalCluster
from streamproof.main import main

# the child forks a grandchild that leaves the child's process group (like pyspark/daemon.py's
# os.setpgid(0, 0)) and ignores SIGTERM, so neither killpg of the leader nor SIGTERM suffices
_TREE = """
import os, signal, sys, time
if os.fork() == 0:
    os.setpgid(0, 0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    print(os.getpid(), flush=True)
    time.sleep(300)
    sys.exit(0)
time.sleep(300)
"""


def _grandchild(log_path: str) -> int:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        with open(log_path, encoding="utf-8") as handle:
            text = handle.read().strip()
        if text:
            return int(text.splitlines()[0])
        time.sleep(0.1)
    raise AssertionError("the grandchild did not start")


def test_kill_tree_kills_a_grandchild_in_its_own_group_that_ignores_sigterm() -> None:
    with tempfile.TemporaryDirectory() as directory:
        log_path = os.path.join(directory, "log")
        with open(log_path, "wb") as log:
            child = proc.start_group([sys.executable, "-c", _TREE], dict(os.environ), log)
        grandchild = _grandchild(log_path)
        assert os.getpgid(grandchild) != os.getpgid(child.pid)
        assert grandchild in proc.descendants([child.pid])
        left = proc.kill_tree([child.pid], grace_s=1.0)
        proc.reap(child)
        assert left == set()
        assert not proc.alive(child.pid) and not proc.alive(grandchild)


def test_missing_java_is_a_clear_error_and_starts_nothing(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.delenv("JAVA_HOME", raising=False)
    cluster = LocalCluster(2)
    with pytest.raises(ClusterError, match="no Java runtime"):
        cluster.start()
    assert cluster.daemons == [] and cluster.leftovers() == []
    cluster.stop()
    assert not os.path.exists(cluster.directory)


@pytest.mark.parametrize("argv, where", [
    (["cluster", "run", "--workers", "0"], "--workers"),
    (["cluster", "run", "--job", "nope"], "--job"),
    (["cluster", "run", "--cases", "0"], "--cases"),
    (["cluster"], "expected an action"),
])
def test_cluster_command_bad_input_is_one_line_exit_2(argv: list[str], where: str,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert where in err and err.count("\n") == 1
