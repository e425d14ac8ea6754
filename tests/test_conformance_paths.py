"""Every path, every run (issue 12, item 4): the entry paths of the Spark executor the Fries
suite runs (conformance.fries.frontends), the MCS pruning shapes and alignment probes every
run of 20 cases or more contains, and the coverage plumbing (conformance.branch_coverage)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from spec.fries.scenario import Scenario, scenario_from_json

from conformance.cases import draw_cases
from conformance.fries.engines import make_engine
from conformance.fries.frontends import PATHS, applicable, failing_target, prepare
from conformance.fries.oracles import judge
from conformance.fries.suite import FriesConfig, PATH_CASES, path_section, race_section, race_strategy, scenario_strategy
from conformance.generators.alignment import PRUNING_SHAPES, is_probe_shaped, pruning_probes, pruning_shape

ROOT = Path(__file__).resolve().parent.parent


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
    assert all(applicable(p, one) for p in PATHS)
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
    done = subprocess.run([sys.executable, "-c", "from conformance.cli.main import main; raise SystemExit(main())", "conformance", "--suite", "dgs",
                           "--cases", "3", "--coverage", "--json", "--report", str(tmp_path)],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    figure = json.loads(done.stdout)["coverage"]
    assert figure["worker_data_files"] >= 1
    tasks = next(f for f in figure["files"] if f["path"] == "spark_impl/dgs/tasks.py")
    assert tasks["covered_statements"] > 0
    assert "Coverage of spark_impl" in (tmp_path / "report.md").read_text()


def test_submit_args_keep_the_users_own() -> None:
    from conformance.branch_coverage import DAEMON_CONF, _submit_args

    assert _submit_args(None) == f"--conf {DAEMON_CONF} pyspark-shell"
    assert _submit_args("--driver-memory 1g pyspark-shell") == f"--driver-memory 1g --conf {DAEMON_CONF} pyspark-shell"
