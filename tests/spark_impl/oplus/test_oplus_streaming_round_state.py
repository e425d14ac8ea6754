"""Where a live O+ batch's instances find their key states (``spark_impl.oplus.streaming_round``,
module docstring, "Elastic rescale at a watermark, VSN style"): "the task of instance ``j``
reads, for each rescaled job, *every* previous state file and keeps the keys that the new
mapping gives it"; a job not rescaled is read from the instance's own file only. Checked with
:func:`~spark_impl.oplus.streaming_round.load_state` on state parts written by
:func:`~spark_impl.oplus.streaming_log.write_part`, without Spark, at parallelisms up to the
largest a job allows (``spec.oplus.budget.MAX_PARALLELISM``).
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from spec.oplus.budget import MAX_PARALLELISM

from spark_impl.oplus.instance import ScenarioRound
from spark_impl.oplus.operators import OperatorConfig
from spark_impl.oplus.streaming_jobs import route_key
from spark_impl.oplus.streaming_log import write_part
from spark_impl.oplus.streaming_round import RoundPlan, load_state

OP = OperatorConfig("sliding-sum", 1, 1, single=False)
KEYS = ("a", "b", "word-17", "#x", "k300")


@pytest.mark.parametrize("before, after", [(1, 5), (3, 2), (1, MAX_PARALLELISM), (MAX_PARALLELISM, 7)])
def test_a_rescaled_jobs_keys_go_to_their_instance_under_the_new_mapping(tmp_path: Path, before: int,
                                                                        after: int) -> None:
    location = str(tmp_path / "oplus")
    parts: dict[int, dict[str, dict[int, int]]] = {}
    for key in KEYS:
        parts.setdefault(route_key(key, before), {})[key] = {5: len(key)}
    for index, keys in parts.items():
        write_part(location, "state", 4, index, [(0, keys)])
    plan = RoundPlan({0: ScenarioRound(OP, after, 6, math.inf)}, after, 4, before, frozenset({0}), location, 5)
    states = {index: load_state(plan, index) for index in range(after)}
    placed = {key: index for index, state in states.items() for key in state.get(0, {})}
    assert placed == {key: route_key(key, after) for key in KEYS}
    assert all(state[0][key] == {5: len(key)} for state in states.values() if state for key in state[0])


def test_a_job_not_rescaled_is_read_from_the_instances_own_state_file_only(tmp_path: Path) -> None:
    location, size = str(tmp_path / "oplus"), 3
    write_part(location, "state", 4, 0, [(0, {"a": {5: 1}}), (1, {"x": {5: 2}})])
    write_part(location, "state", 4, 1, [(0, {"b": {5: 3}}), (1, {"y": {5: 4}})])
    plans = {0: ScenarioRound(OP, size, 6, math.inf), 1: ScenarioRound(OP, size, 6, math.inf)}
    plan = RoundPlan(plans, size, 4, size, frozenset(), location, 5)
    assert [load_state(plan, index) for index in range(size)] == [
        {0: {"a": {5: 1}}, 1: {"x": {5: 2}}}, {0: {"b": {5: 3}}, 1: {"y": {5: 4}}}, {}]
    moved = RoundPlan(plans, size, 4, size, frozenset({1}), location, 5)
    for index in range(size):
        state = load_state(moved, index)
        assert state.get(0) == [{"a": {5: 1}}, {"b": {5: 3}}, None][index]  # job 0: its own file, as before
        assert set(state.get(1, {})) == {key for key in ("x", "y") if route_key(key, size) == index}


def test_the_first_batch_has_no_state(tmp_path: Path) -> None:
    plan = RoundPlan({0: ScenarioRound(OP, 2, -math.inf, 3)}, 2, None, 2, frozenset(), str(tmp_path), 0)
    assert load_state(plan, 0) == {} and load_state(plan, 1) == {}
