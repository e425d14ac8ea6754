"""O+ emission rounds and emitting instances: the definition in
``spec.oplus.emission`` and the suite's ``round`` / ``instance`` oracles
(``conformance.oplus.oracles``), without Spark."""

from __future__ import annotations

import math
from collections import Counter
from typing import Any

from hypothesis import given, settings, strategies as st

from spec.oplus.emission import (
    applied_reconfigurations, due_by, emission_rounds, parallelism_in_round, round_watermark, rounds,
)
from spec.oplus.scenario import instance_of, parse_scenario

from conformance.oplus.cases import oplus_scenarios
from conformance.oplus.oracles import INSTANCE_TAG, ROUND_TAG, sequential, timing_problem


def _sum(inputs: list[list[dict[str, Any]]], **extra: Any) -> dict[str, Any]:
    return {"operator": "sliding-sum", "WA": 5, "WS": 5, "WT": "multi", "parallelism": 1,
            "inputs": inputs, "reconfigurations": [], **extra}


def test_a_window_is_due_in_the_first_round_whose_watermark_reaches_its_end() -> None:
    case = _sum([[{"ts": 1, "key": "a", "value": 1}, {"ts": 5, "key": "a", "value": 2},
                  {"ts": 9, "key": "a", "value": 4}]])
    scenario = parse_scenario(case)
    assert [round_watermark(scenario, 1, r) for r in range(3)] == [1, 5, math.inf]
    due = emission_rounds(scenario, 1, sequential)
    # [0, 5) closes at watermark 5 (round 1, not 2); [5, 10) at the end of the stream
    assert due == Counter({((5, "a", "1"), 1): 1, ((10, "a", "6"), 2): 1})
    # two items per round: the first round's watermark is already 5
    assert emission_rounds(scenario, 2, sequential) == Counter({((5, "a", "1"), 0): 1, ((10, "a", "6"), 1): 1})


def test_a_join_match_is_due_when_its_second_tuple_is_delivered() -> None:
    case = {"operator": "scalejoin", "WA": 1, "WS": 4, "parallelism": 1, "reconfigurations": [],
            "params": {"keys": 1, "band": 0},
            "inputs": [[{"ts": 1, "x": 1, "y": 1}, {"ts": 2, "x": 0, "y": 0}, {"ts": 30, "x": 0, "y": 0}],
                       [{"ts": 4, "a": 1, "b": 1}]]}
    due = emission_rounds(parse_scenario(case), 1, sequential)
    assert [r for (_, r) in due.elements()] == [0]  # (1, 4) matched in round 0 (4 - 1 < WS)


def test_rescales_take_effect_at_the_first_boundary_whose_watermark_reaches_them() -> None:
    case = _sum([[{"ts": t, "key": "a", "value": 1} for t in (1, 5, 9, 12)]], parallelism=1,
                reconfigurations=[{"watermark": 5, "parallelism": 3}, {"watermark": 20, "parallelism": 2}])
    scenario = parse_scenario(case)
    # boundaries' watermarks 1, 5, 9: the change at 5 applies after round 1; 20 never (end of stream)
    assert [parallelism_in_round(scenario, 1, r) for r in range(4)] == [1, 1, 3, 3]
    assert applied_reconfigurations(scenario, 1) == 1
    assert applied_reconfigurations(scenario, 4) == 0  # one round: nothing before the end


@settings(max_examples=60, deadline=None)
@given(oplus_scenarios(), st.integers(1, 5))
def test_due_outputs_grow_and_end_with_the_whole_output(case: dict[str, Any], per_round: int) -> None:
    scenario = parse_scenario(case)
    last = rounds(scenario, per_round) - 1
    previous: Counter[Any] = Counter()
    for r in range(last + 1):
        now = due_by(scenario, per_round, r, sequential)
        assert not previous - now  # D(r) only grows
        previous = now
    assert previous == Counter(sequential(scenario))
    due = emission_rounds(scenario, per_round, sequential)
    assert sum(due.values()) == len(sequential(scenario))
    for (row, r), _ in due.items():
        if scenario.operator not in ("scalejoin", "forward"):
            assert row[0] <= round_watermark(scenario, per_round, r)  # expired when emitted
            assert row[0] > round_watermark(scenario, per_round, r - 1)  # and not before


def _correct_run(case: dict[str, Any], per_round: int) -> tuple[list[Any], list[tuple[int, int]]]:
    scenario = parse_scenario(case)
    due = emission_rounds(scenario, per_round, sequential)
    rows = list(row for row, _ in due.elements())
    emitted = [(r, instance_of(row[1], parallelism_in_round(scenario, per_round, r))) for row, r in due.elements()]
    return rows, emitted


def test_the_timing_oracles_pass_a_correct_run_and_catch_a_late_window_and_a_wrong_instance() -> None:
    case = _sum([[{"ts": 1, "key": "a", "value": 1}, {"ts": 5, "key": "b", "value": 2},
                  {"ts": 9, "key": "c", "value": 4}, {"ts": 14, "key": "a", "value": 1}]],
                parallelism=2, reconfigurations=[{"watermark": 5, "parallelism": 3}])
    rows, emitted = _correct_run(case, 1)
    assert timing_problem(case, 1, rows, emitted) is None
    late = [(r + 1, i) if row[0] == 5 else (r, i) for row, (r, i) in zip(rows, emitted)]
    problem = timing_problem(case, 1, rows, late)
    assert problem is not None and problem.startswith(ROUND_TAG) and "round 2, due in round 1" in problem
    moved = [(r, (i + 1) % 3) if row[0] == 10 else (r, i) for row, (r, i) in zip(rows, emitted)]
    problem = timing_problem(case, 1, rows, moved)
    assert problem is not None and problem.startswith(INSTANCE_TAG) and "of 3 in that round" in problem
    assert timing_problem(case, 1, rows, emitted, applied=1) is None
    problem = timing_problem(case, 1, rows, emitted, applied=0)
    assert problem is not None and problem.startswith(INSTANCE_TAG) and "applied 0" in problem
