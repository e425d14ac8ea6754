"""The Fries Structured Streaming front end (:mod:`spark_impl.reconfig.streaming`), handler by
handler without Spark (``support.fries_streaming_front``), against four promises of its
docstrings and docs/spark.md that a Spark run with the suite's settings cannot show broken:

1. **stop** (``StreamingRun.stop``): "a batch running now finishes (the executor and Structured
   Streaming commit it); one that starts afterwards raises :class:`StreamStopped` before doing
   anything (not committed: replayed after a restart)";
2. **sink and retention** (``start_query``): "``sink`` receives the committed outputs; ``retention``
   bounds the executor's storage and the input log" (docs/spark.md: "``start_query(...,
   sink=..., retention=...)`` passes both to the executor");
3. **settle** (the module docstring, step 2): the driver steps the executor until it ingested
   every indexed tuple and - bounded by ``settle_steps`` (4 by default) - until no
   reconfiguration request is in progress;
4. **bookkeeping** (``StreamingRun``): "``batches``: Structured Streaming batch id -> executor
   batches run for it; ``batch_ms``: batch id -> wall time of its ``foreachBatch`` call (...
   the last :data:`REMEMBERED` batches)", checked on a stand-in clock that moves only in
   executor steps.

Each ``*_problem`` helper names the first broken promise of its part (None: all hold).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from support.fries_streaming_front import Front, Hold

from conformance.fries.retention import retention_problem
from spark_impl.reconfig import streaming
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.sinks import CallbackSink
from spark_impl.reconfig.streaming import REMEMBERED, StreamStopped

PER_BATCH = 3
"""Tuples of one Structured Streaming batch."""

SETTLE_STEPS = 4
"""``start_query``'s documented default ``settle_steps`` (docs/spark.md: "``settle_steps`` (4)")."""

STEP_S = 0.25
"""Seconds the stand-in clock moves in every executor step (exact in binary floating point)."""


class _Clock:
    """Stand-in for streaming's ``time`` module: time passes only in executor steps
    (:meth:`advance`), so a ``foreachBatch`` call's wall time is known exactly."""

    def __init__(self) -> None:
        self.elapsed = 0.0

    def advance(self, seconds: float) -> None:
        self.elapsed += seconds

    def perf_counter(self) -> float:
        return 50.0 + self.elapsed

    def monotonic(self) -> float:
        return 50.0 + self.elapsed

    def time(self) -> float:  # a different epoch: a wall time mixing the two clocks is wrong
        return 1.7e9 + self.elapsed

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)


class _Steps(Hold):
    """A ``StepHook``: :class:`Hold`'s FCM clock, plus ``executor.g`` of every step made and
    the stand-in clock moved by :data:`STEP_S` in each."""

    def __init__(self, clock: _Clock | None = None) -> None:
        super().__init__()
        self.clock = clock
        self.made: list[int] = []

    def before(self, executor: Any) -> None:
        self.made.append(int(executor.g))
        if self.clock is not None:
            self.clock.advance(STEP_S)
        super().before(executor)


class _Table:
    """A ``CallbackSink`` function: the last write of every batch id (``foreachBatch``'s
    contract) and the number of calls."""

    def __init__(self) -> None:
        self.latest: dict[int, list[tuple[Any, ...]]] = {}
        self.calls = 0

    def __call__(self, df: Any, batch_id: int) -> None:
        self.calls += 1
        self.latest[batch_id] = [tuple(row) for row in df.collect()]

    def outputs(self) -> Counter[tuple[str, str]]:
        """(operator, txn) of every row of the table."""
        return Counter((str(row[2]), str(row[3])) for rows in self.latest.values() for row in rows)


def _input_log(front: Front) -> tuple[str, list[str]]:
    """The input log as it stands: index text and file names."""
    path = front.run.source.path
    index = os.path.join(path, "index.json")
    text = ""
    if os.path.exists(index):
        with open(index, encoding="utf-8") as handle:
            text = handle.read()
    return text, sorted(os.listdir(path))


def _stop_problem(directory: str) -> str | None:
    """Promise 1: a batch that starts after ``stop()`` raises ``StreamStopped`` and changes
    nothing; a restart runs it."""
    front = Front(directory, 2 * PER_BATCH, PER_BATCH)
    run = front.start()
    front.batch(0, 0, PER_BATCH)
    run.stop()
    if run.query.isActive:
        return "after StreamingRun.stop() the Structured Streaming query is still active (stop() stops the query)"
    ex = run.executor
    before = (_input_log(front), ex.state[0].live.offset, ex.state[0].committed.offset, ex.g, dict(run.batches))
    try:
        front.batch(1, PER_BATCH, PER_BATCH)
        outcome = "returned normally: Structured Streaming commits that batch"
    except StreamStopped:
        outcome = None
    except Exception as error:  # noqa: BLE001 - anything but StreamStopped is the finding
        outcome = f"raised {type(error).__name__}: {error} instead of StreamStopped"
    after = (_input_log(front), ex.state[0].live.offset, ex.state[0].committed.offset, ex.g, dict(run.batches))
    if outcome is not None:
        return (f"Structured Streaming batch 1 ({PER_BATCH} tuples) started after StreamingRun.stop(), and its "
                f"foreachBatch handler {outcome}; the input log counts {run.source.count()} tuples, "
                f"{2 * PER_BATCH} landed (streaming.py: a batch that starts after stop() raises StreamStopped, so "
                "it is not committed and a restart replays it; else its tuples are lost)")
    if after != before:
        names = ("the input log (index, files)", "the live offset", "the committed offset", "the executor's batch number",
                 "StreamingRun.batches")
        changed = [name for name, b, a in zip(names, before, after) if a != b]
        return (f"Structured Streaming batch 1 started after stop() raised StreamStopped but changed "
                f"{', '.join(changed)} (it must raise before doing anything)")
    run = front.start()  # the restart: Structured Streaming runs batch 1 again
    front.batch(1, PER_BATCH, PER_BATCH)
    st = run.executor.state[0]
    if run.source.count() != 2 * PER_BATCH or st.live.offset != 2 * PER_BATCH or run.replayed:
        return (f"after a restart, Structured Streaming batch 1 (stopped before it did anything) left the input log "
                f"with {run.source.count()} tuples, the executor at offset {st.live.offset}, replayed "
                f"{run.replayed} (expected {2 * PER_BATCH}, {2 * PER_BATCH}, []: it runs as a new batch)")
    return None


def _sink_retention_problem(directory: str) -> str | None:
    """Promise 2: ``start_query``'s ``sink`` receives the committed outputs exactly once and its
    ``retention`` bounds the executor's storage."""
    batches = 4
    front = Front(directory, batches * PER_BATCH, PER_BATCH)
    table = _Table()
    sink = CallbackSink(table, key_type="long", value_type="long")
    retention = Retention(batches=1)
    run = front.start(sink=sink, retention=retention)
    last = front.job.dataflow.names[-1]
    for b in range(batches):
        front.batch(b, b * PER_BATCH, PER_BATCH)
        committed = run.executor.state[0].committed.offset
        want = Counter((last, f"S:{i}") for i in range(committed))
        got = table.outputs()
        if got != want:
            extra, missing = sorted(got - want), sorted(want - got)
            return (f"after Structured Streaming batch {b} (committed offset {committed}) the sink passed to "
                    f"start_query got {table.calls} deliveries; its table has {sum((got - want).values())} rows too "
                    f"many (e.g. {extra[:2]}) and lacks {sum((want - got).values())} (e.g. {missing[:2]}): the sink "
                    f"receives every committed output of {last} exactly once")
    ex = run.executor
    found = retention_problem(ex, retention.batches)
    if found is not None:
        return f"start_query(retention=Retention(batches={retention.batches})): {found}"
    if ex.sink is not sink or ex.retention is not retention:
        return (f"start_query(sink=..., retention=...) left the executor with sink {type(ex.sink).__name__} and "
                f"retention {ex.retention}: start_query passes both to the executor (the ones given)")
    return None


def _settle_problem(directory: str, monkeypatch: pytest.MonkeyPatch) -> str | None:
    """Promises 3 and 4 (``batches``, ``batch_ms``): the scenario of the module docstring, with
    ``start_query``'s defaults and streaming's clock replaced."""
    clock = _Clock()
    hook = _Steps(clock)
    front = Front(directory, 4 * PER_BATCH, PER_BATCH)
    monkeypatch.setattr(streaming, "time", clock)
    run = front.start(hook)

    def batch(b: int, count: int, what: str, low: int, high: int) -> str | None:
        first = len(hook.made)
        offset = run.source.count()
        front.batch(b, offset, count)
        made = hook.made[first:]
        if not low <= len(made) <= high:
            want = f"exactly {low}" if low == high else f"{low} to {high}"
            return (f"Structured Streaming batch {b} ({count} new tuples, {what}) ran {len(made)} executor "
                    f"batches {made}, expected {want}: the handler steps the executor until it ingested every "
                    "indexed tuple (one executor batch by default) and then, while a request is in progress, "
                    f"at most settle_steps ({SETTLE_STEPS}, start_query's documented default) more")
        return _bookkeeping_problem(run, b, made)

    found = batch(0, PER_BATCH, "no request", 1, 1)
    if found is not None:
        return found
    answer = run.submit(front.request)
    if answer is not None:
        return f"a request was refused by StreamingRun.submit: {answer}"
    hook.holding = True
    found = (batch(1, PER_BATCH, "a request in progress, its FCMs held", 1 + SETTLE_STEPS, 1 + SETTLE_STEPS)
             or batch(2, 0, "a request in progress, its FCMs held", SETTLE_STEPS, SETTLE_STEPS))
    if found is not None:
        return found
    if not run.in_progress():
        return "with the request's FCMs held, the request completed (the scenario tests nothing)"
    hook.holding = False
    found = batch(3, PER_BATCH, "a request in progress, its FCMs released", 1, 1 + SETTLE_STEPS)
    if found is not None:
        return found
    st = run.executor.state[0]
    if run.in_progress() or st.committed.offset != run.source.count():
        return (f"Structured Streaming batch 3 (the request's FCMs released) returned with a request in progress: "
                f"{run.in_progress()}, committed {st.committed.offset} of {run.source.count()} tuples: the "
                "settle steps complete the request and the executor commits before Structured Streaming does")
    return batch(4, PER_BATCH, "no request", 1, 1)


def _bookkeeping_problem(run: Any, b: int, made: list[int]) -> str | None:
    """Promise 4 for batch ``b``, whose executor steps made the batches ``made``."""
    if run.batches.get(b) != made:
        return (f"StreamingRun.batches[{b}] = {run.batches.get(b)}, but the executor batches run for Structured "
                f"Streaming batch {b} were {made} (executor.g before each step)")
    want = STEP_S * 1000.0 * len(made)
    if run.batch_ms.get(b) != want:
        return (f"StreamingRun.batch_ms[{b}] = {run.batch_ms.get(b)}, but its foreachBatch call took {want} ms "
                f"({len(made)} executor steps of {STEP_S * 1000.0:g} ms on streaming's clock): the wall time in ms")
    return None


def _remembered_problem(directory: str) -> str | None:
    """Promise 4: ``batches`` and ``batch_ms`` keep exactly the last ``REMEMBERED`` batches."""
    front = Front(directory, 3 * PER_BATCH, PER_BATCH)
    run = front.start()
    first = REMEMBERED - 1  # what REMEMBERED - 1 earlier calls of this process left
    run.batches.update({b: [] for b in range(first)})
    run.batch_ms.update({b: 0.0 for b in range(first)})
    for n, b in enumerate(range(first, first + 3)):
        front.batch(b, n * PER_BATCH, PER_BATCH)
        want = list(range(max(0, b + 1 - REMEMBERED), b + 1))
        for name, table in (("batches", run.batches), ("batch_ms", run.batch_ms)):
            kept = list(table)
            if kept != want:
                return (f"after Structured Streaming batch {b} (the {b + 1}th of this process), StreamingRun.{name} "
                        f"keeps {len(kept)} batches ({kept[0] if kept else None}..{kept[-1] if kept else None}); it "
                        f"keeps the last REMEMBERED ({REMEMBERED}): {want[0]}..{want[-1]}")
    return None


def test_a_batch_that_starts_after_stop_raises_stream_stopped_and_changes_nothing(tmp_path: Path) -> None:
    assert _stop_problem(str(tmp_path)) is None


def test_start_query_passes_its_sink_and_retention_to_the_executor(tmp_path: Path) -> None:
    assert _sink_retention_problem(str(tmp_path)) is None


def test_the_handler_settles_at_most_settle_steps_and_records_batches_and_wall_time(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _settle_problem(str(tmp_path), monkeypatch) is None


def test_the_bookkeeping_keeps_the_last_remembered_batches(tmp_path: Path) -> None:
    assert _remembered_problem(str(tmp_path)) is None
