"""The source-reordering hook (spec/fries/reorder.py, ``timing.reorder_bound``): a seeded
permutation of ingestion_order with displacement at most the bound, parsed and validated from
JSON, and honoured by the reference simulator (which must stay serializable under it)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.fries.cases.codec import scenario_to_json
from conformance.fries.cases.scenarios import scenarios
from reference.fries.simulator import check_run, simulate
from spec.errors import InputError
from spec.fries.reorder import reorder_offset, reordered_ingestion
from spec.fries.dataflow import Dataflow
from spec.fries.scenario import Function, Scenario, SourceTuple, Timing, ingestion_order, scenario_from_json


def _chain(n: int, bound: int, seed: int) -> Scenario:
    """S -> B with n source tuples (many tuples, so large bounds are exercised)."""
    flow = Dataflow.from_json({"operators": [{"name": "S", "kind": "source"}, {"name": "B", "kind": "one-to-one"}],
                               "edges": [["S", "B"]]})
    tuples = tuple(SourceTuple(f"S:{i}", i % 3, i) for i in range(n))
    return Scenario(flow, {"B": Function("map", (("mul", 1), ("add", 0)))}, {"S": tuples},
                    timing=Timing(seed=seed, reorder_bound=bound))


@given(n=st.integers(0, 60), bound=st.integers(0, 70), seed=st.integers(0, 2**16))
@settings(max_examples=300)
def test_reordering_is_a_permutation_within_the_bound(n: int, bound: int, seed: int) -> None:
    scenario = _chain(n, bound, seed)
    plain = ingestion_order(scenario)
    reordered = reordered_ingestion(scenario)
    assert sorted(t.txn for t in reordered) == sorted(t.txn for t in plain)
    assert set(reordered) == set(plain) and len(reordered) == len(plain)
    position = {t.txn: p for p, t in enumerate(reordered)}
    for i, t in enumerate(plain):
        assert abs(position[t.txn] - i) <= bound
    assert reordered_ingestion(scenario) == reordered  # deterministic
    if bound == 0:
        assert reordered == plain


@given(scenario=scenarios(), bound=st.integers(0, 4), seed=st.integers(0, 2**16))
@settings(max_examples=100)
def test_generated_scenarios_reorder_within_the_bound(scenario: Scenario, bound: int, seed: int) -> None:
    scenario = replace(scenario, timing=replace(scenario.timing, seed=seed, reorder_bound=bound))
    plain = [t.txn for t in ingestion_order(scenario)]
    reordered = [t.txn for t in reordered_ingestion(scenario)]
    assert sorted(reordered) == sorted(plain)
    assert all(abs(reordered.index(txn) - i) <= bound for i, txn in enumerate(plain))


def test_offsets_depend_on_the_seed_and_reordering_really_happens() -> None:
    assert all(0 <= reorder_offset(s, i, 3) <= 3 for s in range(5) for i in range(50))
    assert reorder_offset(7, 3, 0) == 0
    orders = {tuple(t.txn for t in reordered_ingestion(_chain(20, 3, seed))) for seed in range(6)}
    assert len(orders) > 1
    assert any(reordered_ingestion(_chain(20, 3, s)) != ingestion_order(_chain(20, 3, s)) for s in range(6))


@pytest.mark.parametrize("bound", [1, 2, 3, 5])
def test_the_bound_is_attained(bound: int) -> None:
    """The hook is as strong as it claims: some seed moves some tuple exactly ``bound``
    positions (with ties broken by index, b = 1 would never reorder)."""
    def widest(seed: int) -> int:
        scenario = _chain(40, bound, seed)
        position = {t.txn: p for p, t in enumerate(reordered_ingestion(scenario))}
        return max(abs(position[t.txn] - i) for i, t in enumerate(ingestion_order(scenario)))
    assert max(widest(seed) for seed in range(10)) == bound


def _json(timing: dict[str, Any]) -> dict[str, Any]:
    return {"dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "B", "kind": "one-to-one"}],
                         "edges": [["S", "B"]]},
            "functions": {"B": {"op": "map", "mul": 1, "add": 0}},
            "sources": {"S": [{"key": 1, "value": 2}]}, "reconfigurations": [], "timing": timing}


def test_reorder_bound_json_parses_validates_and_round_trips() -> None:
    assert scenario_from_json(_json({})).timing.reorder_bound == 0
    scenario = scenario_from_json(_json({"reorder_bound": 3, "seed": 5}))
    assert scenario.timing.reorder_bound == 3
    assert scenario_from_json(scenario_to_json(scenario)) == scenario
    for bad in (-1, 1.5, True, "2"):
        with pytest.raises(InputError) as info:
            scenario_from_json(_json({"reorder_bound": bad}))
        assert "timing.reorder_bound" in str(info.value)


@given(scenario=scenarios(), bound=st.integers(1, 4), seed=st.integers(0, 2**16))
@settings(max_examples=60)
def test_simulator_under_reordering_is_consistent(scenario: Scenario, bound: int, seed: int) -> None:
    scenario = replace(scenario, timing=replace(scenario.timing, seed=seed, reorder_bound=bound))
    judgement = check_run(scenario, simulate(scenario, "fries"))
    assert judgement.ok, judgement.explain()


def test_simulator_ingests_in_the_reordered_order() -> None:
    scenario = _chain(20, 3, 1)
    reordered = [t.txn for t in reordered_ingestion(scenario)]
    assert reordered != [t.txn for t in ingestion_order(scenario)]
    logged = [op.txn for op in simulate(scenario, "fries").schedule.logs["B"]]
    assert logged == reordered
