"""The order-sensitive catalogue and the consistency definition beyond conflict-serializability
(spec/fries/catalogue.py, spec/fries/consistency.py), and the conformance
oracles that apply it (conformance/fries/oracles.py).

* Theorem 1 of spec.fries.consistency: the replay of a serial run in order W computes
  ``serial_execution(W)`` (order-sensitive functions included);
* Theorem 2: with only commutative functions, the replay of every correct simulated run
  computes the serial execution in the checker's witness order (the earlier oracle);
* the definition has no false positive on the reference simulator (a FIFO engine), and it
  catches a channel reordered in a trace;
* the conformance oracle (efficient checker + replay) agrees with the brute-force definition;
* a concrete "buffered new-version input processed before older buffered input" trace: invisible
  to outputs with the commutative catalogue, caught by the fifo oracle and by the outputs of a
  ``fold``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import Any

from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from conformance.fries.oracles import judge
from conformance.fries.outcome import RunOutcome
from conformance.fries.cases.scenarios import scenarios
from conformance.fries.cases.timing import with_timing
from conformance.pytest_helper import assert_conforms
from reference.fries.simulator import check_run, simulate
from spec.fries.catalogue import Function, order_sensitive, step
from spec.fries.consistency import is_consistent, replay
from spec.fries.reorder import reordered_ingestion
from spec.fries.scenario import Scenario, scenario_from_json, serial_execution
from spec.fries.schedule import Operation, Schedule

SLOW = settings(deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])


def _serial_order(scenario: Scenario, positions: list[int]) -> list[str]:
    """Data transactions in ingestion order (what FIFO source channels deliver), request j
    inserted before data transaction ``positions[j]`` (clamped, kept in request order)."""
    data = [t.txn for t in reordered_ingestion(scenario)]
    order: list[str] = []
    cuts = sorted(min(p, len(data)) for p in positions[: len(scenario.reconfigurations)])
    cuts += [len(data)] * (len(scenario.reconfigurations) - len(cuts))
    j = 0
    for i in range(len(data) + 1):
        while j < len(cuts) and cuts[j] == i:
            order.append(f"R{j + 1}")
            j += 1
        if i < len(data):
            order.append(data[i])
    return order


def test_fold_is_order_sensitive_and_emits_its_state() -> None:
    fold = Function("fold", (("mul", 2),))
    assert order_sensitive(fold) and not order_sensitive(Function("map", (("mul", 1), ("add", 0))))
    s1, out1 = step(fold, None, 1, 5, ("B",))
    s2, out2 = step(fold, s1, 1, 7, ("B",))
    assert (s1, out1, s2, out2) == (5, [("B", 1, 5)], 17, [("B", 1, 17)])
    t1, _ = step(fold, None, 1, 7, ())
    t2, _ = step(fold, t1, 1, 5, ())
    assert t2 == 19 != s2


@settings(SLOW, max_examples=60)
@given(scenarios(), st.lists(st.integers(0, 12), max_size=2))
def test_theorem_1_the_replay_of_a_serial_run_is_the_serial_execution(scenario: Scenario, cuts: list[int]) -> None:
    order = _serial_order(scenario, cuts)
    serial = serial_execution(scenario, order)
    replayed = replay(scenario, serial.schedule, serial.senders)
    assert replayed.violations == ()
    assert replayed.outputs == serial.outputs
    assert dict(replayed.states) == dict(serial.states)


@settings(SLOW, max_examples=40)
@given(with_timing(scenarios(order_sensitive=False)), st.sampled_from(["fries", "epoch"]))
def test_theorem_2_commutative_runs_replay_to_the_witness_serial_execution(scenario: Scenario, scheduler: str) -> None:
    result = simulate(scenario, scheduler)
    assume(not result.uniqueness_violations)
    judgement = check_run(scenario, result)
    assert judgement.ok, judgement.explain()
    assert judgement.replayed is not None and judgement.serial is not None
    assert judgement.replayed.outputs == judgement.serial.outputs
    assert dict(judgement.replayed.states) == dict(judgement.serial.states)


@settings(SLOW, max_examples=40)
@given(with_timing(scenarios()), st.sampled_from(["fries", "epoch"]))
def test_simulated_runs_with_order_sensitive_functions_are_consistent(scenario: Scenario, scheduler: str) -> None:
    result = simulate(scenario, scheduler)
    assume(not result.uniqueness_violations)
    judgement = check_run(scenario, result)
    assert judgement.ok, judgement.explain()
    outcome = RunOutcome(tuple(result.outputs.elements()), result.schedule, dict(result.states),
                         senders=result.senders)
    assert judge(scenario, outcome).ok


def _reorder_one_channel(schedule: Schedule, senders: dict[str, tuple[str | None, ...]],
                         pick: int) -> tuple[Schedule, dict[str, tuple[str | None, ...]]] | None:
    """Move a data operation before an earlier one of another transaction from the same
    sender on the same object (a FIFO violation), or None if the trace has no such pair."""
    pairs = []
    for obj, ops in schedule.logs.items():
        came = senders[obj]
        for j, op in enumerate(ops):
            for i in range(j):
                if (not op.update and not ops[i].update and came[i] is not None and came[i] == came[j]
                        and ops[i].txn != op.txn):
                    pairs.append((obj, i, j))
    if not pairs:
        return None
    obj, i, j = pairs[pick % len(pairs)]
    log: list[Operation] = list(schedule.logs[obj])
    sent: list[str | None] = list(senders[obj])
    log.insert(i, log.pop(j))
    sent.insert(i, sent.pop(j))
    return Schedule({**schedule.logs, obj: tuple(log)}), {**senders, obj: tuple(sent)}


@settings(SLOW, max_examples=50)
@given(scenarios(), st.integers(0, 1000))
def test_a_reordered_channel_is_a_fifo_violation(scenario: Scenario, pick: int) -> None:
    serial = serial_execution(scenario, _serial_order(scenario, []))
    mutated = _reorder_one_channel(serial.schedule, dict(serial.senders), pick)
    assume(mutated is not None)
    assert mutated is not None
    schedule, senders = mutated
    assert replay(scenario, schedule, senders).violations
    outcome = RunOutcome(tuple(serial.outputs.elements()), schedule, dict(serial.states), senders=senders)
    assert "fifo" in judge(scenario, outcome).failed_oracles


SMALL = with_timing(scenarios(max_operators=4, max_tuples=2, max_reconfigurations=1))


@settings(SLOW, max_examples=30)
@given(SMALL, st.sampled_from(["fries", "naive"]), st.integers(0, 1000), st.booleans())
def test_the_oracle_agrees_with_the_brute_force_definition(scenario: Scenario, scheduler: str, pick: int,
                                                           mutate: bool) -> None:
    result = simulate(scenario, scheduler)
    assume(not result.uniqueness_violations)
    schedule, senders = result.schedule, dict(result.senders or {})
    if mutate:
        mutated = _reorder_one_channel(schedule, senders, pick)
        assume(mutated is not None)
        assert mutated is not None
        schedule, senders = mutated
    outcome = RunOutcome(tuple(result.outputs.elements()), schedule, dict(result.states), senders=senders)
    judgement = judge(scenario, outcome)
    assume(judgement.failed_oracles != ("schedule",))  # completeness is the oracle's own extra check
    assert judgement.ok == is_consistent(scenario, schedule, senders, result.outputs, result.states)


# --- the ordering bug nobody planted, as a trace ---------------------------------------------

def _member_scenario(function: dict[str, Any]) -> Scenario:
    """S -> X -> Y: one request reconfigures X and Y; Y is a component member that buffers the
    new-version tuples X sends until X's marker arrives."""
    return scenario_from_json({
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "X", "kind": "one-to-one"},
                                   {"name": "Y", "kind": "one-to-one"}],
                     "edges": [["S", "X"], ["X", "Y"]]},
        "functions": {"X": {"op": "map", "mul": 1, "add": 0}, "Y": function},
        "sources": {"S": [{"key": 1, "value": v} for v in (2, 3, 5, 7)]},
        "reconfigurations": [{"at": 1, "updates": {"X": {"function": {"op": "map", "mul": 1, "add": 1}},
                                                   "Y": {"function": function}}}],
    })


def _buggy_member_run(scenario: Scenario) -> RunOutcome:
    """What an executor whose member processes its buffered new-version input newest first
    outputs: Y processes S:3 before S:2 (both from X, sent S:2 first). Its log and outputs are
    self-consistent (computed by replaying the reordered log), only the channel order is wrong."""
    order = ["S:0", "R1", "S:1", "S:2", "S:3"]
    correct = serial_execution(scenario, order)
    logs = dict(correct.schedule.logs)
    y = list(logs["Y"])
    y[3], y[4] = y[4], y[3]
    buggy = Schedule({**logs, "Y": tuple(y)})
    engine_view = replay(scenario, buggy, None)  # the buggy engine's values, channels ignored
    return RunOutcome(tuple(engine_view.outputs.elements()), buggy, dict(engine_view.states),
                      senders={obj: tuple(correct.senders[obj]) for obj in logs})


def test_buffered_input_out_of_order_is_invisible_with_a_commutative_member() -> None:
    scenario = _member_scenario({"op": "map", "mul": 2, "add": 0})
    run = _buggy_member_run(scenario)
    correct = serial_execution(scenario, ["S:0", "R1", "S:1", "S:2", "S:3"])
    assert Counter(run.outputs) == correct.outputs  # outputs alone cannot show it ...
    assert judge(scenario, run).failed_oracles == ("fifo",)  # ... the channel oracle does


def test_buffered_input_out_of_order_changes_a_fold_members_outputs() -> None:
    scenario = _member_scenario({"op": "fold", "mul": 3})
    run = _buggy_member_run(scenario)
    correct = serial_execution(scenario, ["S:0", "R1", "S:1", "S:2", "S:3"])
    assert Counter(run.outputs) != correct.outputs
    failed = judge(scenario, run).failed_oracles
    assert failed[0] == "fifo"
    # without senders the channels are inferred from the transactions: still caught
    assert "fifo" in judge(scenario, replace(run, senders=None)).failed_oracles
    # and the users' helper reports it too
    try:
        assert_conforms(scenario, run.outputs, schedule=run.schedule, states=run.states)
    except AssertionError as error:
        assert "not FIFO" in str(error)
    else:
        raise AssertionError("assert_conforms accepted a reordered channel")


def test_a_correct_run_passes_with_and_without_senders() -> None:
    scenario = _member_scenario({"op": "fold", "mul": 3})
    correct = serial_execution(scenario, ["S:0", "R1", "S:1", "S:2", "S:3"])
    run = RunOutcome(tuple(correct.outputs.elements()), correct.schedule, dict(correct.states),
                     senders=dict(correct.senders))
    assert judge(scenario, run).ok
    assert judge(scenario, replace(run, senders=None)).ok
    assert_conforms(scenario, run.outputs, schedule=run.schedule, states=run.states, senders=run.senders)


def test_an_update_operation_in_the_wrong_place_changes_the_replay() -> None:
    scenario = _member_scenario({"op": "fold", "mul": 3})
    correct = serial_execution(scenario, ["S:0", "R1", "S:1", "S:2", "S:3"])
    logs = dict(correct.schedule.logs)
    logs["Y"] = (Operation("S:0"), Operation("S:1"), Operation("R1", True), Operation("S:2"), Operation("S:3"))
    run = RunOutcome(tuple(correct.outputs.elements()), Schedule(logs), dict(correct.states),
                     senders=dict(correct.senders))
    assert "serializable" in judge(scenario, run).failed_oracles
