"""``streamproof conformance --operator FILE.py:NAME`` (docs/conformance.md, "Your own O+
operator"; streamproof/conformance_operator.py): a user's O+ operator judged on random inputs
against the reference's O+ semantics with the same functions (sequential, SN, elastic VSN)
and spark_impl's live O+ front end; exit 0 pass, 1 violation (shrunk, saved, replayable),
2 bad input with one stderr line."""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

import pytest

from spec.errors import InputError
from streamproof.main import main

from conformance.oplus import user_cases, user_suite
from conformance.oplus.oracles import problem_text
from conformance.oplus.user_suite import LIVE, live_judge, load_under, run_operator_suite
from support.paths import TESTS

OPS = str(TESTS / "support" / "oplus_conformance_operators.py")


def _target(name: str) -> str:
    return f"{OPS}:{name}"


@pytest.mark.parametrize("name", ["KEY_SUM", "DISTINCT"])
def test_a_correct_operator_passes_on_the_reference_modes(name: str, tmp_path: Path, capsys: Any) -> None:
    code = main(["conformance", "--operator", _target(name), "--engine", "reference", "--cases", "40", "--json",
                 "--save-dir", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    assert code == 0, out
    checks = {c["name"]: c for c in out["suites"][0]["checks"]}
    assert checks["reference SN vs sequential"]["cases"] == 40
    assert checks["reference elastic VSN vs sequential"]["failed"] == 0
    assert checks[LIVE]["status"] == "unavailable"  # NOT RUN, never a pass


def test_an_operator_that_raises_is_a_user_code_violation_naming_the_function(tmp_path: Path, capsys: Any) -> None:
    code = main(["conformance", "--operator", _target("RAISES_ON_SEVEN"), "--engine", "reference", "--cases", "20",
                 "--save-dir", str(tmp_path)])
    out = capsys.readouterr().out
    assert code == 1
    assert "[user-code]" in out and "raising_update" in out and "ZeroDivisionError" in out
    saved = sorted(tmp_path.glob("*.json"))
    assert saved
    record = json.loads(saved[0].read_text())
    assert [len(items) for items in record["case_data"]["case"]["inputs"]] == [1]  # shrunk to the one tuple
    assert main(["conformance", "--replay", str(saved[0])]) == 1  # still fails when replayed


def test_an_operator_raising_in_the_sequential_reference_stops_the_run_before_spark(
        tmp_path: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """``conformance.oplus.user_suite``: "when the operator's own code raises there, the first
    reference check reports that case ... and the run stops: the other checks, the live one
    included, are NOT RUN ..., so no Spark query starts"; exit 1 as every ``user-code``
    finding (docs/cli.md, exit codes)."""
    def no_spark(*_: Any, **__: Any) -> Any:
        raise AssertionError("the live engine was started after the sequential reference raised")

    monkeypatch.setattr(user_suite, "live_engine", no_spark)
    code = main(["conformance", "--operator", _target("RAISES_ON_SEVEN"), "--engine", "spark", "--cases", "30",
                 "--save-dir", str(tmp_path)])
    captured = capsys.readouterr()
    assert code == 1, captured
    lines = captured.out.splitlines()
    assert sum("[user-code]" in line for line in lines) == 1 and len(lines) < 20, captured.out
    assert "during the sequential reference" in captured.out and "raising_update" in captured.out
    assert len(captured.err.splitlines()) <= 1, captured.err  # the progress line, no Spark log
    assert main(["conformance", "--operator", _target("RAISES_ON_SEVEN"), "--engine", "spark", "--cases", "30",
                 "--save-dir", str(tmp_path), "--json"]) == 1
    checks = {c["name"]: c for c in json.loads(capsys.readouterr().out)["suites"][0]["checks"]}
    assert checks["reference SN vs sequential"]["oracle_failures"] == {"user-code": checks["reference SN vs sequential"]["failed"]}
    assert checks[LIVE]["status"] == checks["reference elastic VSN vs sequential"]["status"] == "unavailable"


@pytest.mark.parametrize("argv, where", [
    (["--operator", "no/such/file.py:X"], "no/such/file.py"),
    (["--operator", f"{OPS}:MISSING"], "MISSING"),
    (["--operator", f"{OPS}:NOT_AN_OPERATOR"], "NOT_AN_OPERATOR"),
    (["--operator", "nocolon"], "nocolon"),
    (["--operator", f"{OPS}:KEY_SUM", "--fields", "key:decimal"], "--fields"),
    (["--operator", f"{OPS}:KEY_SUM", "--fields", "ts,value"], "--fields"),
    (["--fields", "key,value"], "--fields"),
    (["--operator", f"{OPS}:KEY_SUM", "--suite", "fries"], "--suite"),
    (["--operator", f"{OPS}:KEY_SUM", "--inject-fault", "window-off-by-one"], "--inject-fault"),
    (["--operator", f"{OPS}:KEY_SUM", "--job", "x.py:J"], "--operator"),
])
def test_bad_input_exits_2_with_one_line(argv: list[str], where: str, capsys: Any) -> None:
    assert main(["conformance", *argv, "--engine", "reference", "--cases", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and where in err, err
    assert "Traceback" not in err


def test_fields_name_the_payload_columns_and_their_kinds() -> None:
    assert user_cases.parse_fields("key,value") == (user_cases.Field("key", "str"), user_cases.Field("value", "int"))
    assert user_cases.parse_fields("k:int, text:str") == (user_cases.Field("k", "int"), user_cases.Field("text", "str"))
    with pytest.raises(InputError):
        user_cases.parse_fields("a,a")


def test_cases_carry_every_declared_field_sorted_by_event_time() -> None:
    under = load_under(_target("KEY_SUM"), "key,value")
    for seed in range(30):
        case = user_cases.build(random.Random(seed), under.op, under.fields)
        for items in case["inputs"]:
            assert [i["ts"] for i in items] == sorted(i["ts"] for i in items)
            assert all(isinstance(i["key"], str) and isinstance(i["value"], int) for i in items)
        for smaller in user_cases.candidates(case):
            assert user_cases.size(smaller) <= user_cases.size(case)


@pytest.mark.slow
@pytest.mark.parametrize("name", ["KEY_SUM", "DISTINCT"])
def test_a_correct_operator_passes_live(name: str, spark: Any, tmp_path: Path) -> None:
    result = run_operator_suite(load_under(_target(name), "key,value"), cases=8, seed=3, spark_check=True,
                                save_dir=str(tmp_path), shrink_budget=50, spark=spark)
    live = next(c for c in result.checks if c.name == LIVE)
    assert live.status == "ran" and live.cases == 8 and result.failed == 0, [f.explanation for f in result.failures]


@pytest.mark.slow
def test_an_operator_whose_output_depends_on_where_it_runs_is_caught_live(spark: Any, tmp_path: Path) -> None:
    result = run_operator_suite(load_under(_target("WHERE_IT_RUNS"), "key,value"), cases=6, seed=0,
                                spark_check=True, save_dir=str(tmp_path), shrink_budget=30, spark=spark)
    failed = {c.name: c.failed for c in result.checks}
    assert failed["reference SN vs sequential"] == 0 and failed["reference elastic VSN vs sequential"] == 0
    assert failed[LIVE] > 0
    report = result.failures[0]
    assert report.check == LIVE and report.oracles == ("outputs",) and report.replay_file is not None


@pytest.mark.slow
def test_a_live_query_killed_by_the_users_update_is_the_users_fault_not_a_hang(spark: Any) -> None:
    under = load_under(_target("RAISES_ON_SEVEN"), "key,value")
    case = {"parallelism": 2, "items_per_round": 1, "reconfigurations": [],
            "inputs": [[{"ts": t, "key": "a", "value": v} for t, v in ((1, 1), (3, 7), (9, 2), (12, 3))]]}
    started = time.monotonic()
    problem = problem_text(live_judge(under, spark)([case])[0])
    assert time.monotonic() - started < 180
    assert problem is not None and problem.startswith("[user-code]"), problem
    assert "raising_update" in problem and "ZeroDivisionError" in problem
