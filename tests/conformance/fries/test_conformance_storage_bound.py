"""The Fries suite's storage oracle (conformance.fries.retention): record logs stay pruned.

Spark-free: the logs are written with spark_impl's own RecordLog, as the executor writes them."""

from __future__ import annotations

import os
from pathlib import Path
from dataclasses import replace

from spark_impl.records import RecordLog
from spark_impl.store import open_store

from conformance.fries.retention import KEEP, log_problem, retention_problem
from conformance.standin.spark import LocalSpark
from spark_impl.reconfig.api import scenario_job
from spark_impl.reconfig.driver import Executor
from spark_impl.reconfig.layout import request_name, save_request
from spark_impl.reconfig.retention import Retention
from spec.fries.scenario import scenario_from_json
from support.fries_chains import chain_json


def _append(root: Path, prefix: str, n: int, keep: int | None) -> None:
    log = RecordLog(open_store(str(root)), prefix)
    for i in range(n):
        log.append({"i": i}, keep=keep)


def test_pruned_logs_pass(tmp_path: Path) -> None:
    _append(tmp_path / "ckpt", "progress", 9, KEEP)
    _append(tmp_path / "ckpt", "control", 5, KEEP)
    _append(tmp_path / "q1" / "executor", "progress", 3, KEEP)
    assert log_problem(str(tmp_path)) is None


def test_a_crashed_drivers_records_are_pruned_by_the_next_one(tmp_path: Path) -> None:
    root = tmp_path / "ckpt"
    _append(root, "progress", 4, None)  # a driver that died before pruning
    assert log_problem(str(tmp_path)) is not None
    _append(root, "progress", 1, KEEP)  # the resumed driver's first commit lists and prunes
    assert log_problem(str(tmp_path)) is None


def test_a_leaking_log_is_named(tmp_path: Path) -> None:
    _append(tmp_path / "ckpt" / "checkpoint", "control", 3, None)
    problem = log_problem(str(tmp_path))
    assert problem is not None
    assert os.path.join("ckpt", "checkpoint", "control") in problem and "3 records" in problem


def test_other_files_and_directories_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "control").mkdir()
    for name in ("notes.txt", "a.rec", "00000000000000000001.rec.123.tmp"):
        (tmp_path / "control" / name).write_text("x")
    _append(tmp_path / "batches", "g0000001", 4, None)  # not a record log of the executor
    assert log_problem(str(tmp_path)) is None
    assert log_problem(str(tmp_path / "missing")) is None


def test_request_files_of_submitted_requests_are_judged(tmp_path: Path) -> None:
    """Failed before the fix (IndexError: ``job.planned[j - 1]``): the request-file part
    assumed every request was planned, so a run whose requests came through ``submit`` (the
    Structured Streaming front end's only way) could not be judged at all. Two submitted
    requests updating the same operator under ``Retention(1)``: only the second one's file
    stays, and a file the retention forgot is named."""
    full = scenario_job(scenario_from_json(chain_json(2, 24, at=2), "submitted"))
    request = full.planned[0].request
    ex = Executor(LocalSpark(), [replace(full, planned=())], "fries", str(tmp_path), partitions=2,
                  retention=Retention(1))
    for batch in range(40):
        if ex.done():
            break
        if batch in (1, 4):
            assert ex.submit(0, request) is None
        ex.step()
    assert ex.done() and sorted(ex.state[0].committed.delays) == [1, 2]
    assert retention_problem(ex, 1) is None
    assert not ex.store.exists(request_name(0, 1))
    save_request(str(tmp_path), 0, 1, request)  # as a retention that forgets it would leave it
    found = retention_problem(ex, 1)
    assert found is not None and "requests [1]" in found
