"""`streamproof prove`: table, --json contract, exit codes."""

from __future__ import annotations

import json

import pytest

from streamproof.main import main


def test_prove_json_contract_and_exit_0(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--json", "--max-operators", "4"]) == 0
    rows = json.loads(capsys.readouterr().out)["results"]
    assert rows
    for row in rows:
        assert {"name", "reference", "bound", "status", "seconds"} <= set(row)
        assert row["status"] in {"proved", "counterexample", "timeout"}
        assert "quantified over" in row["scope"]  # every row says what it proves
    assert {r["status"] for r in rows} == {"proved", "counterexample"}
    naive = next(r for r in rows if "naive" in r["name"])
    assert naive["status"] == "counterexample" and naive["witness"]["schedule"]


def test_prove_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", "--max-operators", "3", "--only", "Lemma 5.5"]) == 0
    out = capsys.readouterr().out
    assert "proved" in out and "Lemma 5.5" in out and "1/1 as expected" in out


def test_prove_timeout_is_not_as_expected(capsys: pytest.CaptureFixture[str]) -> None:
    # a 1 ms budget cannot settle Lemma 5.5 on 10 operators: timeout, and a timeout fails
    code = main(["prove", "--json", "--max-operators", "10", "--only", "Lemma 5.5",
                 "--timeout", "0.001"])
    rows = json.loads(capsys.readouterr().out)["results"]
    assert [r["status"] for r in rows] == ["timeout"]
    assert code == 1


@pytest.mark.parametrize("argv", [["--max-operators", "0"], ["--only", "no such claim"],
                                  ["--timeout", "-1"], ["--timeout", "nan"],
                                  ["--timeout", "inf"]])
def test_prove_bad_input_exits_2(argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["prove", *argv]) == 2
    assert len(capsys.readouterr().err.strip().splitlines()) == 1
