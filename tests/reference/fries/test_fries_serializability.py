"""The linear-time checker (reference/fries/serializability.py) agrees with the brute-force
definition of conflict-serializability (spec/fries/serializability.py, Fries Def. 4.8/4.9),
returns valid serial orders and shortest real cycles, and the fast JSON path accepts and
rejects exactly what the spec parser does."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from reference.fries.compact import compact_from_json, compact_from_schedule
from reference.fries.serializability import check_serializability
from spec.errors import InputError
from spec.fries.schedule import Operation, Schedule, conflicts
from spec.fries.serializability import (
    conflict_equivalent,
    is_conflict_serializable,
    is_equivalent_serial_order,
    is_precedence_cycle,
    serial_schedule,
    shortest_cycle_length,
)


@st.composite
def schedules(draw: st.DrawFn, max_data: int = 4, max_updates: int = 2) -> Schedule:
    """Random valid schedules: several update transactions (each updates an object at most
    once), data transactions with several operations per object (one-to-many operators)."""
    data = [f"t{i}" for i in range(draw(st.integers(1, max_data)))]
    updates = [f"R{i}" for i in range(draw(st.integers(0, max_updates)))]
    logs: dict[str, tuple[Operation, ...]] = {}
    for obj in ["A", "B", "C"][: draw(st.integers(1, 3))]:
        ops = [Operation(t) for t in draw(st.lists(st.sampled_from(data), max_size=4))]
        ops += [Operation(u, True) for u in draw(st.sets(st.sampled_from(updates)))
                ] if updates else []
        logs[obj] = tuple(draw(st.permutations(ops)))
    return Schedule(logs)


@st.composite
def ring_schedules(draw: st.DrawFn) -> Schedule:
    """Schedules built around a ring T0 -> T1 -> ... -> T0 of conflicts (so cycles longer
    than 2 occur), with extra operations inserted at random places."""
    size = draw(st.integers(2, 4))
    is_update = [draw(st.booleans()) for _ in range(size)]
    names = [f"R{i}" if upd else f"t{i}" for i, upd in enumerate(is_update)]
    logs: dict[str, list[Operation]] = {}
    for i in range(size):
        j = (i + 1) % size
        if not (is_update[i] or is_update[j]):
            is_update[j] = True
            names[j] = f"R{j}"
    for i in range(size):
        j = (i + 1) % size
        logs[f"O{i}"] = [Operation(names[i], is_update[i]), Operation(names[j], is_update[j])]
    for _ in range(draw(st.integers(0, 3))):
        obj = f"O{draw(st.integers(0, size - 1))}"
        txn = draw(st.sampled_from(["x", *[n for n, u in zip(names, is_update) if not u]]))
        logs[obj].insert(draw(st.integers(0, len(logs[obj]))), Operation(txn))
    if draw(st.booleans()):
        obj = f"O{draw(st.integers(0, size - 1))}"
        logs[obj] = list(draw(st.permutations(logs[obj])))
    return Schedule({obj: tuple(log) for obj, log in logs.items()})


@settings(max_examples=300)
@given(st.one_of(schedules(), ring_schedules()))
def test_verdict_agrees_with_the_definition(schedule: Schedule) -> None:
    verdict = check_serializability(schedule)
    assert verdict.serializable == is_conflict_serializable(schedule)


@settings(max_examples=300)
@given(schedules(max_data=5, max_updates=3))
def test_serial_order_is_conflict_equivalent(schedule: Schedule) -> None:
    verdict = check_serializability(schedule)
    if verdict.serializable:
        assert verdict.serial_order is not None and verdict.cycle is None
        assert is_equivalent_serial_order(schedule, verdict.serial_order)


@settings(max_examples=300)
@given(st.one_of(schedules(max_data=3, max_updates=3), ring_schedules()))
def test_cycle_is_real_shortest_and_its_evidence_is_true(schedule: Schedule) -> None:
    verdict = check_serializability(schedule)
    if verdict.serializable:
        assert shortest_cycle_length(schedule) is None
        return
    assert verdict.cycle is not None and verdict.serial_order is None
    assert is_precedence_cycle(schedule, verdict.cycle)
    assert len(verdict.cycle) == shortest_cycle_length(schedule)
    assert [s.before for s in verdict.steps] == list(verdict.cycle)
    for step in verdict.steps:
        log = schedule.logs[step.obj]
        first, second = log[step.before_position], log[step.after_position]
        assert step.before_position < step.after_position
        assert (first.txn, second.txn) == (step.before, step.after)
        assert (first.update, second.update) == (step.before_update, step.after_update)
        assert conflicts(first, second)
    text = verdict.explain()
    assert "\n" not in text and all(s.obj in text for s in verdict.steps)


@given(schedules())
def test_serial_schedules_are_serializable(schedule: Schedule) -> None:
    order = schedule.transactions()[::-1]
    serial = serial_schedule(schedule, order)
    assert conflict_equivalent(serial, serial)
    verdict = check_serializability(serial)
    assert verdict.serializable


def test_figure_2_naive_schedule_is_not_serializable() -> None:
    """Fries §4.1/4.2: t2 is processed by the merchant detector (M) with the old
    configuration and by the combiner (C) with the new one."""
    schedule = Schedule.from_json({"logs": {
        "M": [{"txn": "t1"}, {"txn": "t2"}, {"txn": "R", "update": True}],
        "C": [{"txn": "t1"}, {"txn": "R", "update": True}, {"txn": "t2"}]}})
    verdict = check_serializability(schedule)
    assert verdict.cycle == ("t2", "R")
    assert verdict.explain() == (
        "NOT conflict-serializable: t2 reached M before update R changed it (M: t2 at [1], "
        "then R at [2]), but update R changed C before t2 reached it (C: R at [1], then t2 "
        "at [2]): t2 must come both before and after R.")
    assert verdict.to_json() == {"serializable": False, "cycle": ["t2", "R"],
                                 "serial_order": None}


def test_figure_8_schedule_is_not_serializable() -> None:
    """Fries §6.1: one data transaction reaches M1 twice (through the one-to-many Join),
    and the FCM falls between the two operations."""
    schedule = Schedule.from_json({"logs": {
        "J": [{"txn": "t1"}], "Sp": [{"txn": "t1"}, {"txn": "t1"}, {"txn": "t1"}],
        "M1": [{"txn": "t1"}, {"txn": "R", "update": True}, {"txn": "t1"}],
        "M2": [{"txn": "t1"}]}})
    verdict = check_serializability(schedule)
    assert verdict.cycle == ("t1", "R") and not is_conflict_serializable(schedule)


def test_three_updates_in_a_ring() -> None:
    schedule = Schedule.from_json({"logs": {
        "A": [{"txn": "R1", "update": True}, {"txn": "R2", "update": True}],
        "B": [{"txn": "R2", "update": True}, {"txn": "R3", "update": True}],
        "C": [{"txn": "R3", "update": True}, {"txn": "t"}, {"txn": "R1", "update": True}]}})
    verdict = check_serializability(schedule)
    assert verdict.cycle == ("R1", "R2", "R3")
    assert "a serial order would need R1 before R2, R2 before R3, R3 before R1" in \
        verdict.explain()


def test_empty_and_conflict_free_schedules() -> None:
    assert check_serializability(Schedule({})).serial_order == ()
    verdict = check_serializability(Schedule({"A": (Operation("t1"), Operation("t2"))}))
    assert verdict.serial_order == ("t1", "t2")


# --- the fast JSON path is exactly the spec parser ------------------------------------------

_json_ops = st.one_of(
    st.fixed_dictionaries({"txn": st.sampled_from(["t1", "t2", "R", "S"])}),
    st.fixed_dictionaries({"txn": st.sampled_from(["t1", "R", "S"]), "update": st.booleans()}),
    st.fixed_dictionaries({"update": st.just(True), "txn": st.sampled_from(["R", "S"])}),
    st.just({"txn": ""}), st.just({"txn": 3}), st.just({"update": True}), st.just({}),
    st.just({"txn": "t1", "extra": 1}), st.just({"txn": "R", "update": 1}),
    st.just({"txn": "t1", "update": None, "x": 2}), st.just([]), st.just("t1"), st.none(),
)
_json_schedules = st.one_of(
    st.fixed_dictionaries({"logs": st.dictionaries(
        st.sampled_from(["A", "B", ""]),
        st.one_of(st.lists(_json_ops, max_size=4), st.just({}), st.just("x")), max_size=3)}),
    st.just({}), st.just([]), st.just({"logs": []}), st.just({"logs": {}, "x": 1}),
)


@settings(max_examples=500)
@given(_json_schedules)
def test_fast_json_path_matches_spec_parser(value: Any) -> None:
    try:
        expected = compact_from_schedule(Schedule.from_json(value, "f.json"))
    except InputError as error:
        with pytest.raises(InputError) as caught:
            compact_from_json(value, "f.json")
        assert str(caught.value) == str(error)
        return
    assert compact_from_json(value, "f.json") == expected


def test_many_bridging_transactions() -> None:
    """More than 16 data transactions between two updates (the checker's other ordering
    path): R1 before all of them, R2 after all of them."""
    data = [Operation(f"t{i}") for i in range(40)]
    schedule = Schedule({"A": (Operation("R1", True), *data),
                         "B": (*reversed(data), Operation("R2", True)),
                         "C": (Operation("R2", True), Operation("t3"))})
    verdict = check_serializability(schedule)
    assert not verdict.serializable and verdict.cycle == ("t3", "R2")
    fixed = Schedule({obj: log for obj, log in schedule.logs.items() if obj != "C"})
    verdict = check_serializability(fixed)
    assert verdict.serial_order is not None
    assert verdict.serial_order[0] == "R1" and verdict.serial_order[-1] == "R2"
    assert is_equivalent_serial_order(fixed, verdict.serial_order)


def test_output_does_not_depend_on_string_hashing(tmp_path: Any) -> None:
    """Set iteration order changes with PYTHONHASHSEED; the checker's output must not."""
    logs: dict[str, list[dict[str, Any]]] = {"A": [{"txn": "R1", "update": True}],
                                             "B": [], "C": [{"txn": "R3", "update": True}]}
    for i in range(30):
        logs["A"].append({"txn": f"t{i}"})
        logs["B"].insert(0, {"txn": f"t{i}"})
        logs["C"].append({"txn": f"u{i}"})
    logs["B"].append({"txn": "R2", "update": True})
    path = tmp_path / "s.json"
    path.write_text(json.dumps({"logs": logs}))
    outputs = set()
    for seed in ("1", "2", "3"):
        done = subprocess.run(
            [sys.executable, "-m", "streamproof.main", "check-schedule", str(path), "--json"],
            capture_output=True, text=True, env={**os.environ, "PYTHONHASHSEED": seed},
            check=False)
        assert done.returncode == 0, done.stderr
        outputs.add(done.stdout)
    assert len(outputs) == 1
