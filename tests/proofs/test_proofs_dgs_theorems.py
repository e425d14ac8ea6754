"""Bounded, exhaustive checks of DGS Theorem 2.4 (every small wire diagram, every
interleaving: proofs/dgs/diagrams.py) and Theorem 3.5 (every small valid plan on every small
valid input, several executor seeds: proofs/dgs/plans.py) on the shipped consistent
programs; the same enumerations find a counterexample for inconsistent ones (not vacuous)."""

from __future__ import annotations

import pytest

from support.dgs_helpers import example
from proofs.dgs.diagrams import check_theorem_2_4
from proofs.dgs.plans import check_theorem_3_5

#: (program, events per diagram) - the key counter's 6 tags x 512 predicate pairs make 3
#: events cost ~15 s (behind -m slow)
DIAGRAM_BOUNDS = [("windowing.py:EventWindow", 3), ("page_view.py:PageViewJoin", 3),
                  ("fraud_detection.py:FraudDetection", 3), ("windowing_typed.py:TypedWindow", 3),
                  ("key_counter.py:KeyCounter", 2)]
#: (program, streams, events per input)
PLAN_BOUNDS = [("windowing.py:EventWindow", ("s0", "s1"), 2),
               ("fraud_detection.py:FraudDetection", ("s0", "s1"), 2),
               ("windowing_typed.py:TypedWindow", ("s0", "s1"), 2),
               ("page_view.py:PageViewJoin", ("s0",), 2),
               ("key_counter.py:KeyCounter", ("s0",), 1)]


@pytest.mark.parametrize("name, events", DIAGRAM_BOUNDS)
def test_theorem_2_4_on_every_small_diagram(name: str, events: int) -> None:
    result = check_theorem_2_4(example(name), events, budget=120.0)
    assert result.counterexample is None, result.counterexample
    assert result.complete and result.diagrams > 30 and result.interleavings > result.diagrams


@pytest.mark.slow
def test_theorem_2_4_key_counter_three_events() -> None:
    result = check_theorem_2_4(example("key_counter.py:KeyCounter"), 3, budget=600.0)
    assert result.complete and result.counterexample is None


@pytest.mark.parametrize("name, streams, events", PLAN_BOUNDS)
def test_theorem_3_5_on_every_small_plan_and_input(name: str, streams: tuple[str, ...],
                                                   events: int) -> None:
    result = check_theorem_3_5(example(name), streams, events, seeds=2, budget=120.0)
    assert result.counterexample is None, result.counterexample
    assert result.complete and result.plans > 1 and result.runs >= result.plans * result.inputs


@pytest.mark.parametrize("name", ["key_counter.py:DuplicatingCounter",
                                  "key_counter.py:IndependentResetCounter"])
def test_the_enumerations_find_inconsistent_programs(name: str) -> None:
    diagram = check_theorem_2_4(example(name), 2)
    assert diagram.counterexample is not None
    plan = check_theorem_3_5(example(name), ("s0",), 2)
    assert plan.counterexample is not None
