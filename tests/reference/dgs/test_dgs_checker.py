"""The C1-C3 checker: the shipped consistent examples pass, each inconsistent variant is
caught on exactly the conditions it breaks, and every reported counterexample really violates
its equation when re-evaluated by spec.dgs.consistency."""

from __future__ import annotations

import json
from typing import Any, Callable

import pytest

from support.dgs_helpers import CONSISTENT, INCONSISTENT, example
from reference.dgs.checker import check_consistency
from spec.dgs.consistency import Evaluation, evaluate_c1, evaluate_c2, evaluate_c3
from spec.dgs.program import Program

EVALUATE: dict[str, Callable[[Program, Any], Evaluation]] = {"C1": evaluate_c1, "C2": evaluate_c2, "C3": evaluate_c3}


@pytest.mark.parametrize("name", CONSISTENT)
def test_consistent_examples_hold(name: str) -> None:
    report = check_consistency(example(name), examples=60, seed=1)
    assert report.consistent, [r.counterexample.lines() for r in report.results if r.counterexample]
    assert all(r.checked > 0 for r in report.results)


# shrinking these two takes 5-20 s each on a loaded 2-core machine: run with -m slow
SLOW = {"key_counter.py:DuplicatingCounter", "fraud_detection.py:ForgetfulFraud"}


@pytest.mark.parametrize(
    "name", [pytest.param(n, marks=pytest.mark.slow) if n in SLOW else n for n in sorted(INCONSISTENT)]
)
def test_inconsistent_variants_are_caught(name: str) -> None:
    program = example(name)
    report = check_consistency(program, examples=200, seed=0)
    assert not report.consistent
    violated = {r.condition for r in report.results if not r.holds}
    assert violated == INCONSISTENT[name]
    for result in report.results:
        cex = result.counterexample
        if cex is None:
            continue
        assert not EVALUATE[result.condition](program, cex.instance).holds
        json.dumps(cex.to_json())  # JSON-serialisable
        assert any(line.startswith("equation:") for line in cex.lines())


def test_report_json_shape() -> None:
    report = check_consistency(example("windowing.py:MaxWindow"), examples=50)
    document = report.to_json()
    assert document["consistent"] is False
    assert {v["condition"] for v in document["violations"]} <= {"C1", "C2", "C3"}
    assert set(document["conditions"]) == {"C1", "C2", "C3"}
