"""spark_impl under the source-reordering hook (``timing.reorder_bound``, spec/fries/reorder.py):
sources ingest a seeded bounded-disorder permutation of ingestion_order, and Fries runs stay
conflict-serializable and compute what the serial execution in their witness order computes
(local checker of ``spark_checks``)."""

from __future__ import annotations

import random
import sys
from dataclasses import replace
from typing import Any

import pytest

from spark_impl.reconfig import run_scenarios
from spec.fries.reorder import reordered_ingestion
from spec.fries.scenario import Scenario, ingestion_order, scenario_from_json

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.spark_checks import problems, random_scenario  # noqa: E402

pytestmark = pytest.mark.spark


def _reordering(scenario: Scenario, bound: int) -> Scenario:
    return replace(scenario, timing=replace(scenario.timing, reorder_bound=bound))


def _observed_chain() -> Scenario:
    """S -> X (one worker, no cost) -> Y: X's log is the order the source ingested in."""
    return scenario_from_json({
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "X", "kind": "one-to-one"},
                                   {"name": "Y", "kind": "one-to-one"}],
                     "edges": [["S", "X"], ["X", "Y"]]},
        "functions": {"X": {"op": "map", "mul": 1, "add": 0}, "Y": {"op": "map", "mul": 1, "add": 0}},
        "sources": {"S": [{"key": k % 3, "value": k + 1} for k in range(12)]},
        "reconfigurations": [{"at": 6, "updates": {
            "X": {"function": {"op": "map", "mul": 10, "add": 0}, "state": {"mul": 2, "add": 1}},
            "Y": {"function": {"op": "map", "mul": 100, "add": 0}, "state": {"mul": 3, "add": 0}}}}],
        "timing": {"seed": 3, "reorder_bound": 3},
    })


def test_fries_runs_under_source_reordering_are_correct(spark: Any) -> None:
    chain = _observed_chain()
    batch = [chain] + [_reordering(random_scenario(random.Random(500 + seed), restarts=seed % 3 == 0), 1 + seed % 3)
                       for seed in range(6)]
    results = run_scenarios(spark, batch, "fries", batch_size=4)
    assert [(i, problems(sc, r)) for i, (sc, r) in enumerate(zip(batch, results)) if problems(sc, r)] == []
    # the hook is real: the source ingested the reordered order, which differs from the plain one
    reordered = [t.txn for t in reordered_ingestion(chain)]
    assert reordered != [t.txn for t in ingestion_order(chain)]
    logged = [op.txn for op in results[0].schedule.logs["X"] if not op.update]
    assert logged == reordered
    assert any(reordered_ingestion(sc) != ingestion_order(sc) for sc in batch[1:])
