"""The DGS driver on the pure-Python Spark stand-in (``conformance.dgs.checks.standin``): no
failure on the drawn cases of seeds 0-1, and failures on one-line bugs of
``spark_impl/dgs/driver.py`` that the Spark check cannot see (each recompiled from its source with
one change)."""

from __future__ import annotations

import pytest

from support.source_rewrite import rewritten_function

import spark_impl.dgs as package
import spark_impl.dgs.driver as driver
from conformance.dgs.checks.standin import problems, run_check
from conformance.dgs.cases import draw_dgs_cases
from conformance.core.results import SuiteResult

CASES = draw_dgs_cases(100, 0)


@pytest.mark.parametrize("seed", [0, 1])
def test_the_driver_on_the_stand_in_passes(seed: int) -> None:
    result = SuiteResult("dgs", "spark", seed)
    check = run_check(draw_dgs_cases(100, seed), result)
    assert check.failed == 0 and not result.failures and check.cases == 101


def _patch(monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str) -> None:
    broken = rewritten_function(driver, name, old, new)
    monkeypatch.setattr(driver, name, broken)
    if hasattr(package, name):
        monkeypatch.setattr(package, name, broken)


def test_the_one_job_wrapper_is_run(monkeypatch: pytest.MonkeyPatch) -> None:
    """Kills dgs/driver.py:core/NumberReplacer:40 (line 146, ``run_dgs_many(...)[0]`` -> ``[1]``):
    no check called ``run_dgs``."""
    _patch(monkeypatch, "run_dgs", "sink_dir=sink_dir)[0]", "sink_dir=sink_dir)[1]")
    found = problems(CASES)
    assert found and "run_dgs on the stand-in raised IndexError" in found[0][1][0][1]


@pytest.mark.parametrize("old, new", [
    ("sum(sync is not None for _, sync in steps)", "sum(sync is None for _, sync in steps)"),
    ("sum(sync is not None for _, sync in steps)", "len(steps)"),
    ("TickStats(len(schedules[j][number]),", "TickStats(len(schedules[j]),"),
])
def test_the_ticks_a_run_reports_are_checked(monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    _patch(monkeypatch, "run_dgs_many", old, new)
    found = problems(CASES)
    assert any(oracle == "stats" for _, failed in found for oracle, _ in failed), found[:1]


def test_longer_inlined_segments_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inlining a segment regardless of where its events live (the subtree test dropped) puts
    events at a worker that is not their ancestor: seen with the stand-in's longer bounds."""
    _patch(monkeypatch, "inline_short_segments", "and all(not events or leaf in topo.subtree_leaves[sync[0]]",
           "and all(not events or leaf >= 0")
    found = problems(CASES)
    assert any(oracle in ("processed", "state", "outputs") for _, failed in found for oracle, _ in failed), found[:1]


def test_a_trace_out_of_key_order_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """dgs/streaming.py ``run.processed.sort(key=lambda entry:
    entry[1])`` -> ``entry[2]``: a run's trace sorted by the payload instead of the key passed
    the order-blind trace comparison. The same slip in the batch driver, on the stand-in."""
    _patch(monkeypatch, "run_dgs_many", "result.processed.sort(key=lambda entry: entry[1])",
           "result.processed.sort(key=lambda entry: repr(entry[2]))")
    found = problems(CASES)
    assert found and any("not in key order" in text for _, failures in found for _, text in failures[:1])


def test_a_changed_default_of_run_dgs_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``run_dgs``'s defaults must be ``DgsJob``'s (one tick); every other call passes them."""
    original = driver.run_dgs

    def one_tick_less(*args: object, tick: int = 1, **kwargs: object) -> object:
        return original(*args, tick=tick, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(package, "run_dgs", one_tick_less)
    found = problems(CASES)
    assert found and "run_dgs with its defaults: ticks" in found[0][1][0][1]


def test_a_sequential_plan_of_the_wrong_state_type_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review finding 10 (``spark_impl/dgs/__init__.py:22-24``, ``program.initial`` ->
    ``"State"``): ``sequential_plan`` is public API no check called; for a program whose initial
    state type is not ``State`` the plan is P-invalid."""
    from conformance.dgs.checks.standin import sequential_problem

    monkeypatch.setattr(package, "sequential_plan", rewritten_function(package, "sequential_plan", "program.initial, impl",
                                                            '"State", impl'))
    found = sequential_problem(CASES)
    assert found is not None and found[1][0][0] == "plan" and "expected the root alone of state type" in found[1][0][1]
