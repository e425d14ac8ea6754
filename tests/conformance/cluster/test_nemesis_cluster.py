"""``streamproof nemesis`` on a real standalone cluster (marked ``cluster`` and ``slow``: minutes).

* a short run injects faults of several kinds while Fries, O+ and DGS jobs run (the driver
  kill, whose new driver takes a minute or two to start here, is left to the long run) and reports,
  in the ``--json`` contract, nothing lost or duplicated and every run serializable;
* Ctrl-C (SIGINT) in the middle of a run - cluster up, driver and executors running - leaves
  no process of the cluster behind.

Each run gets its own ``TMPDIR``, so the cluster's directory (and the
``-Dstreamproof.cluster=<dir>`` marker on every JVM it starts) is under the test's tmp_path
and stray processes are found by that marker.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from typing import Any

import pytest

from conformance.cluster import processes as proc

pytestmark = [pytest.mark.cluster, pytest.mark.slow]


def _nemesis(tmp_path: Any, *argv: str) -> "subprocess.Popen[str]":
    env = dict(os.environ, TMPDIR=str(tmp_path))
    return subprocess.Popen([sys.executable, "-m", "streamproof.main", "nemesis", *argv], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)


def _strays(tmp_path: Any) -> list[int]:
    return proc.matching(f"-Dstreamproof.cluster={tmp_path}")


def test_a_short_nemesis_run_loses_and_duplicates_nothing(tmp_path: Any) -> None:
    run = _nemesis(tmp_path, "--minutes", "2", "--seed", "3", "--json", "--cases", "2",
                   "--faults", "executor-kill,python-kill,executor-pause,state-corrupt")
    out, err = run.communicate(timeout=1800)
    report = json.loads(out)
    assert run.returncode == 0, (report["violations"], err[-2000:])
    shown = {k: report[k] for k in ("faults", "moments", "rounds", "runs", "recovery_ms")}
    for key in ("runs", "faults", "lost", "duplicated", "serializable", "violations", "recovery_ms"):
        assert key in report
    assert report["runs"] > 0 and report["lost"] == 0 and report["duplicated"] == 0 and report["serializable"]
    assert sum(report["faults"].values()) >= 3 and len(report["faults"]) >= 2, shown
    assert report["leftovers"] == [] and _strays(tmp_path) == []


def test_ctrl_c_mid_run_leaves_no_process(tmp_path: Any) -> None:
    run = _nemesis(tmp_path, "--minutes", "10", "--seed", "4")
    deadline = time.monotonic() + 600
    try:
        # wait until the cluster runs a driver with executors: >= 2 workers' executor JVMs
        while time.monotonic() < deadline and run.poll() is None:
            marked = _strays(tmp_path)
            if sum("CoarseGrainedExecutorBackend" in proc.command_line(pid) for pid in marked) >= 2:
                break
            time.sleep(1)
        assert run.poll() is None, run.communicate()[1][-2000:]
        os.kill(run.pid, signal.SIGINT)
        run.communicate(timeout=180)
    finally:
        if run.poll() is None:
            proc.kill_tree([run.pid], grace_s=1.0)
    assert run.returncode != 0
    assert _strays(tmp_path) == []
