"""The suite's Spark-free checks run the executor's code in this process, where no engine
watchdog looks (a control reader changed to never move on - ``seq + 1`` ->
``seq ** 1`` in ``ControlReader.poll`` - hung the whole Fries suite). A hang or a crash there is
now a failure of that check, and the run goes on."""

from __future__ import annotations

import threading
import time

import pytest

from conformance.core import watchdog
from conformance.core.results import CheckResult, SuiteResult
from conformance.fries.driver_oracles import stable_hash


def test_bounded_returns_the_value_or_names_the_hang() -> None:
    assert watchdog.bounded(lambda: 7, "seven", 1.0) == 7
    stop = threading.Event()
    began = time.monotonic()
    with pytest.raises(watchdog.Hang, match="the spinner did not finish within 0.2 s"):
        watchdog.bounded(lambda: stop.wait(), "the spinner", 0.2)
    assert time.monotonic() - began < 5
    stop.set()
    with pytest.raises(ZeroDivisionError):
        watchdog.bounded(lambda: 1 // 0, "a crash", 1.0)


def test_a_hanging_fries_driver_oracle_fails_the_check(monkeypatch: pytest.MonkeyPatch) -> None:
    stop = threading.Event()
    monkeypatch.setattr(stable_hash, "hash_problem", lambda: stop.wait())
    monkeypatch.setattr(watchdog, "CHECK_LIMIT_S", 0.5)
    result = SuiteResult("fries", "spark", 0)
    try:
        assert stable_hash.run_hash_check(result) is True
    finally:
        stop.set()
    assert "the stable hash oracle did not finish within 0.5 s" in result.failures[0].explanation


def test_a_dgs_check_that_crashes_or_hangs_is_an_engine_failure(monkeypatch: pytest.MonkeyPatch) -> None:
    result = SuiteResult("dgs", "spark", 0)
    crashed = watchdog.contained_check(result, "a check", lambda: CheckResult("a check", cases=1 // 0))
    assert (crashed.failed, dict(crashed.oracle_failures)) == (1, {"engine": 1})
    assert "a check: raised ZeroDivisionError" in result.failures[0].explanation
    stop = threading.Event()
    monkeypatch.setattr(watchdog, "CHECK_LIMIT_S", 0.2)
    try:
        hung = watchdog.contained_check(result, "another", lambda: (stop.wait(), CheckResult("another"))[1])
    finally:
        stop.set()
    assert hung.failed == 1 and "another did not finish within 0.2 s" in result.failures[1].explanation


def test_a_timed_out_pure_python_call_is_stopped_not_left_spinning() -> None:
    """A test whose patched-in function loops for ever must not leave its thread spinning for the rest of
    the pytest run; holding the GIL half the time it made the run three times slower and a Z3
    proof of 4 s exceed its 300 s budget. ``bounded`` now stops the loop."""
    spins = threading.Event()

    def spin() -> None:
        spins.set()
        while True:
            pass

    with pytest.raises(watchdog.Hang):
        watchdog.bounded(spin, "the spinner", 0.3)
    assert spins.is_set()
    assert not [t for t in threading.enumerate() if t.name == watchdog.THREAD_NAME and t.is_alive()]


def test_an_engine_call_is_left_running_unless_asked() -> None:
    """A Spark engine's thread (``interrupt=False``, the default) is never stopped from outside."""
    release = threading.Event()
    finished, _ = watchdog.call_with_timeout(lambda: release.wait(), 0.1)
    alive = [t for t in threading.enumerate() if t.name == watchdog.THREAD_NAME and t.is_alive()]
    release.set()
    assert not finished and alive
