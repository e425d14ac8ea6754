"""The bounded-storage oracle (:func:`conformance.fries.retention.retention_problem`, docs/conformance.md
"Bounded storage") on hand-built checkpoint trees: a tree holding only what a job needs passes;
a history that grew, batches no job needs, or a request file no object can load again are named."""

from __future__ import annotations

import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from conformance.fries.retention import retention_problem
from spark_impl.reconfig.progress import Progress
from spark_impl.store import open_store
from spark_impl.reconfig.layout import request_name
from spark_impl.reconfig.sinks import SINK_STATE


def executor(root: Path, histories: list[list[int]], g: int, on_disk: list[int]) -> Any:
    for batch in on_disk:
        os.makedirs(root / "batches" / f"g{batch:07d}")
    state = [SimpleNamespace(committed=Progress(history=list(h)), live=Progress(history=list(h))) for h in histories]
    return SimpleNamespace(g=g, directory=str(root), store=open_store(str(root)), state=state)


def test_storage_holding_more_than_a_job_needs_is_named(tmp_path: Path) -> None:
    """Retention(1), no sink record (nothing delivered: every committed batch is undelivered, so
    kept); then the same with everything delivered."""
    ex = executor(tmp_path / "a", [[2, 4, 6], [5]], 7, [2, 4, 5, 6])
    assert retention_problem(ex, 1) is None
    from spark_impl.records import write_json_record  # noqa: PLC0415 - read when called: spark_impl.records.write_json_record is replaced at run time

    write_json_record(open_store(str(tmp_path / "b")), SINK_STATE, {"delivered": {"0": 6, "1": 5}})
    kept = executor(tmp_path / "b", [[6], [5]], 7, [5, 6])
    assert retention_problem(kept, 1) is None
    grown = executor(tmp_path / "b", [[2, 4, 6], [5]], 7, [])
    found = retention_problem(grown, 1)
    assert found is not None and "history still lists batches [2, 4]" in found
    leaked = executor(tmp_path / "b", [[6], [5]], 7, [1, 3])
    found = retention_problem(leaked, 1)
    assert found is not None and "holds batches [1, 3]" in found


def test_a_request_file_no_object_can_load_again_is_named(tmp_path: Path) -> None:
    """Request 1 updated A, request 3 updated A again, so
    request 1's file must be gone after the run; 2 (B's latest) and 3 stay."""
    store = open_store(str(tmp_path))
    planned = tuple(SimpleNamespace(request=SimpleNamespace(operators=frozenset(ops))) for ops in ("A", "B", "A"))
    committed = Progress(history=[5], delays={1: 5.0, 2: 3.0, 3: 1.0})
    ex = SimpleNamespace(g=6, directory=str(tmp_path), store=store,
                         state=[SimpleNamespace(committed=committed, live=committed, job=SimpleNamespace(planned=planned))])
    for j in (2, 3):
        store.write_once(request_name(0, j), b"x")
    assert retention_problem(ex, 1) is None
    store.write_once(request_name(0, 1), b"x")
    found = retention_problem(ex, 1)
    assert found is not None and "files of requests [1]" in found


