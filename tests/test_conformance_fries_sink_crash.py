"""A driver crash between a sink write and its record, then a resume, without Spark
(:mod:`conformance.fries_sink_crash_check`): it holds on the executor, and names a resume
that does not make the interrupted delivery again (session 8's second holdout)."""

from __future__ import annotations

import pytest

from conformance import fries_sink_crash_check
from spark_impl.reconfig import driver


def test_the_sink_crash_check_passes_on_the_executor() -> None:
    assert fries_sink_crash_check.sink_crash_problem() is None


def test_a_resume_that_skips_the_interrupted_delivery_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from test_mutation_kills_oplus import _method

    monkeypatch.setattr(driver.Executor, "__init__", _method(driver.Executor, "__init__",
                                                             "if restored is not None and self.sink is not None:",
                                                             "if restored is None and self.sink is not None:"))
    found = fries_sink_crash_check.sink_crash_problem()
    assert found is not None and "delivered batch ids [] before its first batch" in found


def test_a_sink_that_delivers_twice_under_new_ids_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A delivery that forgets its mark (every committed batch again under a new batch id)
    duplicates rows in the table: the exactly-once part of the check names it."""
    from spark_impl.reconfig import sinks

    monkeypatch.setattr(sinks, "read_delivered", lambda directory: {})
    found = fries_sink_crash_check.sink_crash_problem()
    assert found is not None and ("extra" in found or "sink.json records" in found)


def test_the_suites_contracts_check_runs_the_sink_crash_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.fries.contracts_check import run_contracts_check
    from conformance.suite import SuiteResult

    monkeypatch.setattr(fries_sink_crash_check, "sink_crash_problem", lambda: "the planted problem")
    result = SuiteResult("fries", "spark", 0)
    assert run_contracts_check(result)
    assert "the planted problem" in result.failures[0].explanation
