"""`streamproof conformance` end to end on the reference engines: exit codes, --json, the
teeth (an injected fault is caught, shrunk, saved and replayable), --report."""

from __future__ import annotations

import json
import subprocess
import sys
import re
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from streamproof.main import main


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["conformance", *argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("argv, fragment", [
    (["--suite", "nope"], "unknown suite 'nope'"),
    (["--engine", "reference", "--inject-fault", "no-such-fault"], "unknown fault 'no-such-fault'"),
    (["--cases", "-1"], "--cases: must be >= 0"),
    (["--shrink-budget", "-5"], "--shrink-budget: must be >= 0"),
    (["--replay", "/no/such/case.json"], "no such file"),
    (["--suite", "oplus", "--engine", "reference", "--inject-fault", "naive"], "has no engine that can inject it"),
])
def test_bad_input_exits_2_in_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], fragment: str) -> None:
    code, out, err = _run(capsys, *argv)
    assert code == 2
    assert fragment in err and len(err.strip().splitlines()) == 1
    assert out == ""


def test_list_faults_json(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--list-faults", "--json", "--engine", "reference")
    assert code == 0 and json.loads(out) == ["naive"]


def test_passing_run_exits_0_with_json_summary(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, err = _run(capsys, "--suite", "fries", "--engine", "reference", "--cases", "60", "--seed", "3",
                          "--json", "--save-dir", str(tmp_path))
    summary = json.loads(out)
    assert code == 0, summary
    # from 60 cases the fixed sections (entry paths, stepped probes) fit inside --cases exactly
    assert summary["passed"] is True and summary["cases"] == 60 and summary["failed"] == 0
    assert summary["suites"][0]["engine"] == "reference"
    assert "60/60" in err  # the progress bar went to stderr


def test_injected_fault_is_caught_shrunk_saved_and_replayable(capsys: pytest.CaptureFixture[str],
                                                              tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "--suite", "fries", "--engine", "reference", "--cases", "200",
                        "--inject-fault", "naive", "--report", str(tmp_path), "--shrink-budget", "60")
    assert code == 1
    assert "FAILED fries" in out and "NOT conflict-serializable" in out and "shrunk case: {" in out
    cases = sorted(tmp_path.glob("fries_reference_naive_*.json"))
    tests = sorted(tmp_path.glob("test_regression_*.py"))
    assert len(cases) == 1 and len(tests) == 1
    # replaying with the fault still fails (exit 1); without it the case passes (exit 0)
    assert _run(capsys, "--replay", str(cases[0]))[0] == 1
    assert _run(capsys, "--replay", str(cases[0]), "--engine", "reference", "--inject-fault", "naive")[0] == 1
    # the generated regression test runs as is (replayed without the injected fault: green)
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(tests[0])],
                            capture_output=True, text=True, cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    report = (tmp_path / "report.md").read_text()
    assert "**FAIL**" in report and "<svg" in report and "serializable" in report

    charts = re.findall(r"<svg.*?</svg>", report, re.S)
    assert len(charts) >= 2
    for chart in charts:  # each inline chart is well-formed SVG with drawn marks
        root = ElementTree.fromstring(chart)
        assert root.tag.endswith("svg") and root.findall("{http://www.w3.org/2000/svg}rect")
    assert json.loads((tmp_path / "summary.json").read_text())["suites"][0]["failed"] >= 1


def test_oplus_suite_runs_reference_checks_and_reports_spark_as_not_run(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--suite", "oplus", "--cases", "30", "--json", "--engine", "reference")
    summary = json.loads(out)
    assert code == 0
    checks = {c["name"]: c for c in summary["suites"][0]["checks"]}
    assert checks["reference SN vs sequential"]["cases"] == 30
    assert checks["reference elastic VSN vs sequential"]["failed"] == 0
    spark = checks["spark vs sequential"]
    assert spark["status"] == "unavailable" and spark["cases"] == 0 and "engine reference" in spark["note"]


def test_dgs_suite_never_pretends(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--suite", "dgs", "--cases", "5", "--engine", "reference")
    assert code == 0
    assert "NOT RUN" in out
