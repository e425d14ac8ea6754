"""The plan executor (DGS §3.4, Theorem 3.5): for consistent programs every valid plan on
every valid input instance outputs the multiset spec(sort(u)); for inconsistent ones
hypothesis finds a plan and an input where it differs; runs are deterministic by seed; bad
plans and inputs are InputErrors; optimizer plans are valid and correct."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import Phase, find, given, settings, strategies as st

from support.dgs_helpers import CONSISTENT, example
from reference.dgs.executor import execute_plan, run_plan
from reference.dgs.optimizer import optimize
from reference.dgs.strategies import impl_universe, input_instances, valid_plans
from spec.dgs.plan import Plan, Worker
from spec.dgs.semantics import multiset_equal
from spec.dgs.streams import (
    Heartbeat, StreamEvent, expected_output, sort_streams, valid_input_problem, streams_from_json, streams_to_json,
)
from spec.dgs.semantics import spec_run
from spec.errors import InputError

STREAMS = ("s0", "s1", "s2")


@pytest.mark.parametrize("name", CONSISTENT)
@settings(max_examples=60)
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_theorem_3_5_consistent_programs(name: str, data: st.DataObject, seed: int) -> None:
    program = example(name)
    plan = data.draw(valid_plans(program, STREAMS))
    streams = data.draw(input_instances(program, STREAMS))
    assert valid_input_problem(streams) is None
    result = execute_plan(program, plan, streams, seed)
    assert multiset_equal(result.outputs, expected_output(program, streams))
    final, _ = spec_run(program, sort_streams(streams))
    assert program.states_equal(program.initial, result.final_state, final)


@pytest.mark.parametrize(
    "name", ["key_counter.py:DuplicatingCounter", "key_counter.py:IndependentResetCounter", "windowing.py:MaxWindow",
             "windowing.py:HalvingWindow", "fraud_detection.py:ForgetfulFraud"]
)
def test_inconsistent_programs_have_a_plan_and_input_that_differ(name: str) -> None:
    """(Even a one-worker plan can differ: its mailbox reorders events the program wrongly
    declares independent.)"""
    program = example(name)
    scenario = st.tuples(valid_plans(program, STREAMS), input_instances(program, STREAMS, 16), st.integers(0, 100))

    def differs(case: tuple[Plan, Any, int]) -> bool:
        plan, streams, seed = case
        return not multiset_equal(run_plan(program, plan, streams, seed), expected_output(program, streams))

    # no shrinking (it costs a minute here): the first differing case is enough
    quick = settings(max_examples=2000, database=None, phases=[Phase.generate])
    plan, streams, seed = find(scenario, differs, settings=quick)
    assert differs((plan, streams, seed))


@settings(max_examples=25)
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_runs_are_deterministic_by_seed(data: st.DataObject, seed: int) -> None:
    program = example("key_counter.py:KeyCounter")
    plan = data.draw(valid_plans(program, STREAMS))
    streams = data.draw(input_instances(program, STREAMS))
    first = execute_plan(program, plan, streams, seed)
    second = execute_plan(program, plan, streams, seed)
    assert first.outputs == second.outputs and first.processed == second.processed


def single_worker(program_name: str, streams: tuple[str, ...] = STREAMS) -> Plan:
    program = example(program_name)
    return Plan(Worker("w0", program.initial, frozenset(impl_universe(program, streams))))


def test_invalid_input_instances_are_refused() -> None:
    program = example("key_counter.py:KeyCounter")
    plan = single_worker("key_counter.py:KeyCounter", ("s0", "s1"))
    not_monotone = {"s0": [StreamEvent(2, ("i", 0)), StreamEvent(2, ("i", 0))], "s1": [Heartbeat(9)]}
    with pytest.raises(InputError, match="not strictly increasing"):
        run_plan(program, plan, not_monotone, 0)
    no_progress = {"s0": [StreamEvent(5, ("i", 0))], "s1": [Heartbeat(3)]}
    with pytest.raises(InputError, match="progress"):
        run_plan(program, plan, no_progress, 0)


def test_event_without_responsible_worker_is_refused() -> None:
    program = example("key_counter.py:KeyCounter")
    plan = single_worker("key_counter.py:KeyCounter", ("s0",))
    with pytest.raises(InputError, match=r"no worker of the plan handles implementation tag \('i', 0\)@s1"):
        run_plan(program, plan, {"s0": [Heartbeat(5)], "s1": [StreamEvent(1, ("i", 0)), Heartbeat(6)]}, 0)


def test_invalid_plan_is_refused_before_running() -> None:
    program = example("key_counter.py:KeyCounter")
    bad = Plan(Worker("w0", "State", frozenset(), "fork", "join", (
        Worker("a", "State", frozenset({(("r", 0), "s0")})), Worker("b", "State", frozenset({(("i", 0), "s0")})))))
    with pytest.raises(InputError, match="V2"):
        run_plan(program, bad, {"s0": [Heartbeat(1)]}, 0)


@pytest.mark.parametrize("name", CONSISTENT)
@settings(max_examples=25)
@given(data=st.data(), seed=st.integers(0, 1000))
def test_optimizer_plans_are_valid_and_correct(name: str, data: st.DataObject, seed: int) -> None:
    program = example(name)
    universe = impl_universe(program, STREAMS)
    rates = dict(zip(universe, data.draw(st.lists(st.integers(0, 500), min_size=len(universe), max_size=len(universe)))))
    nodes = dict(zip(universe, data.draw(st.lists(st.sampled_from("abc"), min_size=len(universe), max_size=len(universe)))))
    plan = optimize(program, rates, nodes)  # raises unless P-valid
    streams = data.draw(input_instances(program, STREAMS))
    assert multiset_equal(run_plan(program, plan, streams, seed), expected_output(program, streams))


def test_optimizer_example_b1_shape() -> None:
    """Example B.1: the keys are independent, so the root splits them; within key 1 the
    low-rate r(1) is removed first and its increments become leaves."""
    program = example("key_counter.py:KeyCounter")
    rates = {(("r", 1), "s0"): 10.0, (("i", 1), "s1"): 15.0, (("i", 1), "s2"): 100.0,
             (("r", 2), "s0"): 200.0, (("i", 2), "s3"): 300.0}
    plan = optimize(program, rates)
    assert plan.root.impl_tags == frozenset()
    key1 = next(c for c in plan.root.children if (("r", 1), "s0") in c.impl_tags)
    assert key1.impl_tags == frozenset({(("r", 1), "s0")})
    assert {t for c in key1.children for t in c.impl_tags} == {(("i", 1), "s1"), (("i", 1), "s2")}


@pytest.mark.parametrize("name", ["key_counter.py:KeyCounter", "page_view.py:PageViewJoin", "windowing_typed.py:TypedWindow"])
@settings(max_examples=60)
@given(data=st.data(), seed=st.integers(0, 10_000))
def test_dependent_events_are_processed_in_order(name: str, data: st.DataObject, seed: int) -> None:
    """End to end, mailboxes + workers: any two processed events with dependent tags are
    processed in the order of their keys, and every event is processed exactly once."""
    program = example(name)
    plan = data.draw(valid_plans(program, STREAMS))
    streams = data.draw(input_instances(program, STREAMS))
    processed = execute_plan(program, plan, streams, seed).processed
    keys = [key for _, key, _ in processed]
    assert sorted(keys) == sorted((item.ts, s) for s, items in streams.items() for item in items
                                  if isinstance(item, StreamEvent))
    for i, (_, key_a, event_a) in enumerate(processed):
        for _, key_b, event_b in processed[i + 1:]:
            if program.depends(program.tag(event_a), program.tag(event_b)):
                assert key_a < key_b


@pytest.mark.parametrize("name", CONSISTENT)
@settings(max_examples=20)
@given(data=st.data())
def test_streams_json_round_trip(name: str, data: st.DataObject) -> None:
    program = example(name)
    streams = data.draw(input_instances(program, STREAMS))
    assert streams_from_json(streams_to_json(streams)) == streams


def test_streams_json_errors_have_paths() -> None:
    with pytest.raises(InputError, match=r"input.streams.s0\[1\]: expected exactly one of"):
        streams_from_json({"streams": {"s0": [{"ts": 1, "event": 3}, {"ts": 2}]}})
    with pytest.raises(InputError, match=r"input.streams.s0\[0\].ts: expected an integer"):
        streams_from_json({"streams": {"s0": [{"ts": "x", "heartbeat": True}]}})
