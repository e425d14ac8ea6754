"""The O+ suite's out-of-order landings (conformance.oplus.engines.disorder, module docstring):
files landed pairwise swapped with one modification time, judged with allowed_lateness at
least the disorder (nothing late, outputs = sorted sequential reference) and with
allowed_lateness 0 + drop (the late count the documented rule predicts, the outputs without
those tuples)."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.core.cases import draw_cases
from conformance.oplus.cases import oplus_cases
from conformance.oplus.edges import with_edges
from conformance.oplus.engines import disorder
from conformance.core.verdict import OracleName, fails
from conformance.oplus.oracles import LATE_TAG, first_failure, problem_text, sequential
from conformance.oplus import suite
from spec.oplus.scenario import parse_scenario


def _sum_case(stamps: list[int], per_round: int) -> tuple[dict[str, Any], int]:
    items = [{"ts": t, "key": "a", "value": 1} for t in stamps]
    return {"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "multi", "parallelism": 1, "inputs": [items],
            "reconfigurations": []}, per_round


def test_files_land_later_event_times_first_and_carry_every_tuple_once() -> None:
    case = _sum_case([1, 2, 3, 4, 5, 6, 7, 8], 2)
    landed = [[item["ts"] for _, _, item in rows] for rows in disorder.placed(case)]
    assert landed == [[3, 4], [1, 2], [7, 8], [5, 6]]
    files = disorder.files_of([case])
    assert sorted(r["ts"] for f in files[:-1] for r in f) == list(range(1, 9))
    assert files[-1] == [{"job": 0, "source": 0, "end": True}]


def test_disorder_is_how_far_a_tuple_is_below_what_its_source_already_delivered() -> None:
    case = _sum_case([1, 2, 3, 4, 5, 6, 7, 8], 2)
    assert disorder.disorder(case) == 3  # ts 1 lands after ts 4
    assert disorder.predicted_late(case, 3) == set()
    # lateness 0: after [3, 4] the watermark is 4, so 1 and 2 are late; after [5..8] none
    assert disorder.predicted_late(case, 0) == {(0, 0), (0, 1), (0, 4), (0, 5)}


def test_a_source_that_delivered_nothing_holds_its_jobs_watermark_back() -> None:
    scenario, _ = _sum_case([5, 6], 1)
    scenario["inputs"].append([{"ts": 1, "key": "b", "value": 1}, {"ts": 2, "key": "b", "value": 1}])
    # source 1 lands [2] first, then [1]; source 0 lands [6] then [5]: watermark min(6, 2) = 2 -> 1 late
    assert disorder.predicted_late((scenario, 1), 0) == {(1, 0)}


def test_the_family_is_tuples_only_and_bounded() -> None:
    drawn = with_edges(draw_cases(oplus_cases(), 40, 2), 2)
    cases = disorder.family(drawn)
    assert 0 < len(cases) <= disorder.MOST
    for scenario, _ in cases:
        assert all("ts" in item for items in scenario["inputs"] for item in items)
        assert scenario["reconfigurations"] == []
        assert len(disorder.placed((scenario, 1))) <= disorder.GROUPS
    assert any(disorder.predicted_late(c, 0) for c in cases)  # the drop run drops something


def test_a_late_count_difference_is_the_late_oracle_and_printed_after_its_tag() -> None:
    verdict = fails(OracleName.LATENESS, "counted 0")
    assert verdict.name == "late" and problem_text(verdict) == f"{LATE_TAG} counted 0"


@pytest.mark.slow
def test_live_front_end_loses_nothing_within_the_allowed_lateness_and_counts_every_drop(spark: Any) -> None:
    cases = disorder.family(with_edges(draw_cases(oplus_cases(), 32, 0), 0))
    problems, lateness = disorder.disorder_discrepancies(cases, frozenset(), spark)
    assert lateness > 0
    assert problems == [None] * len(cases), [p for p in problems if p][:2]


@pytest.mark.slow
def test_out_of_order_landings_catch_a_window_off_by_one(spark: Any) -> None:
    cases = disorder.family(with_edges(draw_cases(oplus_cases(), 32, 0), 0))
    problems, _ = disorder.disorder_discrepancies(cases, frozenset({"window-off-by-one"}), spark)
    assert any(p is not None for p in problems)


def test_an_uncounted_drop_fails_the_late_oracle_and_a_silent_one_the_outputs() -> None:
    case = _sum_case([1, 2, 3, 4, 5, 6, 7, 8], 2)
    kept = disorder.without(case, disorder.predicted_late(case, 0))
    rows = sequential(parse_scenario(kept[0]))
    assert first_failure(disorder.judge(case, 0, (rows, 4))) is None
    late = first_failure(disorder.judge(case, 0, (rows, 0)))
    assert late is not None and late.oracle is OracleName.LATENESS
    everything = sequential(parse_scenario(case[0]))
    outputs = first_failure(disorder.judge(case, 0, (everything, 4)))
    assert outputs is not None and outputs.oracle is OracleName.OUTPUTS


def test_a_saved_disorder_case_replays_through_the_disordered_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[Any] = []

    def fake(cases: Any, faults: frozenset[str], spark: Any = None) -> tuple[list[tuple[Any, ...]], int]:
        seen.append((cases, faults))
        return [(fails(OracleName.LATENESS, "counted 0"),)], 3

    monkeypatch.setattr(disorder, "disorder_verdicts", fake)
    case = _sum_case([1, 2], 1)
    record = {"scheduler": suite.DISORDER_SCHEDULER, "faults": ["window-off-by-one"],
              "case_data": {"scenario": case[0], "items_per_round": 1, "allowed_lateness": 0}}
    assert suite.replay(record, None) == (False, "[late] counted 0")
    assert seen == [([case], frozenset({"window-off-by-one"}))]
