"""``streamproof demo`` and ``streamproof bench``: bad input exits 2 before Spark starts; the
full runs are slow (minutes on this machine) and marked so."""

from __future__ import annotations

import json
from typing import Any

import pytest

from streamproof.main import main


@pytest.mark.parametrize("argv, fragment", [
    (["demo", "--schedulers", "fries,bogus"], "unknown scheduler 'bogus'"),
    (["demo", "--payments", "10", "--batch-size", "600"], "--payments >= 2 * --batch-size"),
    (["bench", "reconfiguration", "--cost-ms", "-1"], "--cost-ms: must be positive"),
    (["demo", "--schedulers", ","], "--schedulers: no scheduler given"),
    (["bench", "reconfiguration", "--events", "100", "--batch-size", "100"], "need --events >= 2 * --batch-size"),
    (["bench", "reconfiguration", "--events", "3000"], "got 3000 events in batches of 2000"),
    (["demo", "--schedulers", "fries,epoch,fries"], "scheduler 'fries' given twice"),
    (["demo", "--cost-ms", "-3"], "--cost-ms: must be at least 0"),
    (["demo", "--cost-ms", "nan"], "--cost-ms: must be at least 0"),
    (["bench", "reconfiguration", "--cost-ms", "inf"], "--cost-ms: must be positive"),
    (["bench", "throughput", "--cost-ms", "nan"], "--cost-ms: must be positive"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert fragment in err and len(err.splitlines()) == 1


@pytest.mark.slow
@pytest.mark.spark
def test_demo_runs_fries_and_epoch_consistently(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["demo", "--payments", "1200", "--batch-size", "400", "--json"]) == 0
    runs = json.loads(capsys.readouterr().out)["runs"]
    assert [r["scheduler"] for r in runs] == ["fries", "epoch"]
    assert all(r["serializable"] and r["schema_mismatches"] == 0 and r["outputs"] == 1200 for r in runs)


@pytest.mark.slow
@pytest.mark.spark
def test_bench_reconfiguration_json_contract(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["bench", "reconfiguration", "--events", "1600", "--batch-size", "800", "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    assert {"fries_ms", "epoch_ms", "ratio"} <= set(result)
    assert result["ratio"] == pytest.approx(result["fries_ms"] / result["epoch_ms"])
