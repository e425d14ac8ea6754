"""spark_impl.dgs: DGS programs under synchronization plans on Spark, against the spec's
``spec(sort(u))`` (Def. 3.4) and the reference plan executor; per-stream delays and bounded
reordering; the batch-level release rule (no Spark); bad input."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reference.dgs.executor import run_plan
from spec.dgs.loader import load_program
from spec.dgs.plan import Plan, plan_from_json
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, expected_output, merged, sort_streams
from spec.errors import InputError
from spark_impl.dgs import Arrival, DgsJob, run_dgs, run_dgs_many, sequential_plan
from spark_impl.dgs.plans import balanced_plan
from spark_impl.dgs.release import release_schedule
from spark_impl.dgs.topology import topology
from support.paths import ROOT

EXAMPLES = ROOT / "reference" / "dgs" / "examples"
WINDOW = f"{EXAMPLES / 'windowing.py'}:EventWindow"
TYPED = f"{EXAMPLES / 'windowing_typed.py'}:TypedWindow"
FRAUD = f"{EXAMPLES / 'fraud_detection.py'}:FraudDetection"


def streams_for(leaf_tag: str, sync_tag: str, leaves: int, events: int, syncs: int,
                seed: int) -> dict[str, list[Any]]:
    """``leaves`` streams of leaf events and one stream ``sync`` of synchronizing events, each
    ending with a heartbeat (Def. 3.3 progress)."""
    rng = random.Random(seed)
    horizon = 4 * events
    streams: dict[str, list[Any]] = {}
    for i in range(leaves):
        stamps = sorted(rng.sample(range(1, horizon), events))
        streams[f"s{i}"] = [StreamEvent(t, (leaf_tag, rng.randint(0, 12))) for t in stamps]
    stamps = sorted(rng.sample(range(1, horizon), syncs))
    streams["sync"] = [StreamEvent(t, (sync_tag, rng.randint(0, 12))) for t in stamps]
    for items in streams.values():
        items.append(Heartbeat(horizon + 1))
    return streams


def plan_for(leaf_tag: str, sync_tag: str, leaves: int, typed: bool = False) -> Any:
    leaf_impl = [[(leaf_tag, f"s{i}")] for i in range(leaves)]
    if typed:
        return balanced_plan([(sync_tag, "sync")], leaf_impl, root_type="Total", inner_type="Partial",
                             root_prims=("split", "add"), inner_prims=("split_partial", "add_partial"))
    return balanced_plan([(sync_tag, "sync")], leaf_impl)


def _same(a: list[Any], b: list[Any]) -> bool:
    return Counter(map(repr, a)) == Counter(map(repr, b))


def _check(job: DgsJob, run: Any) -> None:
    """Outputs = spec(sort(u)) = the reference executor's; final state and trace as the spec's
    (with inlining, inlined leaf events are processed by their synchronizing worker)."""
    program = load_program(job.target)
    plan = job.plan if isinstance(job.plan, Plan) else plan_from_json(job.plan)
    assert _same(run.outputs, expected_output(program, job.streams))
    assert _same(run.outputs, run_plan(program, plan, job.streams, seed=2))
    final, _ = spec_run(program, sort_streams(job.streams))
    assert program.states_equal(program.initial, run.final_state, final)
    owner = {impl: w.id for w in plan.workers() for impl in w.impl_tags}
    if job.inline_below:
        assert sorted(key for _, key, _ in run.processed) == sorted(
            (item.ts, stream) for stream, items in job.streams.items() for item in items
            if isinstance(item, StreamEvent))
        return
    assert [(worker, key) for worker, key, _ in run.processed] == [
        (owner[(program.tag(item.payload), stream)], (item.ts, stream))
        for _, stream, item in merged(job.streams) if isinstance(item, StreamEvent)]


@pytest.mark.spark
def test_plans_on_spark_equal_the_spec_and_the_reference(spark: Any) -> None:
    """One batch of runs (tick t of every run in one Spark job): the three examples at four
    leaves, the fraud example at two leaves under two different per-stream delay draws, and
    the sequential program (one worker)."""
    delayed = streams_for("txn", "rule", 2, 15, 5, seed=11)
    window = streams_for("value", "barrier", 3, 10, 3, seed=3)
    jobs = [DgsJob(target, plan_for(leaf, sync, 4, typed), streams_for(leaf, sync, 4, 12, 4, seed=5),
                   Arrival(max_delay=10, max_jitter=3, seed=1), tick=40)
            for target, leaf, sync, typed in ((WINDOW, "value", "barrier", False), (FRAUD, "txn", "rule", False),
                                              (TYPED, "value", "barrier", True))]
    jobs += [DgsJob(FRAUD, plan_for("txn", "rule", 2), delayed, tick=25,
                    arrival=Arrival(max_delay=25, max_jitter=6, seed=seed, delays=delays))
             for seed, delays in ((0, {"sync": 40}), (1, {"s0": 30, "s1": 0}))]
    jobs.append(DgsJob(WINDOW, sequential_plan(load_program(WINDOW), window), window))
    dense = streams_for("value", "barrier", 4, 10, 8, seed=9)
    jobs.append(DgsJob(WINDOW, plan_for("value", "barrier", 4), dense, inline_below=8))
    runs = run_dgs_many(spark, jobs)
    for job, run in zip(jobs, runs):
        _check(job, run)
    assert [run.leaves for run in runs] == [4, 4, 4, 2, 2, 1, 4]
    inlined = [w for w, _, e in runs[6].processed if w == "w0" and e[0] == "value"]
    assert inlined and sum(t.syncs for t in runs[6].ticks) < 8, "short segments were inlined"
    assert all(sum(t.syncs for t in run.ticks) >= 1 for run in runs[:5])
    assert all(len(run.ticks) > 2 for run in runs[3:5]), "delays spread the input over several ticks"


def test_release_respects_dependence_whatever_the_delays() -> None:
    # no Spark: the batch-level mailbox alone. Every dependent pair is released in key order
    # (same tick in key order, or an earlier tick), for many delay draws.
    program = load_program(FRAUD)
    streams = streams_for("txn", "rule", 3, 20, 6, seed=2)
    topo = topology(program, plan_for("txn", "rule", 3))
    for seed in range(25):
        ticks = release_schedule(program, topo, streams, Arrival(max_delay=30, max_jitter=8, seed=seed), tick=5)
        position = {e.key: (n, i) for n, tick in enumerate(ticks) for i, e in enumerate(tick)}
        events = [e for tick in ticks for e in tick]
        assert len(events) == sum(isinstance(i, StreamEvent) for items in streams.values() for i in items)
        for a in events:
            for b in events:
                if a.key < b.key and program.depends(a.tag, b.tag):
                    assert position[a.key] < position[b.key], (seed, a, b)


def test_bad_plans_and_streams_are_rejected_with_one_line(tmp_path: Path) -> None:
    program = load_program(WINDOW)
    streams = streams_for("value", "barrier", 2, 4, 1, seed=0)
    bad_plan = {"root": {"id": "r", "children": [
        {"id": "a", "impl_tags": [{"tag": "value", "stream": "s0"}, {"tag": "barrier", "stream": "sync"}]},
        {"id": "b", "impl_tags": [{"tag": "value", "stream": "s1"}]}]}}
    with pytest.raises(InputError, match="not P-valid"):
        run_dgs(None, WINDOW, bad_plan, streams)
    unrouted = {**streams, "s9": [StreamEvent(1, ("value", 1)), Heartbeat(10**6)]}
    with pytest.raises(InputError, match="no worker of the plan is responsible"):
        run_dgs(None, WINDOW, plan_for("value", "barrier", 2), unrouted)
    unsorted = {**streams, "s0": [StreamEvent(5, ("value", 1)), StreamEvent(5, ("value", 2))]}
    with pytest.raises(InputError, match="strictly increasing"):
        run_dgs(None, WINDOW, plan_for("value", "barrier", 2), unsorted)
    assert program is not None


@pytest.mark.spark
def test_a_user_function_failing_in_a_task_stops_with_its_message(spark: Any, tmp_path: Path) -> None:
    source = (EXAMPLES / "windowing.py").read_text() + (
        "\n\nclass Broken(EventWindow):\n"
        "    @staticmethod\n"
        "    def update(state: int, event: Event) -> int:\n"
        "        if event[1] == 7:\n"
        "            raise ValueError('seven is unlucky')\n"
        "        return EventWindow.update(state, event)\n")
    path = tmp_path / "broken.py"
    path.write_text(source)
    streams: dict[str, list[Any]] = {
        "s0": [StreamEvent(1, ("value", 3)), StreamEvent(2, ("value", 7)), Heartbeat(9)],
               "s1": [StreamEvent(1, ("value", 1)), Heartbeat(9)], "sync": [StreamEvent(3, ("barrier", 0)), Heartbeat(9)]}
    with pytest.raises(InputError, match="Broken.update.*seven is unlucky"):
        run_dgs(spark, f"{path}:Broken", plan_for("value", "barrier", 2), streams)
