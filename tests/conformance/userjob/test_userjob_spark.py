"""User jobs on Spark judged against the reference.

Default run: one small batch of an in-memory job (functions defined in this test module, which
Spark's workers cannot import: shipped by value, as the pytest plugin does for users), through
the plugin's Oracle on the session's shared SparkSession. Slow: the examples/fraud_job.py
acceptance runs - 60 cases pass; the seeded faults ``missing-alignment`` and
``double-transform`` fail with a shrunk case that ``--replay`` reproduces and whose
regression file passes on the correct executor.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from conformance.pytest_plugin import Oracle
from spec.fries.dataflow import dataflow
from spark_impl.reconfig import ListSource, Request, UserOperator, user_job, user_update
from support.paths import ROOT

FRAUD = f"{ROOT / 'examples' / 'fraud_job.py'}:job"


def _running_mean(state: Any, key: str, value: int) -> tuple[Any, list[tuple[str, Any]]]:
    count, mean = state or (0, 0.0)
    count, mean = count + 1, round(mean + (value - mean) / (count + 1), 6)
    print("seen", key, value)  # captured by the guard, never on the test's stdout
    return (count, mean), [(key, {"n": count, "mean": mean})]


def _weighted(state: Any, key: str, value: int) -> tuple[Any, list[tuple[str, Any]]]:
    count, mean = state or (0, 0.0)
    count, mean = count + 1, round(0.5 * mean + 0.5 * value, 6)
    return (count, mean), [(key, {"n": count, "mean": mean, "v": 2})]


def _halve(state: Any) -> Any:
    return state[0], round(state[1] / 2, 6)


def _job() -> tuple[Any, list[Request], dict[str, Any]]:
    flow = dataflow([("S", "source"), ("A", "one-to-one"), ("B", "one-to-one")], [("S", "A"), ("A", "B")])
    source = ListSource(tuple(("S", f"S:{i}", f"user-{(i * 7) % 5}", (i * 13) % 17) for i in range(30)))
    job = user_job(flow, {"A": UserOperator(flow.kind("A"), _running_mean),
                          "B": UserOperator(flow.kind("B"), lambda s, k, v: ((s or 0) + 1, [(k, (s or 0) + 1)]))},
                   source, parallelism={"A": 2, "B": 2})
    swap = Request({"A": user_update(flow, "A", _weighted, _halve),
                    "B": user_update(flow, "B", lambda s, k, v: ((s or 0) + 10, [(k, (s or 0) + 10)]), lambda s: s)})
    return job, [swap], {"dependence": "key", "max_tuples": 10}


@pytest.mark.spark
def test_an_in_memory_user_job_conforms_through_the_plugin_oracle(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    result = Oracle(spark).check(_job, cases=4, seed=3)
    assert result.cases == 4 and result.failed == 0
    assert "seen user-" in (result.checks[0].note or "")  # the prints were captured and reported
    assert "seen user-" not in capsys.readouterr().out


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "streamproof.main", "conformance", *args],
                          capture_output=True, text=True, timeout=3000, cwd=cwd)


@pytest.mark.slow
def test_the_fraud_job_passes_60_cases(tmp_path: Path) -> None:
    done = _cli("--job", FRAUD, "--cases", "60", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert summary["passed"] and summary["cases"] == 60


@pytest.mark.slow
@pytest.mark.parametrize("fault, cases", [("double-transform", 12), ("missing-alignment", 60)])
def test_seeded_faults_fail_with_a_shrunk_replayable_case(tmp_path: Path, fault: str, cases: int) -> None:
    done = _cli("--job", FRAUD, "--cases", str(cases), "--inject-fault", fault, "--json", "--save-dir", str(tmp_path),
                cwd=tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    failure = json.loads(done.stdout)["suites"][0]["failures"][0]
    assert failure["shrunk_size"] <= failure["original_size"]
    replayed = _cli("--replay", failure["replay_file"], cwd=tmp_path)
    assert replayed.returncode == 1 and "still fails" in replayed.stdout
    regression = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-m", "",
                                 failure["pytest_file"]], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert regression.returncode == 0, regression.stdout[-2000:]  # replayed without the fault: passes
