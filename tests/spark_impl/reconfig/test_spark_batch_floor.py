"""The cuts to the executor's per-batch floor keep its results, and ``bench`` reports a
Structured Streaming baseline that cannot start instead of crashing.

* The fused source (``Executor(fuse_source=True)``, the default for few partitions: the first
  operator stage reads the source itself, one Spark stage less per batch) must deliver the
  same records to the same objects in the same order as the source stage + shuffle: without
  requests the two runs are identical (outputs, schedule, states), with requests and
  restarts both are serializable and equal the spec's serial execution.
* ``bench latency`` when every Structured Streaming attempt misses Spark's connect-back
  timeout: one stderr line per attempt, a final line saying no ratio was measured, exit 3.
* ``prefer_installed_pyspark``: a worker started through its wrapper imports the installed
  pyspark although ``pyspark.zip`` is first on its ``PYTHONPATH``; a user's
  ``PYSPARK_PYTHON`` is left alone.
"""

from __future__ import annotations

import dataclasses
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from streamproof.main import main
from spark_impl.reconfig import Executor, collect_results, scenario_job

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.spark_checks import problems, random_scenario  # noqa: E402
import pyspark
import spark_impl.workloads.structured as structured
from spark_impl.session import prefer_installed_pyspark
from streamproof.commands import bench

pytestmark = pytest.mark.spark


def _run(spark: Any, scenarios: list[Any], directory: Path, fused: bool) -> list[Any]:
    executor = Executor(spark, [scenario_job(sc, batch_size=3) for sc in scenarios], "fries", str(directory),
                        fuse_source=fused)
    executor.run()
    return collect_results(executor)


def test_fused_source_changes_nothing(spark: Any, tmp_path: Path) -> None:
    scenarios = [random_scenario(random.Random(1700 + seed), restarts=seed % 3 == 0, costly=False)
                 for seed in range(16)]
    quiet = [dataclasses.replace(sc, reconfigurations=()) for sc in scenarios]
    batch = scenarios + quiet
    fused = _run(spark, batch, tmp_path / "fused", True)
    staged = _run(spark, batch, tmp_path / "staged", False)
    for sc, a, b in zip(batch, fused, staged):
        assert problems(sc, a) == []
        assert problems(sc, b) == []
    for a, b in zip(fused[len(scenarios):], staged[len(scenarios):]):
        assert (a.outputs, a.schedule, a.states) == (b.outputs, b.schedule, b.states)


def test_bench_reports_a_baseline_that_cannot_start(spark: Any, monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    calls: list[int] = []

    def fails(*args: Any, **kwargs: Any) -> int:
        calls.append(1)
        raise RuntimeError("[STREAM_FAILED] Python worker failed to connect back.")

    monkeypatch.setattr(structured, "structured_run", fails)
    monkeypatch.setattr(bench, "PAUSE_S", 0.0)
    assert main(["bench", "latency", "--json"]) == 3
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(calls) == bench.ATTEMPTS
    attempts = [line for line in lines if f"/{bench.ATTEMPTS} failed" in line]
    assert len(attempts) == bench.ATTEMPTS and all("connect-back timeout" in line for line in attempts)
    assert f"failed {bench.ATTEMPTS} times in a row" in lines[-1] and "no ratio measured" in lines[-1]


def test_workers_import_the_installed_pyspark(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PYSPARK_PYTHON", "/somewhere/python")
    assert prefer_installed_pyspark() is None
    monkeypatch.delenv("PYSPARK_PYTHON")
    wrapper = prefer_installed_pyspark()
    assert wrapper is not None and os.environ["PYSPARK_PYTHON"] == wrapper
    package = os.path.dirname(os.path.abspath(pyspark.__file__))
    archive = os.path.join(package, "python", "lib", "pyspark.zip")
    env = dict(os.environ, PYTHONPATH=f"{archive}{os.pathsep}/elsewhere")
    shown = subprocess.run([wrapper, "-c", "import pyspark, sys; print(pyspark.__file__); print(sys.path)"],
                           env=env, capture_output=True, text=True, check=True).stdout.splitlines()
    assert shown[0] == pyspark.__file__ and "pyspark.zip" not in shown[1] and "/elsewhere" in shown[1]
