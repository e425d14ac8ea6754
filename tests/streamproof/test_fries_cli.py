"""``streamproof mcs`` and ``streamproof check-schedule``: the issue-2 §4 contracts (exit
codes, --json shapes) and one-line errors for every kind of bad input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamproof.main import main

DAG = {"operators": [{"name": "S", "kind": "source"}, {"name": "J", "kind": "one-to-many"},
                     {"name": "Sp", "kind": "one-to-one"}, {"name": "M1", "kind": "one-to-one"},
                     {"name": "M2", "kind": "one-to-one", "unique": False},
                     {"name": "U", "kind": "one-to-one"}],
       "edges": [["S", "J"], ["J", "Sp"], ["Sp", "M1"], ["Sp", "M2"], ["M1", "U"], ["M2", "U"]]}

REPLICATE = {"operators": [{"name": "S", "kind": "source"}, {"name": "X", "kind": "replicate"},
                           {"name": "A", "kind": "one-to-one"},
                           {"name": "B", "kind": "one-to-one"}],
             "edges": [["S", "X"], ["X", "A"], ["X", "B"]]}


def write(tmp_path: Path, value: Any, name: str = "in.json") -> str:
    path = tmp_path / name
    path.write_text(value if isinstance(value, str) else json.dumps(value))
    return str(path)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_mcs_json_contract(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["mcs", write(tmp_path, DAG), "--reconfigure", "M1,M2", "--json"], capsys)
    assert code == 0 and err == ""
    assert json.loads(out) == {"components": [["J", "M1", "M2", "Sp"]]}


def test_mcs_pruning_is_on_by_default(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, REPLICATE)
    assert json.loads(run(["mcs", path, "--reconfigure", "A", "--json"], capsys)[1]) == {
        "components": [["A"]]}
    assert json.loads(run(["mcs", path, "--reconfigure", "A", "--no-prune", "--json"],
                          capsys)[1]) == {"components": [["A", "X"]]}
    two = json.loads(run(["mcs", path, "--reconfigure", "B,A", "--one-to-one", "--json"],
                         capsys)[1])
    assert two == {"components": [["A"], ["B"]]}


def test_mcs_human_output_lists_heads(tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["mcs", write(tmp_path, DAG), "--reconfigure", "M1"], capsys)
    assert code == 0
    assert "1 component" in out and "heads (receive the FCM): J" in out
    assert "J -> Sp, Sp -> M1" in out and "one-to-many ancestors synchronised from: J" in out


SERIAL = {"logs": {"M": [{"txn": "t1"}, {"txn": "R", "update": True}, {"txn": "t2"}],
                   "C": [{"txn": "t1"}, {"txn": "R", "update": True}, {"txn": "t2"}]}}
NAIVE = {"logs": {"M": [{"txn": "t1"}, {"txn": "t2"}, {"txn": "R", "update": True}],
                  "C": [{"txn": "t1"}, {"txn": "R", "update": True}, {"txn": "t2"}]}}


def test_check_schedule_serializable(tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, SERIAL)
    code, out, _ = run(["check-schedule", path, "--json"], capsys)
    assert code == 0
    assert json.loads(out) == {"serializable": True, "cycle": None,
                               "serial_order": ["t1", "R", "t2"]}
    code, out, _ = run(["check-schedule", path], capsys)
    assert code == 0 and "conflict-serializable" in out and "t1, R, t2" in out


def test_check_schedule_violation(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write(tmp_path, NAIVE)
    code, out, _ = run(["check-schedule", path, "--json"], capsys)
    assert code == 1
    assert json.loads(out) == {"serializable": False, "cycle": ["t2", "R"],
                               "serial_order": None}
    code, out, _ = run(["check-schedule", path], capsys)
    assert code == 1
    assert "t2 must come both before and after R" in out and "(M: t2 at [1], then R at [2])" in out


@pytest.mark.parametrize("content, fragment", [
    ("{", "malformed JSON"),
    ({"operators": [{"name": "A", "kind": "magic"}]}, "unknown kind 'magic'"),
    ({"operators": [{"name": "A", "kind": "source"}] * 2}, "duplicate operator name 'A'"),
    ({"operators": [{"name": "A", "kind": "source"}], "edges": [["A", "Z"]]},
     "unknown operator 'Z'"),
    ({"operators": [{"name": "A", "kind": "one-to-one"}, {"name": "B", "kind": "one-to-one"}],
      "edges": [["A", "B"], ["B", "A"]]}, "cycle"),
    (DAG, "unknown reconfigured operator 'Nope'"),
    ({"operators": []}, "has no operators)"),
])
def test_mcs_bad_input_is_one_line_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          content: Any, fragment: str) -> None:
    code, out, err = run(["mcs", write(tmp_path, content), "--reconfigure", "M1,Nope"], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and fragment in err and "Traceback" not in err


def test_mcs_unreadable_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for path in (str(tmp_path / "missing.json"), str(tmp_path)):
        code, _, err = run(["mcs", path, "--reconfigure", "A"], capsys)
        assert code == 2 and len(err.strip().splitlines()) == 1
    code, _, err = run(["mcs", write(tmp_path, DAG), "--reconfigure", "M1,,M2"], capsys)
    assert code == 2 and "empty operator name" in err


@pytest.mark.parametrize("content, fragment", [
    ("[1, 2", "malformed JSON"),
    ({"logs": {"A": [{"txn": "t1", "update": "yes"}]}}, "expected true or false"),
    ({"logs": {"A": [{"tx": "t1"}]}}, "unknown field 'tx'"),
    ({"logs": {"A": [{"txn": "R", "update": True}], "B": [{"txn": "R"}]}},
     "function update elsewhere"),
    ({"logs": {"A": [{"txn": "R", "update": True}, {"txn": "R", "update": True}]}},
     "updates 'A' twice"),
    ({"log": {}}, "unknown field 'log'"),
])
def test_check_schedule_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  content: Any, fragment: str) -> None:
    code, out, err = run(["check-schedule", write(tmp_path, content)], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1 and fragment in err and "Traceback" not in err
