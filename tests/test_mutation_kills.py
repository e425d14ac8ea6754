"""Checks of promises that no differential run of the default conformance suite can see
(docs/testing.md). Each test names the one-line bug it catches (module, line, the change) and
why the suite's oracles could not."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from spec.fries.scenario import scenario_from_json
from spark_impl.reconfig.streaming import BatchLogSource, _read_index


def test_input_index_without_base_counts_every_row(tmp_path: Path) -> None:
    """Kills streaming.py:core/NumberReplacer:23 (``raw.get("base", 0)`` -> ``-1``): the suite's
    queries only read indexes their own version wrote, which always hold ``base``; an index
    written before retention existed (no ``base``, no ``last``) must still count every row."""
    (tmp_path / "index.json").write_text(json.dumps({"batches": [[0, [["b0-p0.jsonl", 3]]], [1, [["b1-p0.jsonl", 2]]]]}))
    index = _read_index(str(tmp_path))
    assert (index.base, index.last, index.count()) == (0, 1, 5)
    assert BatchLogSource("S", str(tmp_path)).count() == 5


@pytest.mark.spark
def test_oplus_scenario_without_items_and_a_request_after_the_last_item(spark: Any) -> None:
    """oplus/driver.py (``max(1, min(partitions, len(items)))`` ->
    ``max(0, ...)``: a round in which no scenario of the batch has an item parallelizes into 0
    slices and raises; the suite batches 100 scenarios, so no round is ever empty). Also pins
    that a rescale requested after the last item is never applied (the neighbouring change
    ``r + 1 < rounds`` -> ``r | 1`` is equivalent)."""
    from collections import Counter

    from reference.oplus.operators.catalogue import to_row
    from reference.oplus.run import execute
    from spec.oplus.scenario import parse_scenario
    from spark_impl.oplus import run_batch

    def rows(found: list[dict[str, Any]]) -> Counter[str]:
        return Counter(json.dumps(r, sort_keys=True) for r in found)

    base = {"operator": "forward", "WA": 1, "WS": 1, "params": {"keys": 1}, "parallelism": 2}
    empty = dict(base, inputs=[[], []], reconfigurations=[])
    assert run_batch(spark, [empty], items_per_round=1).rows == [[]]
    late = dict(base, parallelism=1, inputs=[[{"ts": t, "value": t} for t in range(4)], []],
                reconfigurations=[{"watermark": 100, "parallelism": 3}])
    result = run_batch(spark, [late], items_per_round=1)  # 4 rounds, the last one (r = 3) odd
    assert result.applied == [0] and result.handovers == []
    expected = [to_row(o) for o in execute(parse_scenario(late), "sequential", 0).outputs]
    assert rows(result.rows[0]) == rows(expected) and len(expected) == 4


def _probe(tuples: int, at: int = 2, fcm_delay: tuple[float, float] = (0.0, 0.0)) -> dict[str, Any]:
    """A probe-shaped scenario ``S -> X (2 workers) -> Y``, one request at ``at`` updating X
    and Y (X's objects are the component's heads, Y's object a member)."""
    return {
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "X", "kind": "one-to-one"},
                                   {"name": "Y", "kind": "one-to-one"}], "edges": [["S", "X"], ["X", "Y"]]},
        "functions": {"X": {"op": "map", "mul": 1, "add": 1}, "Y": {"op": "map", "mul": 2, "add": 0}},
        "parallelism": {"X": 2},
        "sources": {"S": [{"key": k, "value": k} for k in range(tuples)]},
        "reconfigurations": [{"at": at, "updates": {o: {"function": {"op": "map", "mul": 3, "add": 0},
                                                       "state": {"mul": 1, "add": 0}} for o in ("X", "Y")}}],
        "timing": {"fcm_delay": list(fcm_delay)}}


@pytest.mark.spark
def test_fries_requests_synchronise_the_mcs_objects_only(spark: Any, tmp_path: Path) -> None:
    """Kills driver.py:core/ReplaceComparisonOperator_Eq_NotEq:2 (``fries = self.scheduler ==
    "fries"`` -> ``!=``: Fries requests got the naive roles - every reconfigured object its own
    head, no alignment - and epoch requests the MCS roles). The suite saw no violation in 200
    cases: a naive switch is only observable when a transaction crosses two objects between
    their FCMs, which Spark's timing under load rarely shows. Here the roles are read from the
    request the driver makes, no timing involved: a probe-shaped job ``S -> X (2 workers) -> Y``
    reconfiguring X and Y has the heads X#0, X#1 and the member Y#0 under Fries; under epoch
    every reconfigured object acts alone (docs/spark.md)."""
    from spark_impl.reconfig import Executor, scenario_job
    from spark_impl.reconfig.layout import roles
    from spark_impl.reconfig.mcs import object_components

    job = scenario_job(scenario_from_json(_probe(4)))
    request = job.planned[0].request
    workers = {name: job.objects(name) for name in job.dataflow.names}
    mcs = object_components(job.dataflow, workers, request.operators)
    mcs_heads = sorted(o for o, r in mcs.items() if r.head)
    everyone = sorted(o for op in ("X", "Y") for o in job.objects(op))
    assert mcs_heads != everyone  # Y's object is a member that aligns, not a head
    made = {}
    for scheduler in ("fries", "epoch"):
        executor = Executor(spark, [job], scheduler, str(tmp_path / scheduler))
        executor._make(0, request, executor.g)
        active = executor.state[0].live.active
        assert active is not None
        made[scheduler] = (active.heads, active.required)
    assert made["fries"] == (mcs_heads, sorted(mcs))
    assert made["epoch"] == ([], sorted(roles(job, 0, request, False)))
    assert sorted(roles(job, 0, request, False)) == everyone


@pytest.mark.spark
def test_no_commit_before_every_head_has_its_fcm_and_requests_land_mid_batch(spark: Any, tmp_path: Path) -> None:
    """Two one-line bugs of driver.py that no oracle sees (no timing luck involved: no FCM
    is ever delivered, its delays are 10^8-10^9 ms):

    * line 348 ( ``if a is not None and prog.active ...`` -> ``if not a is
      not None ...``: the condition can then never hold - ``a`` None means ``prog.active``
      None - so the job commits while its request still has heads without their FCM, against
      Fries §7.3). The suite's batch-synchronous commits are consistent cuts anyway, so no
      oracle of a correct-looking run sees the early commit; the committed view does.
    * line 249 ( ``while worker.is_alive()`` -> ``while not ...``: the
      driver makes the batch's request at once instead of after the first operator task
      started). Every run of the changed driver is a possible run of the original (a task that started
      and was descheduled), so no conformance oracle can see it; but the executor's documented
      contract - the request lands *while* the batch's tuples are processed, which is what
      makes the suite's mid-batch races exist - is broken: the request is older than every
      task start marker of its batch.

    And line 145 ( ``st.attempts.get(j, 0) + 1``
    -> ``get(j, -1) + 1``: a request's first attempt is numbered 0). Attempts are labels
    compared for equality, and one input of the seeded FCM delay draw, so every run stays a
    legal run; but the stepped path picks its adversarial FCM seed for attempts 1 and 2
    (``conformance.fries.engines.stepped.adversarial_seed``, the documented "attempt + 1" after a
    restart): with first attempts numbered 0 its release order is no longer downstream-first
    and its probes lose their teeth without any failure.
    """
    from spark_impl.reconfig import Executor, scenario_job
    from spark_impl.reconfig.progress import read_progress

    job = scenario_job(scenario_from_json(_probe(12, at=2, fcm_delay=(1e8, 1e9))), batch_size=2)
    executor = Executor(spark, [job], "fries", str(tmp_path / "run"))
    executor.step()  # ingests tuples 0-1 = ``at``: makes R1 while the batch runs
    active = executor.state[0].live.active
    assert active is not None and active.heads == ["X#0", "X#1"] and not active.switched
    assert active.attempt == 1 and active.j == 1
    made_in = active.epoch_batch - 1
    # the first level's start markers (spark_impl.reconfig.task.mark_started) of that batch
    starts = [m.stat().st_mtime for m in (tmp_path / "run" / "batches" / f"g{made_in:07d}").glob("started-L1-p*")]
    assert starts and min(starts) <= active.issued  # coarse file clocks only round mtimes down
    for _ in range(2):
        executor.step()
    assert executor.state[0].live.active is not None and executor.state[0].live.offset == 6
    assert executor.state[0].committed.active is None and executor.state[0].committed.made == 0
    restored = read_progress(executor.directory)
    assert restored is not None and restored[1][0].active is None


@pytest.mark.spark
def test_reported_reconfiguration_delay_is_a_duration_of_the_run(spark: Any, tmp_path: Path) -> None:
    """driver.py line 318 ( ``a.switched[obj] = rec[8]`` ->
    ``rec[7]``: the switch record's ``reconfigured`` flag (1) is stored as the switch time, so
    the request's delay ``max(switch times) - issued`` becomes about -1.7e12 ms). No oracle
    reads delays (the report's histogram only shows them); the delay of a completed request is
    a duration between its issue and the last switch, so within [0, the run's wall time].

    And line 204 (
    ``self._next = (plan.g + 1, self._job(plan.g + 1))`` -> ``(plan.g // 1, ...)``: the job
    built ahead for the next batch is tagged with this batch, never matches, and every batch
    builds its job again - the prefetch silently lost; same results, so no oracle sees
    it). Each batch's Spark job must be built once."""
    import time

    from spark_impl.reconfig import Executor, scenario_job
    from spark_impl.reconfig.api import collect_results

    job = scenario_job(scenario_from_json(_probe(8, at=2, fcm_delay=(0.0, 5.0))), batch_size=2)
    executor = Executor(spark, [job], "fries", str(tmp_path / "run"))
    build, built = executor._job, []

    def counted(g: int) -> Any:
        built.append(g)
        return build(g)

    executor._job = counted  # type: ignore[method-assign]
    start = time.time()
    executor.run(max_batches=40)
    assert len(built) >= executor.g - 1 and built == sorted(set(built))  # no batch's job built twice
    wall_ms = (time.time() - start) * 1000.0
    (result,) = collect_results(executor)
    assert len(result.delays_ms) == 1 and 0.0 <= result.delays_ms[0] <= wall_ms


def test_user_operators_route_replicate_to_every_child_and_others_by_key() -> None:
    """reconfig/model.py line 97 ( ``if self.kind is OperatorKind.REPLICATE`` -> ``!=``: user replicate
    operators route by key and every other user operator replicates). ``UserLogic`` is the
    logic of user-written jobs (``streamproof conformance --job``, the Python API); the default
    suite's scenarios use the catalogue's logic only, so no default run executes this line."""
    from spec.fries.dataflow import OperatorKind
    from spark_impl.keys import route
    from spark_impl.reconfig.model import UserLogic

    def double(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        return state + value, [(key, 2 * value), (key + 1, value)]

    children = ("A", "B", "C")
    replicate = UserLogic(double, OperatorKind.REPLICATE, children)
    assert replicate.process(1, 4, 5) == (6, [(c, k, v) for k, v in ((4, 10), (5, 5)) for c in children])
    for kind in (OperatorKind.ONE_TO_ONE, OperatorKind.ONE_TO_MANY):
        keyed = UserLogic(double, kind, children)
        assert keyed.process(1, 4, 5) == (6, [(children[route(4, 3)], 4, 10), (children[route(5, 3)], 5, 5)])
    assert route(4, 3) != route(5, 3)  # the two outputs go to different children


def test_oplus_operator_config_has_the_seeded_fault_off_unless_asked() -> None:
    """oplus/operators.py line 45 (
    ``def of(scenario, off_by_one: bool = False)`` -> ``= True``). Every caller in spark_impl
    passes the flag, so no run changes (the suite cannot see it); but the default is the API a
    new caller gets, and it would silently run the seeded fault ``window-off-by-one``."""
    from spec.oplus.scenario import parse_scenario
    from spark_impl.oplus.operators import OperatorConfig, in_window

    scenario = parse_scenario({"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "multi", "parallelism": 1,
                               "inputs": [[{"ts": 0, "key": "a", "value": 1}]], "reconfigurations": [], "params": {}})
    config = OperatorConfig.of(scenario)
    assert not config.off_by_one and OperatorConfig.of(scenario, True).off_by_one
    assert not in_window(config, 0, 4) and in_window(OperatorConfig.of(scenario, True), 0, 4)  # ts = L + WS


def test_dgs_arrival_model_keeps_fifo_and_its_delay_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    """The DGS suite's arrival check (``conformance.dgs.checks.release.arrival_problem``) names
    dgs/release.py line 73 (
    ``ts + delay + jitter`` -> ``ts + delay << jitter``): arrivals far beyond ``max_delay +
    max_jitter``. Outputs stay correct (any arrival order must give them), so no output oracle
    saw it; the cases just stopped exercising the delays they claim. Spark-free."""
    import math
    import random

    from spark_impl.dgs import release

    from conformance.dgs.checks.release import arrival_problem
    from conformance.dgs.cases import draw_dgs_cases

    cases = [c for c in draw_dgs_cases(40, 0) if c.max_jitter and c.streams]
    assert cases and all(arrival_problem(c) is None for c in cases)

    def shifted(self: Any, streams: Any) -> dict[str, list[float]]:  # the changed arithmetic
        rng = random.Random(self.seed)
        out: dict[str, list[float]] = {}
        for stream in sorted(streams):
            delay, last, times = self.delays.get(stream, rng.randint(0, self.max_delay)), -math.inf, []
            for item in streams[stream]:
                last = max(last, float(item.ts + delay << rng.randint(0, self.max_jitter)))
                times.append(last)
            out[stream] = times
        return out

    monkeypatch.setattr(release.Arrival, "times", shifted)
    assert any(arrival_problem(c) is not None for c in cases)
    monkeypatch.setattr(release.Arrival, "times", lambda self, streams: {s: [0.0] * len(v) for s, v in streams.items()})
    assert any("arrives at 0.0" in (arrival_problem(c) or "") for c in cases)  # before the item exists


def test_oplus_seeded_faults_are_the_bugs_they_name(monkeypatch: pytest.MonkeyPatch) -> None:
    """``conformance.oplus.checks.faults`` (run by the O+ suite on Spark, no Spark job) names
    oplus/operators.py line 61 (the
    fault's reach ``ws + 1`` -> ``ws + 2``: off by two) and oplus/instance.py
    line 73 ( ``<=`` -> ``<``: the fault drops nothing).
    The default suite never injects faults, so no default run changed."""
    from spark_impl.oplus import instance, operators

    from conformance.oplus.checks import faults as oplus_faults_check
    from conformance.core.results import SuiteResult

    result = SuiteResult("oplus", "spark", 0)
    assert not oplus_faults_check.run_check(result) and result.failed == 0
    real = operators.lefts_of

    def off_by_two(op: Any, ts: int) -> range:
        return real(op, ts + 1) if op.off_by_one else real(op, ts)

    monkeypatch.setattr(operators, "lefts_of", off_by_two)
    assert "with window-off-by-one" in (oplus_faults_check.fault_problem() or "")
    monkeypatch.setattr(operators, "lefts_of", real)
    monkeypatch.setattr(instance, "process", lambda index, state, items, plans: ({0: {"k": {}}}, []))
    assert "drop-near-watermark on" in (oplus_faults_check.fault_problem() or "")
    assert oplus_faults_check.run_check(result) and result.failed == 1


def test_dgs_plan_validation_refuses_invalid_variants_of_every_case_plan(monkeypatch: pytest.MonkeyPatch) -> None:
    """The DGS suite's plans check (``conformance.dgs.checks.plans.validity_problems``, no Spark)
    names dgs/topology.py line 82 (the
    Def. 3.2 checks never looked at: every plan accepted) and dgs/driver.py line 163 ( an invalid job of a batch not named ``jobs[i]``). The suite's cases are all P-valid,
    so no run saw the executor's validation."""
    from spark_impl.dgs import topology

    from conformance.dgs.checks.plans import validity_problems
    from conformance.dgs.cases import draw_dgs_cases

    from spec.errors import InputError

    cases = draw_dgs_cases(12, 0)
    assert validity_problems(cases) == []
    real = InputError.located
    monkeypatch.setattr(InputError, "located", lambda self, where: self)  # dgs/driver.py:core/AddNot:8's effect
    assert "expected jobs[1]" in validity_problems(cases)[0]
    monkeypatch.setattr(InputError, "located", real)
    monkeypatch.setattr(topology, "check_valid_plan", lambda program, plan: None)
    found = validity_problems(cases)
    assert len(found) >= len(cases) and "with an unknown tag was accepted" in found[0]
