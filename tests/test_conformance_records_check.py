"""The durable-state part of the contracts check (``conformance.records_check``, issue 12
session 6): it passes on spark_impl's store and record log, and fails on the seed-8
campaign's two survivors there (a torn only record crashes the warning; a prefix deleted on a
URI store stays)."""

from __future__ import annotations

import inspect
import textwrap
from typing import Any

import pytest

import spark_impl.records as records
import spark_impl.store as store
from conformance.records_check import records_problem


def _method_mutant(module: Any, cls: type, name: str, old: str, new: str) -> Any:
    """Method ``cls.name`` compiled from its source with ``old`` replaced by ``new`` (once)."""
    source = textwrap.dedent(inspect.getsource(getattr(cls, name)))
    assert source.count(old) == 1, old
    namespace = dict(vars(module))
    exec(compile(source.replace(old, new), module.__file__ or "<mutant>", "exec"), namespace)  # noqa: S102
    return namespace[name]


def test_the_store_and_the_record_log_keep_their_contract() -> None:
    assert records_problem() is None


def test_a_torn_only_record_that_breaks_the_warning_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    mutant = _method_mutant(records, records.RecordLog, "_torn_newest", "if len(seqs) > 1 else", "if len(seqs) == 1 else")
    monkeypatch.setattr(records.RecordLog, "_torn_newest", mutant)
    with pytest.raises(IndexError):  # the check itself does not catch it: the contracts check reports a raise
        records_problem()


def test_a_prefix_left_behind_on_a_uri_store_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    mutant = _method_mutant(store, store.Store, "delete", "if kind == pafs.FileType.Directory:",
                            "if kind > pafs.FileType.Directory:")
    monkeypatch.setattr(store.Store, "delete", mutant)
    found = records_problem()
    assert found is not None and found.startswith("file store: delete left objects behind"), found
