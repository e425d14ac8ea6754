"""The Fries suite's Spark-free source contracts (conformance.fries.checks.sources): DirectorySource in
name order, the streaming input log's tuples stable while it grows and after files are dropped."""

from __future__ import annotations

from typing import Any

import pytest

from conformance.fries.checks.sources import source_problem


def test_the_sources_keep_their_contract() -> None:
    assert source_problem() is None


def test_a_directory_listed_out_of_name_order_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_impl.reconfig import model

    original = model.DirectorySource._files

    def reversed_files(self: Any, refresh: bool) -> list[str]:
        return list(reversed(original(self, refresh)))

    monkeypatch.setattr(model.DirectorySource, "_files", reversed_files)
    problem = source_problem()
    assert problem is not None and problem.startswith("DirectorySource (files in name order): tuple 0")


def test_a_stale_input_log_layout_is_found(monkeypatch: pytest.MonkeyPatch) -> None:
    from spark_impl.reconfig import streaming

    original = streaming.BatchLogSource._layout

    def never_refreshed(self: Any, refresh: bool) -> tuple[list[int], list[str]]:
        return original(self, False)

    monkeypatch.setattr(streaming.BatchLogSource, "_layout", never_refreshed)
    problem = source_problem()
    assert problem is not None and "BatchLogSource (after batch 1)" in problem
