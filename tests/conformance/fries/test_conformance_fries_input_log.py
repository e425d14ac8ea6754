"""The Structured Streaming front end's input log under a retention, without Spark
(:mod:`conformance.fries.checks.input_log`): it holds on the executor, and names a log that
drops the wrong files or keeps the files it must drop."""

from __future__ import annotations

import os
from typing import Any

import pytest

from conformance.fries.checks import input_log as fries_input_log_check
from spark_impl.reconfig import streaming


def test_the_input_log_check_passes_on_the_front_end() -> None:
    assert fries_input_log_check.input_log_problem() is None


def test_input_dropped_below_the_live_offset_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """A log that deletes the files below the *live* offset: with a request in progress the
    commit lags, and a restart re-reads tuples that are gone."""
    runs: list[Any] = []
    start_query, drop_below = streaming.start_query, streaming.InputIndex.drop_below

    def recorded(*args: Any, **kwargs: Any) -> Any:
        runs.append(start_query(*args, **kwargs))
        return runs[-1]

    def below_live(self: streaming.InputIndex, path: str, offset: int) -> bool:
        return drop_below(self, path, runs[-1].executor.state[0].live.offset)

    monkeypatch.setattr(streaming, "start_query", recorded)
    monkeypatch.setattr(streaming.InputIndex, "drop_below", below_live)
    found = fries_input_log_check.input_log_problem()
    assert found is not None and "beyond the committed offset 3" in found


def test_a_log_that_keeps_what_it_must_drop_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming.InputIndex, "drop_below", lambda self, path, offset: False)
    found = fries_input_log_check.input_log_problem()
    assert found is not None and "wholly below the committed offset" in found


def test_files_left_on_disk_after_their_deletion_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    drop_below = streaming.InputIndex.drop_below

    def index_only(self: streaming.InputIndex, path: str, offset: int) -> bool:
        with monkeypatch.context() as patch:
            patch.setattr(os, "unlink", lambda name: None)
            return drop_below(self, path, offset)

    monkeypatch.setattr(streaming.InputIndex, "drop_below", index_only)
    found = fries_input_log_check.input_log_problem()
    assert found is not None and "still on disk" in found


def test_the_suites_contracts_check_runs_the_input_log_check(monkeypatch: pytest.MonkeyPatch) -> None:
    from conformance.fries.checks.contracts import run_contracts_check
    from conformance.core.results import SuiteResult

    monkeypatch.setattr(fries_input_log_check, "input_log_problem", lambda: "the planted problem")
    result = SuiteResult("fries", "spark", 0)
    assert run_contracts_check(result)
    assert "the planted problem" in result.failures[0].explanation


def test_a_stale_cached_layout_refreshed_only_at_its_end_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``index >= starts[-1]`` -> ``index == starts[-1]`` in
    ``BatchLogSource.get``: a worker whose cached layout predates the batches since reads a
    later tuple past the layout's end (an ``IndexError``) instead of refreshing it."""
    from support.source_rewrite import rewritten_method

    monkeypatch.setattr(streaming.BatchLogSource, "get", rewritten_method(streaming.BatchLogSource, "get",
                                                                 "if index >= starts[-1]:\n        starts, names",
                                                                 "if index == starts[-1]:\n        starts, names"))
    found = fries_input_log_check.input_log_problem()
    assert found is not None and "cannot be read: IndexError" in found
