"""The DGS suite's user-error check (conformance.dgs.checks.user_error): a user function raising in a
Spark task must stop the batch executor with the program's one-line InputError; the check
sees an executor that lets the task's exception through (``_user_error`` finding nothing)."""

from __future__ import annotations

from typing import Any

import pytest

from spec.errors import InputError

from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.checks.user_error import PROGRAM, bad_input, problem, run_check
from conformance.core.results import SuiteResult

CASES = draw_dgs_cases(6, 0)
EXPECTED = "Concat.state_types['Whole'].update: raised TypeError: boom (called with {}, ('app', 0, 5))"


def _raise(error: Exception) -> Any:
    raise error


def test_the_oracle_wants_the_users_error_as_one_line_input_error() -> None:
    same = "Concat.state_types['Back'].update: raised TypeError: boom (called with {}, ('app', 0, 5))"
    assert problem(lambda: _raise(InputError(same)), EXPECTED, "batch") is None
    assert "expected InputError" in (problem(lambda: _raise(RuntimeError(same)), EXPECTED, "batch") or "")
    assert "ended without an error" in (problem(lambda: None, EXPECTED, "batch") or "")
    other = same.replace("boom", "bang")
    assert "stopped with" in (problem(lambda: _raise(InputError(other)), EXPECTED, "batch") or "")


def test_the_bad_input_is_an_append_of_a_number_the_plan_handles() -> None:
    case = next(c for c in CASES if c.name == PROGRAM)
    streams = bad_input(case)
    events = [(s, item.payload) for s, items in streams.items() for item in items if hasattr(item, "payload")]
    handled = {impl for w in case.plan.workers() for impl in w.impl_tags}
    assert len(events) == 1 and events[0][1][2] == 5 and ((events[0][1][0], events[0][1][1]), events[0][0]) in handled


@pytest.mark.spark
def test_the_batch_executor_stops_with_the_users_error_and_a_lost_message_is_caught(
        spark: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    import spark_impl.dgs.driver as driver

    result = SuiteResult("dgs", "spark", 0)
    assert run_check(CASES, spark, False, result).failed == 0 and not result.failures
    monkeypatch.setattr(driver, "_user_error", lambda text: None)  # the task's exception escapes as is
    checked = run_check(CASES, spark, False, result)
    assert checked.failed == 1 and "expected InputError" in result.failures[0].explanation
