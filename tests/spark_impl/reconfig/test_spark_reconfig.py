"""spark_impl's reconfiguration executor on the shared local SparkSession.

Every scenario batch runs in one ``run_scenarios`` call (one Spark job per micro-batch for
all of them). Correctness is judged by the small local checker of ``spark_checks``
(conflict-serializability + equality with the spec's serial execution); the full
differential suite against reference/ is ``streamproof conformance``.
"""

from __future__ import annotations

import os
import random
import sys
import json as _json
from collections import Counter
from typing import Any

import pytest

from spec.fries.scenario import Scenario, scenario_from_json
from spec.fries.schedule import Schedule
from spark_impl.faults import FAULTS
from spark_impl.reconfig.api import RECONFIG_FAULTS
from spark_impl.reconfig import (
    DirectorySource, Executor, GeneratedSource, Request, UserOperator, collect_results, run_scenarios, scenario_job, user_job,
    user_update,
)
from spark_impl.reconfig.control import ControlEntry
from spark_impl.reconfig.trace import write_trace
from spec.fries.dataflow import dataflow
from spec.jsonio import load_json

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.spark_checks import problems, random_scenario  # noqa: E402
from pyspark import TaskContext

pytestmark = pytest.mark.spark


def chain(*, restarts: tuple[int, ...] = (), cost: int = 300, fcm: int = 500, at: int = 8) -> Scenario:
    """S -> X -> Y, both reconfigured; X is slow (8 tuples x 300 ms per batch); the request
    is made once X's task started and the FCM lands 0.5 s later, while X works through its
    backlog: Fig. 2's anomaly for the naive scheduler, alignment work for Fries."""
    return scenario_from_json({
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "X", "kind": "one-to-one"},
                                   {"name": "Y", "kind": "one-to-one"}],
                     "edges": [["S", "X"], ["X", "Y"]]},
        "functions": {"X": {"op": "map", "mul": 1, "add": 0}, "Y": {"op": "map", "mul": 1, "add": 0}},
        "sources": {"S": [{"key": k % 3, "value": k + 1} for k in range(12)]},
        "reconfigurations": [{"at": at, "updates": {
            "X": {"function": {"op": "map", "mul": 10, "add": 0}, "state": {"mul": 2, "add": 1}},
            "Y": {"function": {"op": "map", "mul": 100, "add": 0}, "state": {"mul": 3, "add": 0}}}}],
        "timing": {"seed": 1, "operator_cost": {"X": cost}, "fcm_delay": [fcm, fcm], "restarts": list(restarts)},
    })


def two_heads() -> Scenario:
    """S -> X (2 workers) -> Y, both reconfigured: Y's object has two in-component parents,
    the heads X#0 and X#1. The timing seed is chosen (the FCM delay draw is a pure function of
    seed, scenario, request, attempt and object) so that X#0 gets its FCM at once and X#1
    about 2.9 s later, while every batch still sends tuples through X#1: Y *must* align (hold
    back X#0's new-version tuples until X#1's marker). A member that switches on X#0's marker
    processes X#1's old-version tuples with the new function - deterministically, whatever
    the task timing, as long as one micro-batch takes less than about 2.9 s."""
    seed = next(k for k in range(10_000) if _fcm(k, "X#0") < 0.1 and _fcm(k, "X#1") > 2.8)
    return scenario_from_json({
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "X", "kind": "one-to-one"},
                                   {"name": "Y", "kind": "one-to-one"}],
                     "edges": [["S", "X"], ["X", "Y"]]},
        "functions": {"X": {"op": "map", "mul": 1, "add": 0}, "Y": {"op": "map", "mul": 1, "add": 0}},
        "parallelism": {"X": 2},
        "sources": {"S": [{"key": k % 4, "value": k + 1} for k in range(40)]},
        "reconfigurations": [{"at": 8, "updates": {
            "X": {"function": {"op": "map", "mul": 10, "add": 0}, "state": {"mul": 2, "add": 1}},
            "Y": {"function": {"op": "map", "mul": 100, "add": 0}, "state": {"mul": 3, "add": 0}}}}],
        "timing": {"seed": seed, "fcm_delay": [0, 3000]},
    })


def _fcm(seed: int, obj: str) -> float:
    """FCM delay (s) of request R1, attempt 1, of the first scenario of a run, to ``obj``."""
    return ControlEntry(0, 1, 1, 0.0, 0, 0.0, 3000.0, seed).delay_s(obj)


SCENARIOS = [random_scenario(random.Random(seed), restarts=seed % 3 == 0) for seed in range(12)]


def test_fries_runs_are_serializable_and_equal_a_serial_execution(spark: Any) -> None:
    # restarts in the batch that makes the request and in the one after it
    batch = [*SCENARIOS, chain(cost=40, fcm=200), chain(restarts=(8,), cost=20, fcm=100),
             chain(restarts=(12,), cost=20, fcm=100), two_heads()]
    results = run_scenarios(spark, batch, "fries", batch_size=8)
    assert [r.scenario_index for r in results] == list(range(len(batch)))
    for scenario, result in zip(batch, results):
        assert problems(scenario, result) == [], result.scenario_index
        assert len(result.delays_ms) == len(scenario.reconfigurations) and not result.rejected


def test_fries_fcm_reaches_a_running_task_and_the_component_aligns(spark: Any) -> None:
    (result,) = run_scenarios(spark, [chain()], "fries", batch_size=8)
    assert problems(chain(), result) == []
    # the FCM reached the slow head X while its task worked through the batch: X's update
    # sits between two tuples of one batch; Y aligned on X's marker
    x_log = [op.txn for op in result.schedule.logs["X"]]
    assert 0 < x_log.index("R1") < 8
    y_log = [op.txn for op in result.schedule.logs["Y"]]
    assert y_log.index("R1") == x_log.index("R1")


def test_epoch_runs_switch_exactly_at_the_request(spark: Any) -> None:
    results = run_scenarios(spark, SCENARIOS, "epoch", batch_size=8)
    for scenario, result in zip(SCENARIOS, results):
        assert problems(scenario, result) == [], result.scenario_index
        for log in result.schedule.logs.values():
            for position, op in enumerate(log):
                if not op.update:
                    continue
                at = scenario.reconfigurations[int(op.txn[1:]) - 1].at
                before = {o.txn for o in log[:position] if not o.update and not o.txn.endswith(":final")}
                after = {o.txn for o in log[position:] if not o.update and not o.txn.endswith(":final")}
                assert all(int(t.split(":")[1]) < at for t in before), (result.scenario_index, op.txn)
                assert all(int(t.split(":")[1]) >= at for t in after), (result.scenario_index, op.txn)


def test_naive_scheduler_produces_figure_2s_anomaly(spark: Any) -> None:
    (result,) = run_scenarios(spark, [chain()], "naive", batch_size=8)
    assert problems(chain(), result) == ["schedule is not conflict-serializable"]


@pytest.mark.parametrize("fault", sorted(RECONFIG_FAULTS))
def test_every_seeded_fault_is_a_detectable_bug(spark: Any, fault: str) -> None:
    assert fault in FAULTS
    # naive needs the FCM to land while X works; missing-alignment needs heads of one
    # component that switch micro-batches apart (deterministic, see two_heads); the others
    # need neither
    scenario = {"duplicate-after-restart": chain(restarts=(10,), cost=20, fcm=100),
                # the request after the first batch of 8, so X holds state when the doubled
                # transformation runs (at 8 its FCM could land before X processed a tuple, and
                # doubling a transformation of no state changes nothing: failed under load)
                "double-transform": chain(cost=20, fcm=100, at=10),
                "missing-alignment": two_heads()}.get(fault, chain())
    (result,) = run_scenarios(spark, [scenario], "fries", faults=frozenset({fault}), batch_size=8)
    assert problems(scenario, result), fault
    if fault == "missing-alignment":
        assert "schedule is not conflict-serializable" in problems(scenario, result)


def test_user_operators_bad_requests_are_rejected_and_the_stream_keeps_running(spark: Any, tmp_path: Any) -> None:
    # user functions are nested so cloudpickle ships them by value (a test module is not
    # importable on the Python workers; production code ships its modules with --py-files)
    def _scale(factor: int) -> Any:
        def fn(state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
            return (state or 0) + 1, [(key, value * factor)]
        return fn

    def _count(state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
        return (state or 0) + value, [(key, value)]

    def _bad_transform(state: Any) -> Any:
        raise ValueError("cannot migrate")

    def _fails_on_executors(state: Any) -> Any:
        # passes the driver's dry run, raises in the tasks (e.g. a library missing there)
        if TaskContext.get() is not None:
            raise RuntimeError("no model on this executor")
        return state

    flow = dataflow([("S", "source"), ("M", "one-to-one"), ("T", "one-to-one")], [("S", "M"), ("M", "T")])
    job = user_job(flow, {"M": UserOperator(flow.kind("M"), _scale(1)), "T": UserOperator(flow.kind("T"), _count)},
                   GeneratedSource("S", 40, lambda i: (i % 4, i)))
    executor = Executor(spark, [job], "fries", str(tmp_path))
    executor.step()
    assert executor.submit(0, Request({"Nope": user_update(flow, "M", _scale(2), lambda s: s)})) is not None
    assert executor.submit(0, Request({"M": user_update(flow, "M", _scale(2), lambda s: s)})) is None
    busy = executor.submit(0, Request({"M": user_update(flow, "M", _scale(3), lambda s: s)}))
    assert busy is not None and "still in progress" in busy
    while executor.state[0].live.active is not None or executor.state[0].queued is not None:
        executor.step()
    raised = executor.submit(0, Request({"M": user_update(flow, "M", _scale(3), _bad_transform)}))
    assert raised is not None and "ValueError: cannot migrate" in raised
    # accepted, but the switch fails in a task: rolled back to the last commit and rejected
    assert executor.submit(0, Request({"M": user_update(flow, "M", _scale(5), _fails_on_executors)})) is None
    executor.run()
    (result,) = collect_results(executor)
    assert len(result.rejected) == 4 and "unknown operator 'Nope'" in result.rejected[0]
    assert "RuntimeError: no model on this executor" in result.rejected[3]
    assert len(result.outputs) == 40 and len(result.delays_ms) == 1
    assert sorted(t for _, t, _, _ in result.outputs) == sorted(f"S:{i}" for i in range(40))
    m_log = [op.txn for op in result.schedule.logs["M"]]
    switched = m_log.index("R1")
    values = {txn: value for _, txn, _, value in result.outputs}
    assert all(values[t] == int(t[2:]) for t in m_log[:switched])          # old factor 1
    assert all(values[t] == 2 * int(t[2:]) for t in m_log[switched + 1:])  # new factor 2
    assert result.states[("T", 1)] == sum(values[f"S:{i}"] for i in range(1, 40, 4))


def test_a_request_after_the_end_of_input_is_rejected(spark: Any, tmp_path: Any) -> None:
    # regression: it used to be accepted and queued forever (never made, no delay, no answer)
    def _double(state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
        return state, [(key, 2 * value)]

    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])
    job = user_job(flow, {"M": UserOperator(flow.kind("M"), _double)}, GeneratedSource("S", 4, lambda i: (i, i)))
    executor = Executor(spark, [job], "fries", str(tmp_path))
    executor.run()
    answer = executor.submit(0, Request({"M": user_update(flow, "M", _double, lambda s: s)}))
    assert answer is not None and "end of its input" in answer
    (result,) = collect_results(executor)
    assert len(result.outputs) == 4 and result.delays_ms == () and result.rejected == (answer,)


def test_driver_restart_resumes_from_the_checkpoint(spark: Any, tmp_path: Any) -> None:
    scenario = random_scenario(random.Random(99), costly=False)
    (expected,) = run_scenarios(spark, [scenario], "epoch", batch_size=5)
    first = Executor(spark, [scenario_job(scenario, batch_size=5)], "epoch", str(tmp_path))
    for _ in range(2):
        first.step()
    second = Executor(spark, [scenario_job(scenario, batch_size=5)], "epoch", str(tmp_path), resume=True)
    second.run()
    (resumed,) = collect_results(second)
    assert Counter(resumed.outputs) == Counter(expected.outputs)
    assert resumed.states == expected.states and problems(scenario, resumed) == []


def test_trace_files_are_in_the_reference_formats(spark: Any, tmp_path: Any) -> None:
    scenario = SCENARIOS[1]
    (result,) = run_scenarios(spark, [scenario], "fries", checkpoint_dir=str(tmp_path / "ckpt"))
    paths = write_trace(result, str(tmp_path / "trace"))
    assert Schedule.from_json(load_json(paths["schedule"])) == result.schedule
    assert [tuple(o) for o in load_json(paths["outputs"])["outputs"]] == result.outputs


@pytest.mark.slow
@pytest.mark.parametrize("scheduler", ["fries", "epoch"])
def test_200_random_scenarios_in_one_run(spark: Any, scheduler: str) -> None:
    """About a minute per scheduler on this machine (pytest -m slow)."""
    batch = [random_scenario(random.Random(1000 + seed), restarts=seed % 4 == 0) for seed in range(200)]
    results = run_scenarios(spark, batch, scheduler, batch_size=6)
    assert [problems(sc, r) for sc, r in zip(batch, results) if problems(sc, r)] == []


def test_unbounded_directory_source_picks_up_new_files(spark: Any, tmp_path: Any) -> None:
    """Production shape: files land in a directory while the stream runs; a request is made in
    between; the job never flushes, every line is processed exactly once."""
    def _double(state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
        return (state or 0) + value, [(key, value * 2)]

    def _triple(state: Any, key: int, value: Any) -> tuple[Any, list[tuple[int, Any]]]:
        return (state or 0) + value, [(key, value * 3)]

    inbox = tmp_path / "in"
    inbox.mkdir()

    def land(name: str, rows: list[list[int]]) -> None:
        staging = tmp_path / f"{name}.tmp"
        staging.write_text("".join(_json.dumps(r) + "\n" for r in rows))
        os.replace(staging, inbox / name)

    land("a.jsonl", [[k % 3, k] for k in range(10)])
    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])
    job = user_job(flow, {"M": UserOperator(flow.kind("M"), _double)}, DirectorySource("S", str(inbox)),
                   parallelism={"M": 2}, unbounded=True)
    executor = Executor(spark, [job], "fries", str(tmp_path / "ckpt"))
    executor.step()
    executor.step()
    assert executor.submit(0, Request({"M": user_update(flow, "M", _triple, lambda s: s)})) is None
    land("b.jsonl", [[k % 3, k] for k in range(10, 25)])
    for _ in range(4):
        executor.step()
    assert not executor.done() and executor.state[0].committed.offset == 25
    (result,) = collect_results(executor)
    assert sorted(txn for _, txn, _, _ in result.outputs) == sorted(f"S:{i}" for i in range(25))
    log = [op.txn for op in result.schedule.logs["M#0"]]
    assert "R1" in log and result.states[("M", 0)] == sum(range(0, 25, 3))
