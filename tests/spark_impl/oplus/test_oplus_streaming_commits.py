"""A live O+ query's commit bookkeeping (``spark_impl.oplus.streaming``), without Spark.

* **commits** (:func:`~spark_impl.oplus.streaming.commit_batch`; ``status()``'s docstring,
  docs/spark.md "O+ on a live stream"), batch after batch of two jobs with drawn watermarks,
  late counts, outputs and rescale requests (some at a future watermark, some with none, some
  for the same job in one batch), against an independent model of the definition: ``ran`` is
  the previous record's ``parallelism``; a request is applied at the first batch whose job
  watermark is finite and reaches it (any finite one when it has none), in id order, so a later
  request of the same job in the same batch wins; ``rescales`` keeps the newest
  ``KEEP_RESCALES`` rescales ``{request, job, batch, watermark, before, after}``; ``rescaled``
  counts every one; ``late`` is the running sum of the batches' late tuples; ``applied`` keeps
  the applied ids still listed under ``requests/``; the request log then keeps the pending
  requests, the ``KEEP_APPLIED`` newest applied ones and the newest id
  (:func:`~spark_impl.oplus.streaming.compact_requests`); the record read back from the
  checkpoint equals the one returned;
* **foreachBatch on a committed batch** (a replay after a crash, on the stand-in stream):
  nothing runs again, the batch id is listed in ``replayed``, its wall time (the time between
  the handler's two clock readings) is recorded in milliseconds in ``batch_ms``, which keeps
  the last 1000 calls; a committed batch not yet delivered is delivered and recorded once; a
  crash asked for ``after-delivery`` fails that call before the delivery is recorded and records
  no wall time, the next call delivers it; a batch after the last commit is run, not replayed,
  and so is the first batch of a checkpoint with no commit;
* ``deliver_pending`` (``spark_impl.oplus.streaming_sink``): "every committed batch after the
  last delivered one, in order" - batch 0 included when nothing was delivered yet
  (``delivered()`` is -1).
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import pytest

import spark_impl.oplus.streaming as streaming
from spark_impl.oplus.streaming import (
    KEEP_APPLIED, KEEP_RESCALES, OplusStreamingRun, SimulatedCrash, commit_batch, compact_requests,
    start_oplus_query,
)
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit, Log
from spark_impl.oplus.streaming_sink import deliver_pending

from conformance.standin.streaming import Query, Stream

COMMITS = 40
"""Batches of a drawn commit sequence (enough to fill and slide both history windows)."""


def _model_step(model: dict[str, Any], batch: int, watermark: dict[int, float]) -> list[dict[str, Any]]:
    """Apply the definition's request rule to ``model`` for one batch; the rescales it made."""
    made = []
    for ident in sorted(model["listed"]):
        job, size, wanted = model["requests"][ident]
        at = watermark[job]
        if ident in model["applied"] or math.isinf(at) or (wanted is not None and at < wanted):
            continue
        made.append({"request": ident, "job": job, "batch": batch, "watermark": int(at),
                     "before": model["parallelism"][job], "after": size})
        model["parallelism"][job] = size
        model["rescaled"][job] = model["rescaled"].get(job, 0) + 1
        model["applied"].append(ident)
    return made


@pytest.mark.parametrize("seed", range(4))
def test_every_commit_record_and_the_request_log_follow_the_definition(tmp_path: Path, seed: int) -> None:
    rng = random.Random(f"oplus-commits-{seed}")
    jobs = [oplus_job("sliding-sum", 2, 4, parallelism=2), oplus_job("wordcount", 1, 2, parallelism=3)]
    run = OplusStreamingRun(Query(), jobs, Log(str(tmp_path)))
    sizes = {0: 2, 1: 3}
    prev = Commit(-1, dict(sizes), dict(sizes), 0, watermark={0: -math.inf, 1: -math.inf})
    model: dict[str, Any] = {"parallelism": dict(sizes), "rescaled": {}, "applied": [], "requests": {},
                             "listed": set(), "late": {0: 0, 1: 0}, "rescales": []}
    marks = {0: -math.inf, 1: -math.inf}
    for batch in range(COMMITS):
        for _ in range(rng.choice((0, 0, 1, 2, 3))):
            job, size = rng.randrange(2), rng.randint(1, 5)
            wanted = rng.choice((None, int(max(marks[job], 0)) + rng.randint(-3, 12)))
            ident = run.rescale(size, job=job, watermark=wanted)
            model["requests"][ident] = (job, size, wanted)
            model["listed"].add(ident)
        for job in marks:
            if batch == COMMITS - 1:
                marks[job] = math.inf
            elif batch >= 2 + job and rng.random() < 0.8:
                marks[job] = max(marks[job], 0) + rng.randint(0, 4)
        drawn = {j: rng.choice((0, 0, 1, 3)) for j in marks}
        late = {j: n for j, n in drawn.items() if n or rng.random() < 0.5}  # a summary lists jobs with late tuples
        bounds = {(j, 0): marks[j] for j in marks}
        partitions, outputs = rng.randint(1, 5), rng.randint(0, 9)
        record = commit_batch(run, prev, Commit(batch, {}, {}, partitions, dict(bounds), dict(marks), late=late,
                                                outputs=outputs))
        model["applied"] = [i for i in model["applied"] if i in model["listed"]]
        ran = dict(model["parallelism"])
        model["rescales"] = (model["rescales"] + _model_step(model, batch, marks))[-KEEP_RESCALES:]
        model["late"] = {j: model["late"][j] + drawn[j] for j in marks}
        want = Commit(batch, ran, dict(model["parallelism"]), partitions, bounds, dict(marks), list(model["applied"]),
                      dict(model["late"]), outputs, list(model["rescales"]), dict(model["rescaled"]))
        assert record.to_json() == want.to_json(), batch
        assert record == want and run.log.latest() == want, batch
        done = [i for i in sorted(model["listed"]) if i in model["applied"]]
        newest = max(model["requests"], default=None)
        model["listed"] -= {i for i in done[:max(0, len(done) - KEEP_APPLIED)] if i != newest}
        assert sorted(int(r["id"]) for r in run.log.requests()) == sorted(model["listed"]), batch
        prev = record
    assert sum(model["rescaled"].values()) > KEEP_RESCALES  # the history windows filled and slid


@pytest.mark.parametrize("issued, applied", [(5, [0, 1, 2]), (5, [0, 1, 2, 3, 4]), (14, list(range(12))),
                                             (14, list(range(2, 14)))])
def test_compaction_keeps_the_pending_requests_and_the_newest_applied_ones(tmp_path: Path, issued: int,
                                                                          applied: list[int]) -> None:
    run = OplusStreamingRun(Query(), [oplus_job("sliding-sum", 2, 4)], Log(str(tmp_path)))
    idents = [run.log.add_request(0, 2, None) for _ in range(issued)]
    done = [idents[i] for i in applied]
    compact_requests(run, Commit(0, {0: 1}, {0: 2}, 1, applied=done))
    kept = sorted(int(r["id"]) for r in run.log.requests())
    pending = [i for i in idents if i not in done]
    newest_applied = done[-KEEP_APPLIED:]
    assert kept == sorted(set(pending) | set(newest_applied) | {idents[-1]})


class _Clock:
    """The handler's ``time`` module for one call: ``perf_counter`` reads 1.0, then 3.0 (2 s)."""

    def __init__(self) -> None:
        self.readings = iter((1.0, 3.0))

    def perf_counter(self) -> float:
        return next(self.readings)


class _Ran(Exception):
    """Raised by :class:`_Fresh` when ``foreachBatch`` starts to run a batch."""


class _Fresh:
    """A micro-batch DataFrame that stops ``foreachBatch`` as soon as the batch is run."""

    @property
    def rdd(self) -> Any:
        raise _Ran


def _call(handler: Any, monkeypatch: pytest.MonkeyPatch, batch: int, frame: Any = None) -> str | None:
    """``foreachBatch(frame, batch)`` timed 2 s: None, ``"ran"`` or the simulated crash."""
    monkeypatch.setattr(streaming, "time", _Clock())
    try:
        handler(frame, batch)  # no DataFrame: a committed batch must not be run again
        return None
    except SimulatedCrash as crash:
        return str(crash)
    except _Ran:
        return "ran"


def test_foreach_batch_replays_committed_batches_and_delivers_what_is_behind(tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    stream = Stream()
    run = start_oplus_query(None, stream, [oplus_job("sliding-sum", 2, 4)], checkpoint_dir=str(tmp_path), keep=1,
                            sink=None)  # type: ignore[arg-type]  # no outputs: the sink is never reached
    handler = stream.handler
    assert _call(handler, monkeypatch, 0, _Fresh()) == "ran" and run.replayed == []  # no commit yet: run
    for batch in (5000, 5001):
        run.log.write_commit(Commit(batch, {0: 1}, {0: 1}, 1, watermark={0: 7.0}))
    run.log.mark_delivered(5000)
    assert _call(handler, monkeypatch, 5000) is None
    assert run.replayed == [5000] and run.batch_ms == {5000: 2000.0}
    assert run.log.delivered() == 5001 and run.log.committed() == [5001]  # delivered, then pruned (keep=1)
    run.batch_ms = {b: 1.0 for b in range(1000)}
    _call(handler, monkeypatch, 5001)
    assert len(run.batch_ms) == 1000 and 0 not in run.batch_ms and run.batch_ms[5001] == 2000.0  # the last 1000
    run.log.write_commit(Commit(5002, {0: 1}, {0: 1}, 1, watermark={0: 8.0}))
    run.crash_at("after-delivery")
    assert _call(handler, monkeypatch, 5002) is not None
    assert run.log.delivered() == 5001 and 5002 not in run.batch_ms
    _call(handler, monkeypatch, 5002)
    assert (run.log.delivered(), run.replayed, run.batch_ms.get(5002)) == (5002, [5000, 5001, 5002, 5002], 2000.0)
    assert _call(handler, monkeypatch, 5003, _Fresh()) == "ran" and run.replayed[-1] == 5002


@pytest.mark.parametrize("committed, marked, want", [([0, 1], [], [0, 1]), ([3, 4, 5], [4], [5])],
                         ids=["nothing delivered yet", "behind by one"])
def test_deliver_pending_delivers_every_committed_batch_after_the_last_delivered(
        tmp_path: Path, committed: list[int], marked: list[int], want: list[int]) -> None:
    log = Log(str(tmp_path))
    for batch in committed:
        log.write_commit(Commit(batch, {0: 1}, {0: 1}, 1, watermark={0: 9.0}))
    assert log.delivered() == -1
    for batch in marked:
        log.mark_delivered(batch)
    assert deliver_pending(None, log, None) == want  # type: ignore[arg-type]  # no outputs: no Spark, no sink
    assert log.delivered() == want[-1]
