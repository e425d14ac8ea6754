"""Shrinking (conformance/shrink.py + the Fries and O+ moves), the scenario JSON writer, and
the O+ suite's teeth."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Sequence

import pytest
from hypothesis import given, settings, strategies as st

from spec.fries.scenario import Scenario, scenario_from_json, ingestion_order

from conformance.fries.cases.moves import candidates
from conformance.fries.cases.codec import scenario_to_json
from conformance.fries.cases.scenarios import scenarios
from conformance.fries.cases.timing import with_timing, PROFILES, timings
from conformance.core.shrink import shrink
from conformance.core.cases import draw_cases
from conformance.fries.cases.streams import stretch
import conformance.dgs.suite as dgs_suite
import conformance.oplus.suite as oplus_suite


def _list_moves(xs: list[int]) -> list[list[int]]:
    return [xs[:i] + xs[i + 1:] for i in range(len(xs))] + [xs[:i] + [x - 1] + xs[i + 1:]
                                                            for i, x in enumerate(xs) if x > 0]


def test_shrink_reaches_a_one_minimal_value_in_batches() -> None:
    calls: list[int] = []

    def still_fails(batch: Sequence[list[int]]) -> list[bool]:
        calls.append(len(batch))
        return [sum(xs) >= 10 and 7 in xs for xs in batch]

    shrunk, stats = shrink([9, 7, 3, 8, 1], _list_moves, still_fails, batch=4)
    assert sorted(shrunk) == [3, 7]  # 7 must stay, plus the least that keeps sum >= 10
    assert not stats.exhausted_budget and stats.steps > 0
    assert max(calls) <= 4  # candidates are run in batches of at most 4
    assert all(not still_fails([c])[0] for c in _list_moves(shrunk))


def test_shrink_stops_at_its_budget() -> None:
    shrunk, stats = shrink(list(range(30)), _list_moves, lambda b: [sum(xs) > 3 for xs in b], max_evaluations=5)
    assert stats.exhausted_budget and stats.evaluated <= 5 + 16


@settings(max_examples=30)
@given(with_timing(scenarios()))
def test_scenario_json_round_trips(scenario: Scenario) -> None:
    assert scenario_from_json(scenario_to_json(scenario)) == scenario


@settings(max_examples=10)
@given(with_timing(scenarios()))
def test_fries_moves_yield_valid_strictly_different_scenarios(scenario: Scenario) -> None:
    value = scenario_to_json(scenario)
    seen = set()
    for candidate in candidates(value):
        scenario_from_json(candidate)  # valid (raises otherwise)
        assert candidate != value
        key = repr(candidate)
        assert key not in seen
        seen.add(key)


def test_fries_shrink_to_the_essence_of_a_synthetic_bug() -> None:
    """A fake engine that is wrong whenever an operator named B is reconfigured and a source
    tuple with value 5 exists: the shrunk case keeps exactly that and nothing else."""
    raw: dict[str, Any] = {
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "A", "kind": "one-to-one"},
                                   {"name": "B", "kind": "one-to-one"}, {"name": "C", "kind": "blocking"}],
                     "edges": [["S", "A"], ["A", "B"], ["A", "C"]]},
        "functions": {"A": {"op": "map", "mul": 2, "add": 1}, "B": {"op": "filter", "mod": 2, "rem": 1},
                      "C": {"op": "sum", "mul": 1, "add": 0}},
        "sources": {"S": [{"key": k, "value": v} for k, v in [(3, 1), (4, 5), (2, 8), (1, 5), (0, 2)]]},
        "parallelism": {"A": 3, "B": 2},
        "reconfigurations": [
            {"at": 3, "updates": {"A": {"function": {"op": "map", "mul": 1, "add": 0}, "state": {"mul": 2}},
                                  "B": {"function": {"op": "filter", "mod": 3, "rem": 0}}}},
            {"at": 4, "updates": {"C": {"function": {"op": "sum", "mul": 2, "add": 0}}}}],
        "timing": {"seed": 4, "fcm_delay": [3, 9], "restarts": [2]},
    }

    def buggy(value: dict[str, Any]) -> bool:
        touches_b = any("B" in r["updates"] for r in value.get("reconfigurations", []))
        return touches_b and any(t["value"] == 5 for ts in value["sources"].values() for t in ts)

    shrunk, _ = shrink(raw, candidates, lambda batch: [buggy(v) for v in batch])
    assert buggy(shrunk)
    assert [t["value"] for t in shrunk["sources"]["S"]] == [5]
    assert shrunk["sources"]["S"][0]["key"] == 0
    assert [list(r["updates"]) for r in shrunk["reconfigurations"]] == [["B"]]
    assert "timing" not in shrunk and "parallelism" not in shrunk
    assert {op["name"] for op in shrunk["dataflow"]["operators"]} == {"S", "B"}


def test_oplus_suite_catches_and_shrinks_a_lossy_engine(monkeypatch: pytest.MonkeyPatch) -> None:
    """Teeth of the O+ check: an SN executor that drops its last output is caught and the
    case shrunk to one tuple."""

    honest = oplus_suite.reference_rows

    def lossy(case: dict[str, Any], mode: str, seed: int = 0) -> list[tuple[int, str, str]]:
        rows = honest(case, mode, seed)
        return rows[:-1] if mode == "sn" else rows

    monkeypatch.setattr(oplus_suite, "reference_rows", lossy)
    result = oplus_suite.run_oplus_suite(cases=40, seed=1)
    sn, vsn = result.checks[0], result.checks[1]
    assert sn.failed > 0 and vsn.failed == 0
    failure = result.failures[0]
    assert failure.check == "reference SN vs sequential"
    assert "missing" in failure.explanation
    assert sum(len(items) for items in failure.shrunk_case["inputs"]) == 1


def test_timing_profiles_name_real_objects() -> None:
    base = draw_cases(scenarios(), 5, 11)
    for scenario in base:
        for profile in PROFILES:
            for timing in draw_cases(timings(scenario, profile), 3, 0):
                scenario_from_json(scenario_to_json(replace(scenario, timing=timing)))
    with pytest.raises(ValueError):
        draw_cases(st.just(base[0]).flatmap(lambda s: timings(s, "nope")), 1, 0)


def test_stretch_repeats_sources_and_scales_request_points() -> None:
    for scenario in draw_cases(with_timing(scenarios(), "restarts"), 10, 2):
        longer = stretch(scenario, 4)
        scenario_from_json(scenario_to_json(longer))  # still valid
        for name, tuples in scenario.sources.items():
            assert [(t.key, t.value) for t in longer.sources[name]] == [(t.key, t.value) for t in tuples] * 4
        assert [r.at for r in longer.reconfigurations] == [4 * r.at for r in scenario.reconfigurations]
        assert longer.timing.restarts == tuple(4 * n for n in scenario.timing.restarts)
        assert len({t.txn for t in ingestion_order(longer)}) == 4 * len(ingestion_order(scenario))
        assert stretch(scenario, 1) == scenario


def test_dgs_suite_catches_and_shrinks_a_lossy_executor(monkeypatch: pytest.MonkeyPatch) -> None:
    """Teeth of the DGS check: a plan executor that loses its last output whenever it has two
    or more is caught; the shrunk case runs the sequential plan on few events."""

    honest = dgs_suite.reference_engine()

    def lossy() -> dgs_suite.BatchEngine:
        def run(cases: Any) -> Any:
            return [(outputs[:-1] if len(outputs) >= 2 else outputs, state, trace)
                    for outputs, state, trace in honest(cases)]
        return run

    monkeypatch.setattr(dgs_suite, "reference_engine", lossy)
    result = dgs_suite.run_dgs_suite(cases=40, seed=2)
    check = result.checks[0]
    assert check.failed > 0 and result.checks[1].status == "unavailable"
    failure = result.failures[0]
    assert "missing" in failure.explanation and failure.shrunk_size <= failure.original_size
    assert not failure.shrunk_case["plan"]["root"].get("children")  # the one-worker plan
    assert failure.shrunk_size == 2  # two events: the fewest for which the executor drops one
