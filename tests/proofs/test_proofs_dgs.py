"""`check-dgs --prove` (proofs.dgs): the shipped examples are proved, the broken ones get a
Z3 counterexample that the spec confirms, and nothing outside the checker's domain is ever
reported (no false alarms)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any, Callable

import pytest

from streamproof.main import main
from proofs.dgs.prover import ProveSettings, prove_consistency
from spec.dgs.consistency import Evaluation, evaluate_c1, evaluate_c2, evaluate_c3
from spec.dgs.program import Program
from spec.dgs.loader import load_program

from support.paths import ROOT
from proofs.dgs import prover
EXAMPLES = ROOT / "reference" / "dgs" / "examples"
FAST = ProveSettings(examples=40, depth=2)


@pytest.mark.parametrize("target", ["windowing.py:EventWindow", "fraud_detection.py:FraudDetection",
                                    "windowing_typed.py:TypedWindow", "page_view.py:PageViewJoin"])
def test_shipped_examples_are_proved_for_all_states(target: str) -> None:
    proof = prove_consistency(load_program(str(EXAMPLES / target)), FAST)
    for result in proof.report.results:
        assert (result.status, result.method) == ("proved", "z3"), (result.condition, proof.scopes)
        assert proof.scopes[result.condition].startswith("proved with Z3 for all states")


def test_key_counter_is_proved() -> None:
    """The key counter (DGS Fig. 1) with C1's branch events bounded by 0 here (1 in the CLI,
    about 20 s): C1 is false for arbitrary s1, s2 but proved from every forked state."""
    proof = prove_consistency(load_program(str(EXAMPLES / "key_counter.py:KeyCounter")),
                              ProveSettings(examples=40, branch_events=0))
    assert [r.status for r in proof.report.results] == ["proved"] * 3
    assert "dict[{0, 1, 2} -> int" in proof.scopes["C2"]


@pytest.mark.parametrize("target, condition", [("windowing.py:MaxWindow", "C2"),
                                               ("windowing.py:HalvingWindow", "C1"),
                                               ("fraud_detection.py:ForgetfulFraud", "C1")])
def test_broken_examples_get_confirmed_z3_counterexamples(target: str, condition: str) -> None:
    program = load_program(str(EXAMPLES / target))
    proof = prove_consistency(program, FAST)
    result = proof.report.result(condition)
    assert (result.status, result.method) == ("violated", "z3")
    assert result.counterexample is not None
    facts = dict(result.counterexample.facts)
    assert facts["lhs_state"] != facts["rhs_state"] or facts.get("lhs_out") != facts.get("rhs_out")
    assert "reachable from init" in proof.scopes[condition]


SOURCE = '''
from hypothesis import strategies as st

class NonNegativeMax:
    """C2 fails for negative states, which are unreachable; C1 fails for real."""
    tags = frozenset({"inc"})
    tag = staticmethod(lambda e: e[0])
    depends = staticmethod(lambda a, b: False)
    init = staticmethod(lambda: 0)
    update = staticmethod(lambda s, e: s + 1)
    out = staticmethod(lambda s, e: [])
    fork = staticmethod(lambda s, l, r: (s, 0))
    join = staticmethod(lambda a, b: max(a, b))
    events = staticmethod(lambda: st.just(("inc", 0)))

class ListState(NonNegativeMax):
    """States are lists: no symbolic shape."""
    init = staticmethod(lambda: [])
    update = staticmethod(lambda s, e: s + [1])
    fork = staticmethod(lambda s, l, r: (s, []))
    join = staticmethod(lambda a, b: a + b)
'''


def _write(tmp_path: Path) -> Path:
    path = tmp_path / "user_programs.py"
    path.write_text(textwrap.dedent(SOURCE))
    return path


def test_unreachable_all_states_counterexample_is_not_reported(tmp_path: Path) -> None:
    program = load_program(f"{_write(tmp_path)}:NonNegativeMax")
    proof = prove_consistency(program, FAST)
    c2 = proof.report.result("C2")
    assert c2.status == "holds" and c2.method == "z3-bounded+hypothesis"
    assert proof.scopes["C2"].startswith("for all executions up to depth 2")
    assert "not for all states" in proof.scopes["C2"]
    c1 = proof.report.result("C1")
    assert c1.status == "violated" and c1.counterexample is not None
    # the reported instance is in the checker's domain and violates C1 under the spec
    assert "reachable from init" in proof.scopes["C1"]


def test_unsupported_code_falls_back_to_examples(tmp_path: Path) -> None:
    program = load_program(f"{_write(tmp_path)}:ListState")
    proof = prove_consistency(program, FAST)
    for result in proof.report.results:
        assert result.method == "enumeration+hypothesis"  # small scope first, then random
        assert proof.scopes[result.condition].startswith("not provable symbolically")
        assert "exhaustive" in proof.scopes[result.condition]
    assert proof.report.consistent


def test_cli_prove_json_and_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["check-dgs", str(EXAMPLES / "windowing.py:EventWindow"), "--prove", "--json",
                 "--examples", "30"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["consistent"] is True
    assert all(c["method"] == "z3" and c["scope"] for c in doc["conditions"].values())
    assert main(["check-dgs", str(EXAMPLES / "windowing.py:MaxWindow"), "--prove",
                 "--examples", "30"]) == 1
    out = capsys.readouterr().out
    assert "C2 violated (Z3 counterexample" in out and "inconsistent" in out


def test_spec_confirms_every_reported_counterexample(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every reported violation went through the spec's evaluation and failed it there."""
    verdicts: list[bool] = []

    def recording(condition: str) -> Callable[[Program, Any], Evaluation]:
        def evaluate(program: Program, instance: Any) -> Evaluation:
            evaluators: dict[str, Callable[[Program, Any], Evaluation]] = {
                "C1": evaluate_c1, "C2": evaluate_c2, "C3": evaluate_c3}
            evaluation = evaluators[condition](program, instance)
            verdicts.append(evaluation.holds)
            return evaluation
        return evaluate

    monkeypatch.setattr(prover, "EVALUATE", {c: recording(c) for c in ("C1", "C2", "C3")})
    proof = prove_consistency(load_program(str(EXAMPLES / "windowing.py:MaxWindow")), FAST)
    violated = [r.condition for r in proof.report.results if not r.holds]
    assert violated and verdicts.count(False) == len(violated)


def test_too_many_cases_fall_back_to_examples() -> None:
    program = load_program(str(EXAMPLES / "windowing.py:EventWindow"))
    proof = prove_consistency(program, ProveSettings(examples=30, max_skeletons=0))
    for result in proof.report.results:
        assert result.method == "enumeration+hypothesis"
        assert "more than 0" in proof.scopes[result.condition]
