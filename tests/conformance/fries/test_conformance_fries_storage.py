"""The Fries executor's storage promises without Spark (:mod:`conformance.fries.checks.storage`):
they hold on the executor, and each one-line bug of retention.py, api.py,
storage.py and objectstore.py (no Spark run of the suite sees them) is named."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from conformance.fries.checks import storage as fries_storage_check


def test_the_storage_check_passes_on_the_executor() -> None:
    assert fries_storage_check.storage_problem() is None


def _names(monkeypatch: pytest.MonkeyPatch, owner: Any, name: str, broken: Any, words: str) -> None:
    monkeypatch.setattr(owner, name, broken)
    found = fries_storage_check.storage_problem()
    assert found is not None and words in found, found


@pytest.mark.parametrize("old, new, words", [
    # the current driver's jobs-<digest>.pkl deleted on s3://...?region=...: its name keeps the query
    ('.partition("?")[0].rsplit("/", 1)[-1]', '.rsplit("/", 1)[-1]', "its jobs files are []"),
    # earlier drivers' jobs files never deleted on an object store
    ("if not ex.store.local", "if ex.store.local", "its jobs files are ['jobs-0000000000000000.pkl', "),
])
def test_a_retention_that_deletes_the_wrong_jobs_files_is_named(monkeypatch: pytest.MonkeyPatch, old: str, new: str,
                                                                words: str) -> None:
    """retention.py ``collect_garbage`` (the driver calls it by the name it imported)."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import driver, retention

    _names(monkeypatch, driver, "collect_garbage", rewritten_function(retention, "collect_garbage", old, new), words)


@pytest.mark.parametrize("old, new, words", [
    ("        if own:", "        if not own:", "holds nothing (the directory is gone)"),  # the caller's checkpoint deleted
    ("own = checkpoint_dir is None", "own = checkpoint_dir is not None", "that directory holds []"),  # a temp dir used
])
def test_run_scenarios_losing_or_ignoring_the_callers_checkpoint_is_named(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, old: str, new: str, words: str) -> None:
    """api.py ``run_scenarios``: a given ``checkpoint_dir`` is the run's and stays."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import api

    monkeypatch.chdir(tmp_path)  # the second broken function, called without a directory, would make ./None
    _names(monkeypatch, api, "run_scenarios", rewritten_function(api, "run_scenarios", old, new), words)


def test_run_scenarios_leaving_its_temporary_directory_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """api.py ``run_scenarios`` without ``checkpoint_dir``: its own directory is removed."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import api

    _names(monkeypatch, api, "run_scenarios",
           rewritten_function(api, "run_scenarios", "shutil.rmtree(directory, ignore_errors=True)", "pass"),
           "left its temporary directory ['streamproof-run-")


def test_a_task_file_read_without_its_framing_checked_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """storage.py ``read_task_file``: a damaged file unpickled as is (a flipped byte in a string
    still unpickles: altered state used silently)."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import storage

    _names(monkeypatch, storage, "read_task_file",
           rewritten_function(storage, "read_task_file", "pickle.loads(unframe(path, data))", "pickle.loads(data[HEADER:])"),
           "read_task_file of a task file with one payload byte flipped (inside a pickled string) returned TaskFile")


@pytest.mark.parametrize("name, old, new, words", [
    # a torn manifest makes committed_files / read_committed / deliver raise forever
    ("_read_json", "except (FileNotFoundError, OSError, ValueError)", "except (FileNotFoundError, OSError)",
     "raised JSONDecodeError"),
    # part files in listing order, not batch order
    ("committed_files", "sorted(infos, key=lambda i: str(i.path))", "infos",
     "files come in batch order"),
    # manifest names unpadded: string order 1 < 10 < 100 < 1000 < 9
    ("_manifest", ":020d", "", "lists the part files of batch ids [1, 1, 10, 10, 100, 100, 1000, 1000, 9, 9]"),
])
def test_object_store_manifests_misread_are_named(monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str,
                                                  words: str) -> None:
    """objectstore.py (the ``objstore`` path delivers each batch id once, in increasing order)."""
    from support.source_rewrite import rewritten_function

    from spark_impl.reconfig import objectstore

    _names(monkeypatch, objectstore, name, rewritten_function(objectstore, name, old, new), words)


def test_a_delivery_that_rewrites_a_committed_batch_id_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ObjectStoreSink.deliver`` of a committed batch id writes nothing (idempotent by batch id)."""
    from support.source_rewrite import rewritten_method

    from spark_impl.reconfig.objectstore import ObjectStoreSink

    _names(monkeypatch, ObjectStoreSink, "deliver", rewritten_method(ObjectStoreSink, "deliver", "is not None:",
                                                            "is not None and False:"),
           "after batch id 9, already committed, was delivered again with other rows")


def test_a_load_cache_keyed_by_size_alone_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Store.load`` keyed by the file's size alone: a plan or request rewritten with the same
    size would be served stale from the local cache."""
    from support.source_rewrite import rewritten_method

    from spark_impl import store

    monkeypatch.setattr(store.Store, "load", rewritten_method(store.Store, "load", "key: tuple[Any, ...] = (path, *stamp)",
                                                     "key: tuple[Any, ...] = (path, stamp[2])"))
    found = fries_storage_check.store_load_problem()
    assert found is not None and "never served stale" in found
