"""The DGS suite's one-worker-plan check (conformance.dgs.checks.one_worker): the first cases under
one-worker plans pass on Spark, and a root host taken past the root's only leaf, or ticks that
count leaf-only steps as synchronizing ones, are caught."""

from __future__ import annotations

from typing import Any

import pytest

from support.source_rewrite import rewritten_function

from conformance.dgs.checks.one_worker import CASES as FIRST, one_worker, run_check
from conformance.dgs.cases import draw_dgs_cases
from conformance.core.results import SuiteResult

CASES = draw_dgs_cases(FIRST, 0)


def test_one_worker_plans_have_no_fork() -> None:
    assert all(not one_worker(c).plan.root.children for c in CASES)


@pytest.mark.spark
def test_one_worker_plans_pass_and_two_one_line_bugs_of_the_driver_are_caught(spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import spark_impl.dgs.driver as driver
    from spark_impl.dgs.topology import Topology

    result = SuiteResult("dgs", "spark", 0)
    assert run_check(CASES, spark, result).failed == 0 and not result.failures
    # topology.py host(): subtree_leaves[w][0] -> [1] (fine for a forked worker, IndexError for a lone root)
    monkeypatch.setattr(Topology, "host", lambda self, worker_id: self.subtree_leaves[worker_id][1])
    assert run_check(CASES, spark, result).failed == len(CASES) and "engine" in result.failures[-1].oracles
    monkeypatch.undo()
    counted = rewritten_function(driver, "run_dgs_many", "sum(sync is not None", "sum(sync is None")
    monkeypatch.setattr(driver, "run_dgs_many", counted)
    import spark_impl.dgs as dgs

    monkeypatch.setattr(dgs, "run_dgs_many", counted)
    assert run_check(CASES, spark, result).failed and "synchronizing steps" in result.failures[-1].explanation
