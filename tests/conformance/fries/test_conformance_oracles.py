"""The Fries oracles (conformance/fries/oracles.py) on hand-made runs: a correct run passes,
and each kind of wrong run fails the oracle meant to catch it, with a readable explanation."""

from __future__ import annotations

import threading
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from spec.fries.scenario import Output, Scenario, scenario_from_json, serial_execution
from spec.fries.schedule import Operation, Schedule

from conformance.fries.oracles import complete_order, effective_scenario, judge
from conformance.fries.outcome import RunOutcome

from support.fries_serial_run import serial_run
from conformance.pytest_helper import assert_conforms, request_order
from conformance.core.watchdog import call_with_timeout


def _scenario(requests: int = 1) -> Scenario:
    """S -> A -> B -> K(blocking): A and B reconfigured together (R1), then B again (R2)."""
    raw: dict[str, Any] = {
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "A", "kind": "one-to-one"},
                                   {"name": "B", "kind": "one-to-one"}, {"name": "K", "kind": "blocking"}],
                     "edges": [["S", "A"], ["A", "B"], ["B", "K"]]},
        "functions": {"A": {"op": "map", "mul": 1, "add": 0}, "B": {"op": "map", "mul": 1, "add": 1},
                      "K": {"op": "sum", "mul": 1, "add": 0}},
        "sources": {"S": [{"key": 1, "value": 2}, {"key": 2, "value": 3}, {"key": 1, "value": 4}]},
        "reconfigurations": [
            {"at": 1, "updates": {"A": {"function": {"op": "map", "mul": 10, "add": 0}, "state": {"mul": 2}},
                                  "B": {"function": {"op": "map", "mul": 1, "add": 5}}}},
            {"at": 2, "updates": {"B": {"function": {"op": "map", "mul": 1, "add": 7}}}},
        ][:requests],
    }
    return scenario_from_json(raw)


def test_a_serial_run_passes_every_oracle() -> None:
    scenario = _scenario()
    # S:1 and S:2 before R1 although they were ingested after the request: still
    # serializable, and the oracle must use *this* witness order, not the request order.
    run = serial_run(scenario, ["S:0", "S:1", "S:2", "R1"])
    judgement = judge(scenario, run)
    assert judgement.ok, judgement.failures
    assert judgement.witness is not None and judgement.witness.index("S:2") < judgement.witness.index("R1")


def test_non_serializable_schedule_is_caught_with_its_cycle() -> None:
    scenario = _scenario()
    run = serial_run(scenario, ["S:0", "R1", "S:1", "S:2"])
    logs = dict(run.schedule.logs)
    # naive: S:1 reached A before R1 updated A, but B after R1 updated B
    logs["A"] = (Operation("S:0"), Operation("S:1"), Operation("R1", True), Operation("S:2"))
    judgement = judge(scenario, replace(run, schedule=Schedule(logs)))
    assert judgement.failed_oracles == ("serializable",)
    assert "S:1" in judgement.failures[0].summary and "R1" in judgement.failures[0].summary


def test_wrong_value_is_reported_as_missing_and_unexpected_records() -> None:
    scenario = _scenario()
    run = serial_run(scenario, ["S:0", "R1", "S:1", "S:2"])
    outputs = list(run.outputs)
    sink, txn, key, value = outputs[0]
    outputs[0] = (sink, txn, key, value + 1)
    judgement = judge(scenario, replace(run, outputs=tuple(outputs)))
    assert judgement.failed_oracles == ("outputs",)
    detail = judgement.failures[0].detail
    assert f"missing    (expected, not produced): K <- (key {key}, value {value}) of K:final" in detail
    assert f"unexpected (produced, not expected): K <- (key {key}, value {value + 1}) of K:final" in detail
    assert "witness order: S:0 R1 S:1 S:2" in detail


def _with_sink(scenario: Scenario) -> Scenario:
    """The same scenario with B as the sink (no blocking K), so data transactions have output."""
    raw = {"dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "A", "kind": "one-to-one"},
                                      {"name": "B", "kind": "one-to-one"}], "edges": [["S", "A"], ["A", "B"]]},
           "functions": {"A": {"op": "map", "mul": 1, "add": 0}, "B": {"op": "map", "mul": 1, "add": 1}},
           "sources": {"S": [{"key": 1, "value": 2}, {"key": 2, "value": 3}]},
           "timing": {"restarts": [1]}}
    return scenario_from_json(raw)


def test_duplicates_and_losses_are_named_by_the_exactly_once_oracle() -> None:
    scenario = _with_sink(_scenario())
    result = serial_execution(scenario, ["S:0", "S:1"])
    logs = Schedule({"A": (Operation("S:0"), Operation("S:1")), "B": (Operation("S:0"), Operation("S:1"))})
    records: list[Output] = sorted(result.outputs.elements())
    duplicated = judge(scenario, RunOutcome(tuple(records + records[:1]), logs))
    assert duplicated.failed_oracles == ("outputs", "exactly-once")
    assert "duplicated (run restarted after [1] source tuples)" in duplicated.failures[1].summary
    lost = judge(scenario, RunOutcome(tuple(r for r in records if r[1] != "S:1"), logs))
    assert lost.failed_oracles == ("outputs", "exactly-once")
    assert "transaction S:1 produced none of its expected output" in lost.failures[1].detail


def test_wrong_final_state_and_missing_update_are_caught() -> None:
    scenario = _scenario()
    run = serial_run(scenario, ["S:0", "R1", "S:1", "S:2"])
    assert run.states is not None
    states = dict(run.states)
    states[("A", 1)] += 1  # e.g. a state transformation applied twice
    assert judge(scenario, replace(run, states=states)).failed_oracles == ("states",)
    logs = dict(run.schedule.logs)
    logs["B"] = tuple(op for op in logs["B"] if not op.update)
    judgement = judge(scenario, replace(run, schedule=Schedule(logs)))
    assert judgement.failed_oracles[0] == "schedule"
    assert "R1 updated object B 0 times" in judgement.failures[0].summary


def test_rejected_request_is_left_out_and_later_ones_renumbered() -> None:
    scenario = _scenario(requests=2)
    effective, renumber = effective_scenario(scenario, frozenset({"R1"}))
    assert len(effective.reconfigurations) == 1 and renumber == {"R2": "R1"}
    run = serial_run(effective, ["S:0", "S:1", "R1", "S:2"])
    logs = {obj: tuple(Operation("R2", True) if op.txn == "R1" else op for op in log)
            for obj, log in run.schedule.logs.items()}
    judgement = judge(scenario, replace(run, schedule=Schedule(logs), rejected=frozenset({"R1"})))
    assert judgement.ok, judgement.failures
    assert judgement.witness == ("S:0", "S:1", "R2", "S:2")


def test_engine_error_and_order_completion() -> None:
    scenario = _scenario()
    assert judge(scenario, RunOutcome.failed("boom")).failed_oracles == ("engine",)
    assert complete_order(scenario, ["S:1", "K:final", "R1"]) == ["S:1", "R1", "S:0", "S:2"]


def test_pytest_helper_gives_a_readable_diff() -> None:
    scenario = _scenario()
    order = request_order(scenario)
    assert order == ["S:0", "R1", "S:1", "S:2"]
    good = serial_execution(scenario, order)
    assert_conforms(scenario, good.outputs, states=good.states)
    bad = Counter(good.outputs)
    bad[("K", "K:final", 9, 9)] += 1
    with pytest.raises(AssertionError, match=r"unexpected \(produced, not expected\): K <- \(key 9, value 9\)"):
        assert_conforms(scenario, bad)
    run = serial_run(scenario, ["S:0", "S:1", "S:2", "R1"])
    assert_conforms(scenario, run.outputs, schedule=run.schedule.to_json(), states=run.states)
    with pytest.raises(AssertionError, match="outputs differ"):
        assert_conforms(scenario, run.outputs[1:], schedule=run.schedule)


def test_watchdog_reports_a_call_that_never_returns() -> None:
    assert call_with_timeout(lambda: 41 + 1, 5.0) == (True, 42)
    never = threading.Event()
    assert call_with_timeout(lambda: never.wait(30), 0.2) == (False, None)
    never.set()
    with pytest.raises(ZeroDivisionError):
        call_with_timeout(lambda: 1 // 0, 5.0)
