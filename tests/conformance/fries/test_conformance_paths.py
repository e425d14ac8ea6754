"""Every path, every run: the entry paths of the Spark executor the Fries
suite runs (conformance.fries.engines.paths), the MCS pruning shapes and alignment probes every
run of 20 cases or more contains, and the coverage plumbing (conformance.output.coverage)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any
from types import SimpleNamespace

import pytest
from spec.fries.scenario import Scenario, scenario_from_json

from conformance.core.cases import draw_cases
from conformance.fries.engines.catalogue import make_engine
from conformance.fries.engines.paths import PATHS, applicable, failing_target, prepare
from conformance.fries.oracles import judge
from conformance.fries.config import FriesConfig
from conformance.fries.suite import PATH_CASES, path_section
from conformance.fries.cases.sections import race_section, race_strategy, scenario_strategy
from conformance.fries.cases.alignment import (
    PRUNING_SHAPES, is_probe_shaped, pruning_probes, pruning_shape, alignment_probes,
)
from support.paths import ROOT
from conformance.fries.engines.sink import FAMILIES, decode, encode, keyed_job
from conformance.fries.engines.stepped import FAR_MS, adversarial_seed, levels, GAP, Releases, stepped_job
from conformance.output.coverage import DAEMON_CONF, submit_args
from spark_impl.reconfig import scenario_job
from spark_impl.reconfig.control import ControlEntry
from spark_impl.reconfig.progress import Progress, Active
from spark_impl.reconfig.sinks import column_converter



def _chain(sources: int = 1, blocking: bool = False, restarts: tuple[int, ...] = (2,)) -> Scenario:
    ops = [{"name": f"S{i}", "kind": "source"} for i in range(sources)]
    ops += [{"name": "A", "kind": "one-to-one"}, {"name": "B", "kind": "blocking" if blocking else "one-to-one"}]
    edges = [[f"S{i}", "A"] for i in range(sources)] + [["A", "B"]]
    return scenario_from_json({
        "dataflow": {"operators": ops, "edges": edges},
        "functions": {"A": {"op": "map", "mul": 2, "add": 1},
                      "B": {"op": "sum", "mul": 1, "add": 0} if blocking else {"op": "map", "mul": 1, "add": 3}},
        "sources": {f"S{i}": [{"key": k % 3, "value": k} for k in range(6)] for i in range(sources)},
        "reconfigurations": [{"at": 3, "updates": {"A": {"function": {"op": "map", "mul": 3, "add": 0},
                                                         "state": {"mul": 2, "add": 1}}}}],
        "timing": {"restarts": list(restarts), "reorder_bound": 2},
    })


def test_applicability_and_preparation_of_each_path() -> None:
    one, two, blocking = _chain(), _chain(sources=2), _chain(blocking=True)
    assert all(applicable(p, one) for p in PATHS if p not in ("sink", "objstore"))
    assert not applicable("sink", one)  # keys 0-2 only: the sink path wants >= 4 routed keys (sink_path.worthy)
    assert not applicable("directory", two) and not applicable("streaming", two) and applicable("resume", two)
    assert not applicable("unbounded", blocking) and not applicable("streaming", blocking)
    assert failing_target(one) == "A" == failing_target(two)
    assert prepare("submit", one).timing.restarts == () and prepare("submit", one).timing.reorder_bound == 2
    assert prepare("directory", one).timing.reorder_bound == 0 and prepare("directory", one).timing.restarts == (2,)
    assert prepare("planned", one) == one
    with pytest.raises(ValueError):
        applicable("teleport", one)


def test_every_run_of_20_cases_has_every_probe_and_every_path() -> None:
    config = FriesConfig(cases=20)
    strategy = scenario_strategy()
    race = race_strategy()
    assert not isinstance(strategy, str) and not isinstance(race, str)
    section = race_section(race, round(config.cases * config.race_fraction), config)
    shapes = Counter(pruning_shape(s) for s in section)
    assert all(shapes[shape] >= 1 for shape in PRUNING_SHAPES), shapes
    assert any(is_probe_shaped(s) for s in section)
    paths = dict(path_section(strategy, config))
    assert {p: len(c) for p, c in paths.items()} == {"epoch": 2, **PATH_CASES}
    assert all(applicable(p, s) for p, cases in paths.items() for s in cases)
    assert path_section(strategy, FriesConfig(cases=19)) == []


@pytest.mark.parametrize("shape", PRUNING_SHAPES)
def test_pruning_probes_have_their_shape_and_pass_on_the_reference(shape: str) -> None:
    cases = draw_cases(pruning_probes(shape), 3, seed=1)
    assert [pruning_shape(s) for s in cases] == [shape] * 3
    engine = make_engine("reference")
    for scenario, outcome in zip(cases, engine.run(cases)):
        assert judge(scenario, outcome).ok


def test_pruning_shape_names_the_rule() -> None:
    flow = _chain()
    assert pruning_shape(flow) is None  # no one-to-many ancestor
    with pytest.raises(ValueError):
        draw_cases(pruning_probes("teleport"), 1, seed=0)


@pytest.mark.spark
def test_spark_entry_paths_are_judged_like_any_case(spark: Any) -> None:
    """A small case per driver-loop path through the shared session (the suite itself runs
    every path at >= 20 cases); the rollback path must see its failing request rejected (else
    an engine failure) and every oracle must hold."""
    cases = {p: prepare(p, c) for p, c in [
        ("rollback", _chain()), ("resume", _chain(sources=2)), ("directory", _chain(restarts=()))]}
    for path, scenario in cases.items():
        (outcome,) = make_engine("spark", spark=spark, path=path).run([scenario])
        judgement = judge(scenario, outcome)
        assert judgement.ok, (path, [f.summary for f in judgement.failures])


@pytest.mark.slow
def test_coverage_measures_the_spark_workers(tmp_path: Path) -> None:
    """A fresh process (the daemon module is a launch-time setting): the DGS suite's Spark
    check runs in workers, so worker data files must exist and spark_impl/dgs be covered."""
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run([sys.executable, "-c", "from streamproof.main import main; raise SystemExit(main())", "conformance", "--suite", "dgs",
                           "--cases", "3", "--coverage", "--json", "--report", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    figure = json.loads(done.stdout)["coverage"]
    assert figure["worker_data_files"] >= 1
    tasks = next(f for f in figure["files"] if f["path"] == "spark_impl/dgs/tasks.py")
    assert tasks["covered_statements"] > 0
    assert "Coverage of spark_impl" in (tmp_path / "report.md").read_text()


def test_submit_args_keep_the_users_own() -> None:
    assert submit_args(None) == f"--conf {DAEMON_CONF} pyspark-shell"
    assert submit_args("--driver-memory 1g pyspark-shell") == f"--driver-memory 1g --conf {DAEMON_CONF} pyspark-shell"


# --- the stepped path (conformance.fries.engines.stepped): control messages released batch by batch ---

def _probe() -> Scenario:
    return next(p for p in draw_cases(alignment_probes(), 6, seed=2) if p.workers("X") == 3 and "Z" in p.functions)


def test_the_adversarial_seed_releases_downstream_objects_first() -> None:
    probe = _probe()
    level = levels(probe)
    assert level == {"X#0": 1, "X#1": 1, "X#2": 1, "Y": 2, "Z": 3}
    seed = adversarial_seed(probe, 0)
    entry = ControlEntry(0, 1, 1, 0.0, 0, FAR_MS / 10, FAR_MS, seed)
    order = sorted(level, key=entry.delay_s)
    assert order[:2] == ["Z", "Y"], order  # the members' FCMs first, then the heads one by one
    assert min(entry.delay_s(o) for o in level) > 3600 * 24  # by the clock: never during a run


class _FakeExecutor:
    """What :class:`Releases` reads: jobs with their active request, the scheduler, _publish."""

    def __init__(self, job: Any, active: Any) -> None:
        self.scheduler = "fries"
        self.state = [SimpleNamespace(job=job, live=SimpleNamespace(active=active), committed=Progress())]
        self.published = 0

    def _publish(self) -> None:
        self.published += 1


def test_releases_open_one_head_every_gap_batches_and_catch_an_early_switch() -> None:
    probe = _probe()
    job = stepped_job(probe, 0)
    objs = ["X#0", "X#1", "X#2", "Y", "Z"]
    active = Active(1, 1, time.time(), 0, ["X#0", "X#1", "X#2"], objs, ["X", "Y", "Z"])
    ex = _FakeExecutor(job, active)
    releases = Releases()
    visible_by_batch = []
    for _ in range(3 * GAP + 1):
        releases.advance(ex)
        entry = ControlEntry(0, 1, 1, active.issued, 0, *job.timing.fcm_delay, job.timing.seed)
        visible_by_batch.append({o for o in objs if entry.visible_to(o, time.time() + 60)})
    heads = [len(v & {"X#0", "X#1", "X#2"}) for v in visible_by_batch]
    assert heads == [1] * GAP + [2] * GAP + [3] * (GAP + 1)
    assert {"Y", "Z"} <= visible_by_batch[0]
    assert ex.published == len(heads)
    first = next(iter(visible_by_batch[0] & {"X#0", "X#1", "X#2"}))
    late = next(o for o in ["X#0", "X#1", "X#2"] if o not in visible_by_batch[GAP])
    fresh = Releases()
    snapshot = fresh.advance(ex)
    active.switched = {first: 0.0}
    fresh.check(ex, snapshot)
    assert fresh.problems == {}  # the probe's MCS: X, Y, Z with heads X#i (spec.fries.mcs)
    active.switched[late] = 0.0
    fresh.check(ex, snapshot)
    assert late in fresh.problems[0] and "before its control message" in fresh.problems[0]
    wrong = Releases()
    ex.state[0].live.active = Active(1, 2, time.time(), 0, objs, objs, ["X", "Y", "Z"])  # naive roles
    wrong.advance(ex)
    assert "Fries Alg. 1-4 name ['X', 'Y', 'Z'] with heads ['X']" in wrong.problems[0]


# --- the sink path (conformance.fries.engines.sink): keys of other types ---

def test_encoded_keys_route_like_the_integers_and_decode_back() -> None:
    from spark_impl.keys import route  # noqa: PLC0415 - read when called: spark_impl.keys.route is replaced at run time

    for family in (*FAMILIES, "mixed", "json", "boolish"):
        for k in range(-7, 40):
            for form in range(3):
                key = encode(k, family, form)
                assert decode(key) == k and decode(column_converter("string")(key)) == k
                assert all(route(key, n) == k % n for n in range(1, 6)), (family, k, key)
    assert {type(encode(k, f, form)) for k in (1, 4) for f in (*FAMILIES, "boolish") for form in range(3)} == \
        {str, tuple, int, float, bool}
    assert encode(1, "boolish", 0) is True and encode(0, "boolish", 0) is False  # the first tuple of 0/1: a bool
    assert encode(5, "numeric", 0) < 0  # negative keys (routed by k mod p, not |k| mod p)


def test_keyed_jobs_compute_like_the_scenario_on_decoded_keys() -> None:
    scenario = _chain(blocking=True)
    plain = scenario_job(scenario)
    for family in FAMILIES:
        job = keyed_job(scenario, family)
        assert [decode(job.source.get(i)[2]) for i in range(job.source.count())] == \
            [plain.source.get(i)[2] for i in range(plain.source.count())]
        for op in plain.logic:
            state, out = job.logic[op].process(None, job.source.get(1)[2], 5)
            assert (state, [(r, decode(k), v) for r, k, v in out]) == \
                plain.logic[op].process(None, plain.source.get(1)[2], 5)
        (update,) = job.planned[0].request.updates.values()
        assert decode(update.logic.process(2, job.source.get(2)[2], 1)[1][0][1]) == plain.source.get(2)[2]


@pytest.mark.spark
def test_stepped_and_sink_paths_on_spark(spark: Any) -> None:
    """The stepped path catches an unaligned member on ONE probe, every time (heads released
    GAP batches apart, not by timing luck); the sink path (string/tuple keys, Parquet via a
    callback, Retention(1), a crash before the delivery mark, resume) passes every oracle with
    the outputs read back from the table."""
    probe = _probe()
    (caught,) = make_engine("spark", spark=spark, path="stepped", faults=frozenset({"missing-alignment"})).run([probe])
    assert "serializable" in judge(probe, caught).failed_oracles
    scenario = _chain(blocking=True, restarts=(4,))
    (outcome,) = make_engine("spark", spark=spark, path="sink").run([scenario])
    judgement = judge(scenario, outcome)
    assert judgement.ok, [f.summary for f in judgement.failures]
    assert outcome.outputs  # read from the Parquet table
