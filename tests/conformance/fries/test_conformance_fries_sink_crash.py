"""A driver crash between a sink write and its record, then a resume, without Spark
(:mod:`conformance.fries.checks.sink_crash`): it holds on the executor, and names a resume
that does not make the interrupted delivery again."""

from __future__ import annotations

from pathlib import Path

import pytest

from conformance.fries.checks import sink_crash as fries_sink_crash_check
from spark_impl.reconfig import driver


def test_the_sink_crash_check_passes_on_the_executor() -> None:
    assert fries_sink_crash_check.sink_crash_problem() is None


def test_a_resume_that_skips_the_interrupted_delivery_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from support.source_rewrite import rewritten_method

    monkeypatch.setattr(driver.Executor, "__init__", rewritten_method(driver.Executor, "__init__",
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
    from conformance.fries.checks.contracts import run_contracts_check
    from conformance.core.results import SuiteResult

    monkeypatch.setattr(fries_sink_crash_check, "sink_crash_problem", lambda: "the planted problem")
    result = SuiteResult("fries", "spark", 0)
    assert run_contracts_check(result)
    assert "the planted problem" in result.failures[0].explanation


@pytest.mark.parametrize("old, new, words", [
    # the rows of a delivery carry their own executor batch, not the delivery's batch id
    # (in the crash run when its crashed delivery holds two batches, else in the sink given on resume)
    ("yield s, batch_id, op", "yield s, g, op", "rows with (job, batch) other than (0, "),
    ("yield s, batch_id, op", "yield s + 1, batch_id, op", "rows with (job, batch) other than (0, 1)"),
])
def test_rows_that_do_not_carry_the_deliverys_job_and_batch_id_are_named(monkeypatch: pytest.MonkeyPatch, old: str,
                                                                         new: str, words: str) -> None:
    """sinks.py ``_rows``: ``batch`` is the delivery's batch id, the last
    committed executor batch it contains; the Spark sink path compares only the other columns."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import sinks

    monkeypatch.setattr(sinks, "_rows", rewritten_function(sinks, "_rows", old, new))
    found = fries_sink_crash_check.sink_crash_problem()
    assert found is not None and words in found, found


def test_the_sink_given_on_resume_alone_names_rows_of_their_own_batch(monkeypatch: pytest.MonkeyPatch,
                                                                        tmp_path: Path) -> None:
    """Promise 6 on its own: the one delivery of several committed batches shows the bug
    whatever the timing of the crash run."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import sinks

    assert fries_sink_crash_check._attached_problem(str(tmp_path / "real")) is None
    monkeypatch.setattr(sinks, "_rows", rewritten_function(sinks, "_rows", "yield s, batch_id, op", "yield s, g, op"))
    found = fries_sink_crash_check._attached_problem(str(tmp_path / "broken"))
    assert found is not None and "rows with (job, batch) other than (0, " in found, found
