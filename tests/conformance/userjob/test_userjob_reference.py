"""The reference executor of user jobs (reference.fries.userjob) against the spec.

Where user jobs and the catalogue overlap - a catalogue scenario expressed as the very job the
Spark executor runs (spark_impl.reconfig.scenario_job: CatalogueLogic operators, the scenario's
requests) - the reference's serial run must equal spec.fries.scenario.serial_execution in every
order, and its replay must equal spec.fries.consistency.replay on every schedule (those of the
reference simulator's runs, correct or naive, and of serial runs with two operations swapped).
No Spark session is started: the job objects are plain data.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.fries.cases.scenarios import scenarios
from conformance.fries.cases.timing import with_timing
from reference.fries.simulator import simulate
from reference.fries.userjob import ReplayRun, replay_run, request_order, serial_run
from spec.fries.consistency import replay
from spec.fries.scenario import Scenario, serial_execution
from spec.fries.schedule import Schedule
from spark_impl.keys import route
from spark_impl.reconfig.api import scenario_job
from conformance.pytest_helper import request_order as catalogue_order
from spark_impl.reconfig import ListSource, PlannedRequest, Request, UserOperator, user_job, user_update
from spec.fries.dataflow import dataflow

SCENARIOS = with_timing(scenarios().filter(lambda s: any(s.sources.values())), "jitter")


def _transactions(scenario: Scenario) -> list[str]:
    txns = [t.txn for tuples in scenario.sources.values() for t in tuples]
    return txns + [f"R{j + 1}" for j in range(len(scenario.reconfigurations))]


@settings(max_examples=60)
@given(st.data())
def test_serial_run_is_the_spec_serial_execution(data: Any) -> None:
    scenario = data.draw(SCENARIOS)
    order = data.draw(st.permutations(_transactions(scenario)))
    job = scenario_job(scenario)
    ours = serial_run(job, order, route)
    spec = serial_execution(scenario, order)
    assert Counter(ours.outputs) == spec.outputs
    assert ours.states == dict(spec.states)
    assert ours.schedule.logs == spec.schedule.logs
    assert ours.senders == dict(spec.senders)


@settings(max_examples=40)
@given(SCENARIOS)
def test_request_order_matches_the_catalogue_helper(scenario: Scenario) -> None:
    if scenario.timing.reorder_bound:
        scenario = replace(scenario, timing=replace(scenario.timing, reorder_bound=0))
    assert request_order(scenario_job(scenario)) == catalogue_order(scenario)


def _same_replay(scenario: Scenario, schedule: Schedule, senders: Any) -> ReplayRun:
    ours = replay_run(scenario_job(scenario), schedule, senders, route)
    spec = replay(scenario, schedule, senders)
    assert Counter(ours.outputs) == spec.outputs
    assert ours.states == dict(spec.states)
    assert ours.violations == spec.violations
    return ours


@settings(max_examples=50)
@given(SCENARIOS, st.sampled_from(["fries", "naive", "epoch"]))
def test_replay_is_the_spec_replay_on_simulated_runs(scenario: Scenario, scheduler: str) -> None:
    result = simulate(scenario, scheduler)
    _same_replay(scenario, result.schedule, result.senders)


@settings(max_examples=50)
@given(st.data())
def test_replay_is_the_spec_replay_on_perturbed_serial_schedules(data: Any) -> None:
    scenario = data.draw(SCENARIOS)
    order = data.draw(st.permutations(_transactions(scenario)))
    serial = serial_execution(scenario, order)
    logs = {obj: list(log) for obj, log in serial.schedule.logs.items()}
    senders = {obj: list(s) for obj, s in serial.senders.items()}
    long_logs = [obj for obj, log in logs.items() if len(log) >= 2]
    if long_logs:  # swap two adjacent operations of one object: FIFO or values may break
        obj = data.draw(st.sampled_from(sorted(long_logs)))
        i = data.draw(st.integers(0, len(logs[obj]) - 2))
        logs[obj][i], logs[obj][i + 1] = logs[obj][i + 1], logs[obj][i]
        senders[obj][i], senders[obj][i + 1] = senders[obj][i + 1], senders[obj][i]
    with_senders = data.draw(st.booleans())
    _same_replay(scenario, Schedule({o: tuple(v) for o, v in logs.items()}),
                 {o: tuple(v) for o, v in senders.items()} if with_senders else None)


def test_serial_run_of_a_string_keyed_user_job() -> None:
    """A user job (string keys, an order-sensitive state, a transformation): a hand-computed case."""
    flow = dataflow([("S", "source"), ("A", "one-to-one")], [("S", "A")])

    def last_two(state: Any, key: str, value: int) -> tuple[Any, list[tuple[str, Any]]]:
        kept = ((state or ()) + (value,))[-2:]
        return kept, [(key, kept)]

    def doubled(state: Any, key: str, value: int) -> tuple[Any, list[tuple[str, Any]]]:
        kept = ((state or ()) + (2 * value,))[-2:]
        return kept, [(key, kept)]

    source = ListSource((("S", "S:0", "a", 1), ("S", "S:1", "b", 2), ("S", "S:2", "a", 3)))
    swap = Request({"A": user_update(flow, "A", doubled, lambda s: tuple(x * 10 for x in s))})
    job = user_job(flow, {"A": UserOperator(flow.kind("A"), last_two)}, source, parallelism={"A": 2},
                   planned=(PlannedRequest(2, swap),))
    run = serial_run(job, request_order(job), route)
    assert request_order(job) == ["S:0", "S:1", "R1", "S:2"]
    assert run.outputs == [("A", "S:0", "a", (1,)), ("A", "S:1", "b", (2,)), ("A", "S:2", "a", (10, 6))]
    assert run.states == {("A", "a"): (10, 6), ("A", "b"): (20,)}
    replayed = replay_run(job, run.schedule, run.senders, route)
    assert replayed.outputs == run.outputs and replayed.states == run.states and not replayed.violations
