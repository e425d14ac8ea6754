"""``check-dgs`` without ``--prove`` tries Z3 first within ``--prove-budget`` seconds per
condition (streamproof/sandbox/budgeted.py): a proof makes the condition ``proved``, a Z3
counterexample the spec confirms is the violation, and a condition Z3 does not answer in time
falls back to the enumeration + hypothesis, saying so. Also the two small-scope holes: bad
input raised inside the payload sampling, and user states that cannot be printed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from streamproof.main import main
from support.dgs_helpers import simple_program, target, write_program
from proofs.dgs.prover import ProveSettings, attempt, symbolic_setting, Attempt
from reference.dgs.small_scope import sample_events, search
from spec.dgs.loader import load_program
from spec.dgs.program import UserCodeError
from reference.dgs.checker import ConditionResult
from streamproof.sandbox.budgeted import BudgetedProver, merge


def check(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(["check-dgs", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_proved_conditions_say_so(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = check(capsys, target("windowing.py:EventWindow"), "--examples", "10", "--prove-budget", "60")
    assert code == 0, out + err
    for condition in ("C1", "C2", "C3"):
        assert f"{condition} proved: proved with Z3 for all states" in out
    assert "Z3 first (--prove-budget 60 s per condition" in out
    assert out.strip().endswith("consistent")


def test_a_z3_counterexample_is_the_violation(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = check(capsys, target("windowing.py:MaxWindow"), "--examples", "5", "--prove-budget", "60", "--json")
    assert code == 1
    document = json.loads(out)
    assert sorted(v["condition"] for v in document["violations"]) == ["C1", "C2"]
    for condition in ("C1", "C2"):
        entry = document["conditions"][condition]
        assert entry["status"] == "violated" and entry["method"] == "z3"
        assert entry["prover"]["status"] == "violated" and "confirmed" in entry["prover"]["scope"]
    c3 = document["conditions"]["C3"]
    assert c3["status"] == "proved" and c3["method"].startswith("z3+enumeration")
    assert c3["prover"]["status"] == "proved" and "exhaustive" in c3  # the tests ran too


def test_no_answer_within_the_budget_falls_back(capsys: pytest.CaptureFixture[str]) -> None:
    # the key counter's C1 needs many Z3 paths (10-30 s): 0.2 s is never enough
    code, out, _ = check(capsys, target("key_counter.py:KeyCounter"), "--examples", "10", "--prove-budget", "0.2",
                         "--json")
    assert code == 0
    c1 = json.loads(out)["conditions"]["C1"]
    assert c1["status"] == "holds" and c1["method"] == "enumeration+hypothesis"
    assert c1["prover"]["status"] == "no answer" and "did not answer within the budget" in c1["prover"]["note"]
    assert c1["prover"]["seconds"] < 0.2 + 5  # the deadline stops Z3 (slack for a loaded machine)


def test_attempt_stops_on_its_budget() -> None:
    program = load_program(target("key_counter.py:KeyCounter"))
    setting = symbolic_setting(program, ProveSettings(examples=40))
    tried = attempt(setting, "C1", 0.3)
    assert tried.status == "no answer" and tried.result is None and tried.seconds < 0.3 + 5
    assert attempt(setting, "C2", 60).status == "proved"  # the deadline was cleared


@pytest.mark.parametrize("value", ["-1", "nan", "inf", "3601"])
def test_bad_budget_is_one_line(capsys: pytest.CaptureFixture[str], value: str) -> None:
    code, out, err = check(capsys, target("windowing.py:EventWindow"), "--prove-budget", value)
    assert code == 2 and out == "" and len(err.strip().splitlines()) == 1
    assert "--prove-budget must be between 0 and 3600" in err


#: dgs_helpers' simple program with (tag, number) events whose tag() raises above 3
_TAG_RAISES = (simple_program()
               .replace("def tag(e): return e", "def tag(e):\n        if e[1] > 3: raise ValueError('too big')\n"
                                                "        return e[0]")
               .replace("def init(): return 0", "def init(): return INIT")
               .replace('st.sampled_from(["a", "b"])', 'st.tuples(st.sampled_from(["a", "b"]), st.integers(0, 10))'))


def test_user_error_while_sampling_payloads_is_itself(tmp_path: Path) -> None:
    # hole (a): the error used to come out as hypothesis's FlakyFailure (an exception group)
    program = load_program(write_program(tmp_path, _TAG_RAISES.replace("INIT", "0")) + ":P")
    with pytest.raises(UserCodeError, match="P.tag: raised ValueError: too big"):
        sample_events(program)


def test_states_that_cannot_be_printed_are_enumerated(tmp_path: Path) -> None:
    # hole (b): repr of a 20,000-digit integer raises ValueError (Python's digit limit)
    text = _TAG_RAISES.replace("INIT", "10 ** 20000").replace("if e[1] > 3:", "if e[1] > 99:")
    program = load_program(write_program(tmp_path, text) + ":P")
    # The budget is wall time: 0.5 s evaluated no instance at all at load average 60 (a CI
    # run), so give the first instance room; C1 uses the whole budget, C2/C3 stop sooner.
    for condition in ("C1", "C2", "C3"):
        found, scope = search(program, condition, 4.0)
        assert found is None and scope.instances > 0  # the program is consistent


def test_a_concrete_violation_beats_a_proof() -> None:
    program = load_program(target("windowing.py:EventWindow"))
    proved = Attempt("C1", "proved", 0.1, "proved with Z3 for all states (State: int)")
    holds = ConditionResult("C1", "holds", method="enumeration+hypothesis", examples=5, checked=5)
    assert merge(holds, proved).status == "proved" and merge(holds, proved).method == "z3+enumeration+hypothesis"
    violated = ConditionResult("C1", "violated", examples=5, checked=1)
    assert merge(violated, proved) is violated
    prover = BudgetedProver(program, 2.0, 5, 0)
    prover.attempts["C1"] = proved
    document: dict[str, Any] = {"conditions": {"C1": {"status": "violated"}}}
    lines = ["C1 violated:", "inconsistent: C1 violated"]
    prover.annotate(document, lines)
    assert document["conditions"]["C1"]["prover"]["status"] == "contradicted"
    assert lines[-1] == "inconsistent: C1 violated" and lines[1].startswith("Z3 first")
