"""Crashes are findings: conformance.core.crashes isolates the case that makes an
engine call raise, reports a hang, and the DGS and O+ suites turn both into ``engine``
failures (exit 1, shrunk, saved, replayable) instead of an internal error (exit 3)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, Sequence

import pytest
from py4j.protocol import Py4JNetworkError

from conformance.core.cases import draw_cases
from streamproof.main import main
from conformance.core.crashes import Crash, Guard, SparkGone, describe, run_isolating
import conformance.fries.engines.paths as frontends
from conformance.fries.cases.scenarios import scenarios
from conformance.fries.engines.batch import SparkEngine
from conformance.fries.oracles import judge
from reference.fries.simulator import simulate
import conformance.dgs.suite as dgs_suite
import conformance.oplus.suite as oplus_suite


def _doubler(items: Sequence[int]) -> list[int]:
    if 13 in items:
        raise ValueError("thirteen is unlucky")
    return [2 * i for i in items]


def test_a_crashing_case_is_isolated_and_the_others_keep_their_results() -> None:
    calls: list[int] = []

    def run(items: Sequence[int]) -> list[int]:
        calls.append(len(items))
        return _doubler(items)

    results = run_isolating(run, [1, 2, 13, 4, 5])
    assert results[:2] == [2, 4] and results[3:] == [8, 10]
    crash = results[2]
    assert isinstance(crash, Crash) and crash.alone
    assert "ValueError: thirteen is unlucky" in crash.explain()
    assert len(calls) <= 7  # bisection, not one call per case


def test_a_batch_only_crash_fails_every_case_of_the_batch_and_says_so() -> None:
    def run(items: Sequence[int]) -> list[int]:
        if len(items) > 2:
            raise RuntimeError("too many at once")
        return list(items)

    results = run_isolating(run, [1, 2, 3, 4])
    assert all(isinstance(r, Crash) and not r.alone for r in results)
    assert "batch-only" in results[0].explain()  # type: ignore[union-attr]


def test_a_wrong_number_of_results_is_a_crash() -> None:
    results = run_isolating(lambda items: list(items)[:-1], [1])
    assert isinstance(results[0], Crash) and "returned 0 results for 1" in results[0].message


def test_a_hang_fails_the_batch_and_the_engine_is_not_used_again() -> None:
    hung: list[bool] = []

    def run(items: Sequence[int]) -> list[int]:
        time.sleep(5)
        return list(items)

    guard: Guard[int, int] = Guard(run, timeout_s=0.2, on_hang=lambda: hung.append(True))
    first = guard([1, 2])
    assert all(isinstance(r, Crash) and "did not finish" in r.message for r in first)
    assert hung == [True] and guard.hung is not None
    again = guard([3])
    assert isinstance(again[0], Crash) and again[0].message.startswith("not run:")


def test_describe_keeps_the_python_error_line_of_a_long_java_trace() -> None:
    error = RuntimeError("An error occurred while calling o1.count.\n: org.apache.spark.SparkException: Job aborted\n"
                         "  at x\n  at y\nKeyError: 'A#0'\n  at z")
    assert describe(error) == "RuntimeError: KeyError: 'A#0'"


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, dict[str, Any]]:
    code = main(["conformance", *argv])
    out = capsys.readouterr().out
    return code, json.loads(out) if "--json" in argv else {}


def test_a_dgs_engine_crash_exits_1_with_the_case_saved_and_replayable(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:

    honest = dgs_suite.reference_engine

    def crashing() -> dgs_suite.BatchEngine:
        inner = honest()

        def run(cases: Sequence[Any]) -> list[Any]:
            return [Crash("ZeroDivisionError: division by zero") if len(c.streams["s1"]) > 3 else seen
                    for c, seen in zip(cases, inner(cases))]
        return run

    monkeypatch.setattr(dgs_suite, "reference_engine", crashing)
    code, summary = _cli(capsys, "--suite", "dgs", "--cases", "10", "--engine", "reference", "--json",
                         "--save-dir", str(tmp_path))
    assert code == 1
    dgs = summary["suites"][0]
    assert dgs["checks"][0]["oracle_failures"].get("engine", 0) > 0
    failure = dgs["failures"][0]
    assert failure["oracles"] == ["engine"] and "ZeroDivisionError" in failure["explanation"]
    assert failure["shrunk_size"] < failure["original_size"]
    saved = Path(failure["replay_file"])
    assert saved.exists() and Path(failure["pytest_file"]).exists()
    assert main(["conformance", "--replay", str(saved)]) == 1  # still crashes (patched engine)
    monkeypatch.setattr(dgs_suite, "reference_engine", honest)
    capsys.readouterr()
    assert main(["conformance", "--replay", str(saved)]) == 0  # the honest executor passes it


def test_an_oplus_reference_crash_is_an_engine_failure_not_exit_3(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:

    honest = oplus_suite.reference_rows

    def crashing(case: dict[str, Any], mode: str, seed: int = 0) -> Any:
        if mode == "vsn" and case["reconfigurations"]:
            raise KeyError("lost instance")
        return honest(case, mode, seed)

    monkeypatch.setattr(oplus_suite, "reference_rows", crashing)
    code, summary = _cli(capsys, "--suite", "oplus", "--cases", "20", "--engine", "reference", "--json",
                         "--save-dir", str(tmp_path))
    assert code == 1
    checks = {c["name"]: c for c in summary["suites"][0]["checks"]}
    assert checks["reference elastic VSN vs sequential"]["oracle_failures"]["engine"] > 0
    assert checks["reference SN vs sequential"]["failed"] == 0
    failure = summary["suites"][0]["failures"][0]
    assert failure["oracles"] == ["engine"] and "KeyError" in failure["explanation"]
    assert len(failure["shrunk_case"]["reconfigurations"]) == 1  # shrunk to the one that matters


def test_a_fries_spark_batch_that_raises_fails_only_the_crashing_scenario(monkeypatch: pytest.MonkeyPatch) -> None:
    """SparkEngine.run (conformance.fries.engines.catalogue) bisects a raising batch: the scenario that
    crashes the executor is an ``engine`` failure, the others are run and judged (no Spark:
    the entry path is replaced)."""
    drawn = draw_cases(scenarios().filter(lambda s: any(s.sources.values())), 6, 3)
    poison = drawn[4]

    def fake_path(spark: Any, path: str, batch: Sequence[Any], scheduler: str, **_: Any) -> list[Any]:
        if any(s is poison for s in batch):
            raise KeyError("A#0")
        return [_Result(i, simulate(s, "fries")) for i, s in enumerate(batch)]

    monkeypatch.setattr(frontends, "run_path", fake_path)
    outcomes = SparkEngine("fries", frozenset(), spark=object()).run(drawn)
    failed = [i for i, (s, o) in enumerate(zip(drawn, outcomes)) if not judge(s, o).ok]
    assert failed == [4]
    assert judge(poison, outcomes[4]).failed_oracles == ("engine",)
    assert "KeyError: 'A#0'" in (outcomes[4].error or "")


class _Result:
    def __init__(self, index: int, simulated: Any) -> None:
        self.scenario_index = index
        self.outputs = simulated.outputs
        self.schedule = simulated.schedule
        self.states = getattr(simulated, "states", None)
        self.rejected = getattr(simulated, "rejected", ())
        self.delays_ms = ()


def test_a_lost_connection_to_sparks_jvm_stops_the_run_and_is_no_finding() -> None:
    """conformance.core.crashes: a lost JVM is :class:`SparkGone` (the CLI's one line, exit 3),
    never a case reported as spark_impl's violation; a connection error of other code is a
    finding as before."""
    def dead_jvm(items: Sequence[int]) -> list[int]:
        try:
            raise Py4JNetworkError("Answer from Java side is empty")
        except Py4JNetworkError as error:
            raise RuntimeError("stopping the query failed") from error

    with pytest.raises(SparkGone, match="Spark's JVM is lost .*Py4JNetworkError"):
        run_isolating(dead_jvm, [1, 2, 3])

    def refused(items: Sequence[int]) -> list[int]:
        raise ConnectionRefusedError("the job's own web service")

    assert all(isinstance(r, Crash) for r in run_isolating(refused, [1, 2]))
