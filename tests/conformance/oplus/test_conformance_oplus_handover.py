"""The O+ suite's handover check (``conformance.oplus.checks.handover``):
its expected figures are right, it passes on the executor, and it fails on the one-line bugs of
``spark_impl/oplus/driver.py`` it was written for."""

from __future__ import annotations

from typing import Any

import pytest

from support.source_rewrite import rewritten_function

import spark_impl.oplus.driver as driver
from conformance.oplus.checks.handover import handover_cases, handover_problem
from spec.oplus.scenario import parse_scenario


def test_the_case_rescales_twice_moving_some_keys_then_none() -> None:
    for seed in range(5):
        (hot,), per_round, expected, single = handover_cases(seed)
        for case in (hot, single):
            parse_scenario(case)
        sizes = [hot["parallelism"]] + [r["parallelism"] for r in hot["reconfigurations"]]
        keys = {item["key"] for item in hot["inputs"][0]}
        assert len(set(sizes)) == 3 and len(keys) == per_round and len(hot["inputs"][0]) == 3 * per_round
        assert [e[0] for e in expected] == [0, 1] and expected[0][4] >= 2 and expected[1][4] == 0


def test_the_executor_reports_its_handovers_as_defined(spark: Any) -> None:
    assert handover_problem(spark, 0) is None


@pytest.mark.parametrize("old, new", [
    ("moved = sc.accumulator(0)", "moved = sc.accumulator(-1)"),  # a count that starts at -1
    ("moved = sc.accumulator(0)", "moved = sc.accumulator(1)"),   # NumberReplacer:22
    ("if target != index:", "if target < index:"),                 # keys moved to a higher instance not counted
])
def test_a_wrong_count_of_moved_key_states_is_caught(spark: Any, monkeypatch: pytest.MonkeyPatch,
                                                     old: str, new: str) -> None:
    monkeypatch.setattr(driver, "_handover", rewritten_function(driver, "_handover", old, new))
    found = handover_problem(spark, 0)
    assert found is not None and "handovers" in found, found


def _clocked_mutant(name: str, old: str, new: str) -> Any:
    """Like ``_mutant``, but the function's globals are the driver module's own, so that it
    reads the clock the check puts there (``_mutant`` copies the globals, real clock included)."""
    import inspect

    source = inspect.getsource(getattr(driver, name))
    assert source.count(old) == 1, old
    saved = getattr(driver, name)
    exec(compile(source.replace(old, new), driver.__file__ or "<changed>", "exec"), vars(driver))  # noqa: S102
    broken, driver.__dict__[name] = getattr(driver, name), saved
    return broken


@pytest.mark.parametrize("old, new", [
    ("pause = time.perf_counter() - start", "pause = time.perf_counter() % start"),  # same result unless the pause outlasts the uptime
    ("pause = time.perf_counter() - start", "pause = time.perf_counter() + start"),
])
def test_a_pause_that_is_not_the_time_between_two_readings_is_caught(spark: Any, monkeypatch: pytest.MonkeyPatch,
                                                                     old: str, new: str) -> None:
    monkeypatch.setattr(driver, "_handover", _clocked_mutant("_handover", old, new))
    found = handover_problem(spark, 0)
    assert found is not None and "readings of its clock" in found, found


def test_a_round_time_that_is_not_the_time_between_two_readings_is_caught(spark: Any,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    broken = _clocked_mutant("_run_rounds", "append(time.perf_counter() - start)",
                             "append(time.perf_counter() % start)")
    monkeypatch.setattr(driver, "_run_rounds", broken)
    found = handover_problem(spark, 0)
    assert found is not None and "readings of its clock" in found, found
