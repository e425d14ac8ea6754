"""The Fries suite's Spark-free checks fail on the bugs they target.

Spark-free: each check of :mod:`conformance.fries.checks.model`, :func:`conformance.fries.retention.retention_problem`
and :func:`conformance.fries.engines.live_query.whole_trigger_problem` passes on the executor as it is
and names the broken promise when a one-line bug (or a bug of its kind) is monkeypatched in.
"""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from conformance.fries.checks import model as model_check
from conformance.fries.engines.live_query import whole_trigger_problem
from conformance.fries.retention import retention_problem
from spark_impl.reconfig.progress import DelaySummary, Progress
from spark_impl.store import open_store


def test_the_model_check_passes_on_the_executor() -> None:
    assert model_check.model_problem() is None


def test_a_public_value_type_that_is_not_frozen_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """model.py ``@dataclass(frozen=True)`` -> ``frozen=False`` on ``Update`` (line 125)."""
    import spark_impl.reconfig as api

    @dataclasses.dataclass
    class Update:
        logic: Any
        transform: Any

    monkeypatch.setattr(api, "Update", Update)
    found = model_check.frozen_problem()
    assert found is not None and "Update.logic can be assigned" in found


@pytest.mark.parametrize(("biggest", "digits", "named"), [(min, 3, "max ms"), (max, 4, "whole microseconds")])
def test_a_delay_summary_that_loses_the_maximum_or_the_microseconds_is_named(
        monkeypatch: pytest.MonkeyPatch, biggest: Any, digits: int, named: str) -> None:
    """progress.py line 60: ``max(self.max_ms, delay_ms)`` -> ``min``, and ``round(..., 3)`` ->
    ``round(..., 4)``: no run of the suite folds a delay."""
    def add(self: DelaySummary, j: int, delay_ms: float) -> DelaySummary:
        return DelaySummary(self.count + 1, round(self.total_ms + delay_ms, digits), biggest(self.max_ms, delay_ms),
                            max(self.last, j))

    monkeypatch.setattr(DelaySummary, "add", add)
    found = model_check.delays_problem()
    assert found is not None and named in found


def test_a_fold_that_keeps_the_oldest_delays_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    def fold(self: Progress, keep: int) -> None:
        if len(self.delays) > keep:
            for j in sorted(self.delays)[keep:]:
                self.earlier = self.earlier.add(j, self.delays.pop(j))

    monkeypatch.setattr(Progress, "fold_delays", fold)
    found = model_check.delays_problem()
    assert found is not None and "the newest" in found


def test_a_retention_that_keeps_every_delivered_batch_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """retention.py line 69, ``g > undelivered_after`` -> ``g is not undelivered_after`` (no
    differential run sees it): every committed batch but the last delivered one is kept."""
    import spark_impl.reconfig.retention as retention

    def needed_by(prog: Progress, keep: int, undelivered_after: int | None) -> set[int]:
        needed = set(prog.pending) | set(prog.history[-keep:])
        if undelivered_after is not None:
            needed |= {g for g in prog.history if g is not undelivered_after}
        return needed

    monkeypatch.setattr(retention, "needed_by", needed_by)
    found = model_check.retention_problem()
    assert found is not None and "undelivered" in found


def test_a_retention_without_its_documented_defaults_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    import spark_impl.reconfig.retention as retention

    @dataclasses.dataclass(frozen=True)
    class Retention:
        batches: int = 1
        delays: int = 16

        def __post_init__(self) -> None:
            if self.batches < 1 or self.delays < 1:
                raise ValueError("no")

    monkeypatch.setattr(retention, "Retention", Retention)
    found = model_check.retention_problem()
    assert found is not None and "defaults" in found


def _executor(root: Path, histories: list[list[int]], g: int, on_disk: list[int]) -> Any:
    for batch in on_disk:
        os.makedirs(root / "batches" / f"g{batch:07d}")
    state = [SimpleNamespace(committed=Progress(history=list(h)), live=Progress(history=list(h))) for h in histories]
    return SimpleNamespace(g=g, directory=str(root), store=open_store(str(root)), state=state)


def test_storage_after_a_run_holds_only_what_a_job_needs(tmp_path: Path) -> None:
    """Retention(1), no sink record (nothing delivered: every committed batch is undelivered, so
    kept); then the same with everything delivered."""
    ex = _executor(tmp_path / "a", [[2, 4, 6], [5]], 7, [2, 4, 5, 6])
    assert retention_problem(ex, 1) is None
    from spark_impl.reconfig.sinks import SINK_STATE
    from spark_impl.records import write_json_record

    write_json_record(open_store(str(tmp_path / "b")), SINK_STATE, {"delivered": {"0": 6, "1": 5}})
    kept = _executor(tmp_path / "b", [[6], [5]], 7, [5, 6])
    assert retention_problem(kept, 1) is None
    grown = _executor(tmp_path / "b", [[2, 4, 6], [5]], 7, [])
    found = retention_problem(grown, 1)
    assert found is not None and "history still lists batches [2, 4]" in found
    leaked = _executor(tmp_path / "b", [[6], [5]], 7, [1, 3])
    found = retention_problem(leaked, 1)
    assert found is not None and "holds batches [1, 3]" in found


def test_a_trigger_split_into_several_executor_batches_is_named() -> None:
    """streaming.py line 378, ``batch_size or (1 << 30)`` -> ``(1 & 30)`` (= 0: one tuple per batch)."""
    assert whole_trigger_problem(SimpleNamespace(batches={0: [3], 1: [4], 2: []})) is None
    found = whole_trigger_problem(SimpleNamespace(batches={0: [3], 1: [4, 5, 6]}))
    assert found is not None and "batch 1 ran as 3 executor batches" in found


def test_a_request_file_no_object_can_load_again_is_named(tmp_path: Path) -> None:
    """retention.py ``_collect_requests``: request 1 updated A, request 3 updated A again, so
    request 1's file must be gone after the run; 2 (B's latest) and 3 stay."""
    from spark_impl.reconfig.layout import request_name

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


def test_an_lru_that_accepts_no_room_or_evicts_the_newest_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """lru.py line 21, ``if maxsize < 1`` -> ``< 0``, and an LRU
    evicting the most recently used entry."""
    import spark_impl.lru as lru
    from spark_impl.lru import LRU

    class Roomless(LRU[Any, Any]):
        def __init__(self, maxsize: int) -> None:
            self.maxsize = maxsize
            from collections import OrderedDict

            self._items: Any = OrderedDict()

    monkeypatch.setattr(lru, "LRU", Roomless)
    found = model_check.lru_problem()
    assert found is not None and "LRU(0) was accepted" in found

    class Newest(LRU[Any, Any]):
        def put(self, key: Any, value: Any) -> None:
            while len(self._items) >= self.maxsize and key not in self._items:
                self._items.popitem(last=True)
            self._items[key] = value

    monkeypatch.setattr(lru, "LRU", Newest)
    assert model_check.lru_problem() is not None


def test_the_refusals_check_passes_and_names_a_fault_or_a_refusal_that_is_lost(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py line 80 (``scheduler == "fries" and "naive" in faults``: the seeded fault
    ``naive``, never injected by the default run) and streaming.py line 368 (planned requests
    refused by ``start_query``; the suite's queries never have any)."""
    from dataclasses import replace

    import spark_impl.reconfig as api
    import spark_impl.reconfig.streaming as streaming
    from conformance.fries.checks.refusals import refusal_problem

    assert refusal_problem() is None

    class NoNaive(api.Executor):
        def __init__(self, spark: Any, jobs: Any, scheduler: str, checkpoint_dir: str, **options: Any) -> None:
            super().__init__(spark, jobs, scheduler, checkpoint_dir, **options)
            self.scheduler = scheduler

    monkeypatch.setattr(api, "Executor", NoNaive)
    found = refusal_problem()
    assert found is not None and "runs the 'fries' scheduler, not 'naive'" in found
    monkeypatch.undo()

    original = streaming.start_query

    def lenient(spark: Any, job: Any, source: Any, **options: Any) -> Any:
        return original(spark, replace(job, planned=()), source, **options)

    monkeypatch.setattr(streaming, "start_query", lenient)
    found = refusal_problem()
    assert found is not None and "planned requests" in found


def test_object_store_columns_of_another_type_or_a_refusal_lost_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """objectstore.py ``fields_of`` for non-Fries DataFrames (the DGS / O+ live sinks'; the
    suite's ``objstore`` case delivers Fries rows only)."""
    import spark_impl.reconfig.objectstore as objectstore

    assert model_check.object_store_columns_problem() is None
    monkeypatch.setitem(objectstore._SPARK_ARROW, "float", "float64")
    found = model_check.object_store_columns_problem()
    assert found is not None and "Spark types" in found
    monkeypatch.undo()
    monkeypatch.setitem(objectstore._SPARK_ARROW, "map<string,int>", "string")
    found = model_check.object_store_columns_problem()
    assert found is not None and "map column" in found


def test_a_request_made_without_or_before_its_batchs_task_start_is_named(tmp_path: Path) -> None:
    """task.py line 122, ``if self.plan.announce:`` -> ``if not ...``: the batch that makes a request marks no task start, so the driver's wait times
    out and the request lands after the batch's tuples - a legal run, but the mid-batch race
    the suite relies on is gone."""
    from conformance.fries.engines.stepped import Releases
    from spark_impl.reconfig.task import started_name

    store = open_store(str(tmp_path))
    active = SimpleNamespace(j=1, user=False, epoch_batch=4, issued=1000.0)
    ex = SimpleNamespace(g=4, partitions=2, store=store, state=[SimpleNamespace(live=SimpleNamespace(active=active))])
    releases = Releases()
    releases.announced(ex, {})
    assert "no task of that batch marked its start" in releases.problems[0]
    store.write_once(started_name(3, 1, 1), b"")
    marker = store.path(started_name(3, 1, 1))
    os.utime(marker, (999.0, 999.0))
    releases = Releases()
    releases.announced(ex, {})
    assert releases.problems == {}
    os.utime(marker, (1001.0, 1001.0))
    releases.announced(ex, {})
    assert "before the first task of its batch 3 started" in releases.problems[0]


def test_the_executor_refuses_an_operator_without_workers(tmp_path: Path) -> None:
    """Regression: ``Executor`` accepted ``parallelism={"A": 0}``; the job then had
    no object for ``A`` and its tasks crashed routing a key (``k mod 0``: ZeroDivisionError, an
    internal error instead of bad input). (With the refusal, ``model.py``
    ``workers == 1`` -> ``workers <= 1`` is equivalent.)"""
    from spark_impl.reconfig import Executor, ListSource, UserOperator, user_job
    from spec.errors import InputError
    from spec.fries.dataflow import Dataflow, Operator, OperatorKind

    flow = Dataflow((Operator("S", OperatorKind.SOURCE), Operator("A", OperatorKind.ONE_TO_ONE)), (("S", "A"),))
    job = user_job(flow, {"A": UserOperator(OperatorKind.ONE_TO_ONE, lambda state, key, value: (state, []))},
                   ListSource((("S", "S:0", 1, 1),)), parallelism={"A": 0})
    spark = SimpleNamespace(sparkContext=SimpleNamespace(getConf=lambda: {}, defaultParallelism=2))
    with pytest.raises(InputError, match="at least 1 worker"):
        Executor(spark, [job], "fries", str(tmp_path))


def test_batch_numbers_past_the_padding_are_named_when_misread(monkeypatch: pytest.MonkeyPatch) -> None:
    """storage.py line 84: ``batches_on`` misreading the
    directory names; the suite's runs never pass batch 10^6."""
    import spark_impl.reconfig.storage as storage

    assert model_check.batch_names_problem() is None
    monkeypatch.setattr(storage, "batches_on", lambda store: sorted(
        int(n[2:]) for n in store.list("batches") if n.startswith("g") and n[1:].isdigit()))
    found = model_check.batch_names_problem()
    assert found is not None and "batches_on lists" in found


def test_submit_rejections_that_name_the_wrong_request_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py 147 ``st.live.made + 1`` -> ``st.live.made ** 1``:
    a submit while a request is queued was rejected naming ``R0`` (the queued one is ``R1``)."""
    from support.source_rewrite import rewritten_method

    from conformance.fries.checks.refusals import refusal_problem
    from spark_impl.reconfig.driver import Executor

    assert refusal_problem() is None
    monkeypatch.setattr(Executor, "submit", rewritten_method(Executor, "submit", "else st.live.made + 1", "else st.live.made ** 1"))
    found = refusal_problem()
    assert found is not None and "while R1 is queued" in found and "R0" in found
