"""The default test run's small conformance run: the Fries suite with the Spark engine (a few
dozen random cases in one batch, sharing the test session's SparkSession), and - behind
``-m slow`` - the teeth: every seeded fault of spark_impl makes the suite fail."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.fries.engines.catalogue import available_faults, engine_status
from conformance.fries.config import FriesConfig
from conformance.fries.suite import run_fries_suite
from conformance.output import vectors
from conformance.run import RunConfig, run_suites
from spark_impl.faults import OPLUS_FAULTS

pytestmark = pytest.mark.spark


def test_small_spark_conformance_run(spark: Any, tmp_path: Path) -> None:
    assert engine_status("spark") is None
    config = FriesConfig(cases=24, seed=1, engine="spark", save_dir=str(tmp_path), race_fraction=0.0)
    result = run_fries_suite(config, spark=spark)
    check = result.checks[0]
    # 20-59 cases: the fixed sections (entry paths, stepped probes) are always run, so more than 24
    assert check.status == "ran" and check.cases >= 24
    assert result.failed == 0, "\n\n".join(f.explanation for f in result.failures)
    assert result.delays and all(d >= 0 for d in result.delays)


def test_vectors_check_on_spark(spark: Any, tmp_path: Path) -> None:
    """Vectors exported from the reference replay on Spark (Fries by the oracles, O+ exactly)."""
    vectors.export(tmp_path, fries_cases=8, oplus_cases=8, seed=3)
    report = vectors.check(tmp_path, "spark")
    assert report.mismatched == [] and report.skipped == [] and len(report.matched) == 16


@pytest.mark.slow
@pytest.mark.parametrize("fault", sorted(available_faults("spark")))
def test_every_seeded_fault_is_detected(spark: Any, tmp_path: Path, fault: str) -> None:
    """`streamproof conformance --inject-fault NAME` must fail for every seeded fault: the
    fault goes to the suite whose Spark executor it lives in."""
    suite = "oplus" if fault in OPLUS_FAULTS else "fries"
    config = RunConfig(suites=(suite,), cases=200 if suite == "fries" else 100, engine="spark",
                       faults=frozenset({fault}), save_dir=str(tmp_path), shrink_budget=200, spark=spark)
    results = run_suites(config, lambda _: None)
    assert sum(r.failed for r in results) > 0, f"fault {fault!r} went undetected"
    assert any(f.replay_file for r in results for f in r.failures)
