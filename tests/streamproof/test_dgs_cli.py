"""``streamproof check-dgs``: exit 0 / 1 / 2, the plain-words report, ``--json``, and every
bad-input case as one line on stderr."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamproof.main import main
from support.dgs_helpers import simple_program, target, write_program



def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["check-dgs", *argv, "--prove-budget", "0"])  # Z3 first: tests/proofs/test_dgs_prove_budget.py
    captured = capsys.readouterr()
    return code, captured.out, captured.err



def test_consistent_program_exits_0(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([target("fraud_detection.py:FraudDetection"), "--examples", "40"], capsys)
    assert code == 0, out + err
    for condition in ("C1", "C2", "C3"):
        assert f"{condition} holds" in out
    assert out.strip().endswith("consistent")


def test_inconsistent_program_exits_1_and_reports_every_condition(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([target("windowing.py:MaxWindow"), "--examples", "100"], capsys)
    assert code == 1
    assert "C1 violated:" in out and "C2 violated:" in out and "C3 holds" in out
    assert "left side of the equation (state)" in out and "right side of the equation (state)" in out
    assert "pred1" in out and "s reached by:" in out
    assert out.strip().endswith("inconsistent: C1, C2 violated")


def test_json_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([target("key_counter.py:IndependentResetCounter"), "--examples", "60", "--json"], capsys)
    assert code == 1
    document = json.loads(out)
    assert document["consistent"] is False
    conditions = [v["condition"] for v in document["violations"]]
    assert conditions == ["C1", "C3"]
    cex = document["violations"][1]["counterexample"]
    assert {"e1", "e2", "lhs_state", "rhs_state", "lhs_out", "rhs_out", "history", "equation"} <= set(cex)


def test_json_consistent(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([target("windowing_typed.py:TypedWindow"), "--examples", "30", "--json"], capsys)
    assert code == 0
    assert json.loads(out)["consistent"] is True and json.loads(out)["violations"] == []


def test_seed_makes_runs_reproducible(capsys: pytest.CaptureFixture[str]) -> None:
    argv = [target("windowing.py:MaxWindow"), "--examples", "30", "--seed", "7", "--json"]
    first = run(argv, capsys)[1]
    assert run(argv, capsys)[1] == first


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code, out, err = run(argv, capsys)
    assert code == 2, out + err
    assert len(err.strip().splitlines()) == 1
    return err


def test_bad_input_unloadable_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "no such file" in one_line_error(capsys, [str(tmp_path / "nope.py") + ":P"])
    assert "syntax error" in one_line_error(capsys, [write_program(tmp_path, "def (:") + ":P"])


def test_bad_input_missing_member(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = write_program(tmp_path, simple_program(update="s + 1"))
    assert "has no member 'Q'" in one_line_error(capsys, [path + ":Q"])
    no_fork = simple_program(update="s + 1").replace("    @staticmethod\n    def fork(s, l, r): return (s, 0)\n", "")
    assert "missing member 'fork'" in one_line_error(capsys, [write_program(tmp_path, no_fork) + ":P"])


def test_bad_input_asymmetric_depends(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = simple_program(update="s + 1").replace("return x == y", 'return (x, y) == ("b", "a")')
    err = one_line_error(capsys, [write_program(tmp_path, text) + ":P"])
    assert "not symmetric" in err and "'b'" in err and "'a'" in err


def test_bad_input_fork_given_dependent_predicates(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = simple_program(update="s + 1") + '\nP.splits = [({"a"}, {"a"})]\n'
    assert "fork given dependent predicates" in one_line_error(capsys, [write_program(tmp_path, text) + ":P"])


def test_bad_input_exception_in_user_code(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    text = simple_program(update='1 // 0 if e == "b" else s + 1')
    err = one_line_error(capsys, [write_program(tmp_path, text) + ":P", "--examples", "30"])
    assert "P.update" in err and "ZeroDivisionError" in err


def test_bad_examples_count(capsys: pytest.CaptureFixture[str]) -> None:
    assert "--examples" in one_line_error(capsys, [target("windowing.py:EventWindow"), "--examples", "0"])


@pytest.mark.parametrize("events", ["st.nothing()", 'st.sampled_from(["a", "b"]).filter(lambda e: False)'])
def test_bad_input_events_strategy_without_events(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  events: str) -> None:
    """Used to end as an internal error (exit 3) from hypothesis's Unsatisfiable."""
    text = simple_program().replace('return st.sampled_from(["a", "b"])', f"return {events}")
    err = one_line_error(capsys, [write_program(tmp_path, text) + ":P", "--examples", "10"])
    assert "P.events" in err and "produced no events" in err
