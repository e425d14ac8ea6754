"""``streamproof conformance --spark-log-level LEVEL`` (docs/cli.md; docs/conformance.md after
the ``--json`` example; streamproof/commands/conformance.py ``run``): a passing suite run prints
no Spark log lines to stderr - only the progress and Spark's JVM start-up lines, printed before
a level can be set - while another level shows Spark's lines again; a bad level is exit 2 with
one line; a lost connection to Spark's JVM is one line, exit 3, never a violation."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import streamproof.commands.conformance as command
from conformance.core.crashes import SparkGone
from conformance.core.spark_logs import ENV
from streamproof.main import main
from support.paths import ROOT, TESTS

KEY_SUM = f"{TESTS / 'support' / 'oplus_conformance_operators.py'}:KEY_SUM"

STARTUP = ("WARNING: Using incubator modules", "Using Spark's default log4j profile", "Setting default log level",
           "To adjust logging level", "WARN NativeCodeLoader")
"""Spark's JVM start-up lines (docs/conformance.md): printed before the session exists."""


OPERATOR = ("--operator", KEY_SUM, "--cases", "3")
CATALOGUE = ("--suite", "oplus", "--cases", "2")
"""The catalogue's O+ suite: its batch and live checks get the session in different threads."""


def _conformance(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != ENV}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])
    return subprocess.run([sys.executable, "-m", "streamproof", "conformance", *argv, "--seed", "0",
                           "--save-dir", str(tmp_path / "saved")],
                          capture_output=True, text=True, timeout=600, cwd=str(tmp_path), env=env)


@pytest.mark.slow
@pytest.mark.parametrize("argv", [OPERATOR, CATALOGUE], ids=["operator", "catalogue"])
def test_a_passing_suite_run_prints_no_spark_log_lines_to_stderr(argv: tuple[str, ...], tmp_path: Path) -> None:
    done = _conformance(tmp_path, *argv)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "spark-streaming vs sequential" in done.stdout  # the live check ran (and injected its crashes)
    spark_lines = [line for line in done.stderr.splitlines()
                   if line.strip() and not line.startswith("oplus ") and not any(s in line for s in STARTUP)]
    assert spark_lines == [], "\n".join(spark_lines[:20])


@pytest.mark.slow
def test_another_spark_log_level_shows_sparks_lines_about_the_injected_crashes(tmp_path: Path) -> None:
    done = _conformance(tmp_path, *OPERATOR, "--spark-log-level", "error")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ERROR MicroBatchExecution" in done.stderr and "simulated driver crash" in done.stderr


@pytest.mark.parametrize("argv, env, named", [
    (["--spark-log-level", "loud"], None, "--spark-log-level"),
    ([], "chatty", ENV),
])
def test_a_bad_spark_log_level_is_one_line_exit_2(argv: list[str], env: str | None, named: str, capsys: Any,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(ENV, raising=False)
    if env is not None:
        monkeypatch.setenv(ENV, env)
    assert main(["conformance", "--operator", KEY_SUM, "--engine", "reference", "--cases", "1", *argv]) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and len(err.splitlines()) == 1 and named in err, err


def test_a_lost_connection_to_sparks_jvm_is_one_line_exit_3_not_a_violation(capsys: Any,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    def jvm_died(args: Any) -> int:
        raise SparkGone("the connection to Spark's JVM is lost (Py4JNetworkError: Answer from Java side is empty)")

    monkeypatch.setattr(command, "run_operator", jvm_died)
    assert main(["conformance", "--operator", KEY_SUM, "--cases", "1"]) == 3
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert captured.out == "" and len(err.splitlines()) == 1, err
    assert err.startswith("streamproof conformance: error: the connection to Spark's JVM is lost"), err
