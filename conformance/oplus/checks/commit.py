"""The live O+ query's commit bookkeeping against its definition (no Spark).

The live O+ check (:mod:`conformance.oplus.engines.live`) judges the outputs, the emission rounds,
the request log and ``rescaled``; the rest of what a commit record and ``foreachBatch`` keep
is visible to a user (``status()``, ``batch_ms``, ``replayed``, the checkpoint's size) but was
never compared with anything, and the suite's live cases never send a late tuple. This check
drives the bookkeeping functions of :mod:`spark_impl.oplus.streaming` directly, on a checkpoint
in a temporary directory (``python -c`` speed):

* **commits** (:func:`~spark_impl.oplus.streaming.commit_batch`, :data:`COMMITS` batches of two
  jobs with drawn watermarks, late counts, outputs and rescale requests, some at a future
  watermark, some with none, some for the same job in one batch) against an independent model
  of the definition (``status()``'s docstring, docs/spark.md "O+ on a live stream"): ``ran`` is
  the previous record's ``parallelism``; a request is applied at the first batch whose job
  watermark is finite and reaches it (any finite one when it has none), in id order, so a later
  request of the same job in the same batch wins; ``rescales`` keeps the newest 8 rescales
  (:data:`HISTORY`, ``KEEP_RESCALES``) ``{request, job, batch, watermark, before, after}``;
  ``rescaled`` counts every one; ``late`` is the running sum of the batches' late tuples (a
  batch's summary lists only jobs with late tuples); ``applied`` keeps the applied ids still
  listed under ``requests/``; the request log then keeps the pending requests, the 8 newest
  applied ones (``KEEP_APPLIED``) and the newest id; the record read back from the checkpoint
  equals the one returned;
* **the durable form** of a record: a watermark or bound is written as an int, ``None`` for
  -inf and ``"inf"`` for +inf (``streaming_log.encode_time``'s docstring); a record with
  infinite and finite times reads back equal;
* **foreachBatch on a committed batch** (a replay after a crash; ``_Handler`` with the
  handover check's ``DoublingClock``: 2.0 then 4.0, so ``now % start`` is 0, not 2): nothing
  runs again, the batch id is listed in ``replayed`` and its wall time is recorded in milliseconds
  (2000.0) in ``batch_ms`` (empty before the process's first call), which keeps the last 1000
  calls (the oldest goes); a committed batch not yet delivered is delivered (no outputs: no
  Spark job) and recorded once, under its own id; a crash asked for ``after-delivery`` fails
  that call before the delivery is recorded, records no wall time, and the next call delivers
  it; then the checkpoint is pruned with the query's ``keep``; a batch after the last commit
  is run, not replayed, and so is the first batch of a checkpoint with no commit;
  ``deliver_pending`` delivers only the committed batches after the last delivered one (no
  outputs: no Spark job), every one of them, batch 0 included, when nothing was delivered yet
  (``delivered()`` is -1);
* **pruning** (:meth:`~spark_impl.oplus.streaming_log.Log.prune`, the module docstring's
  "Bounded storage"): commit records older than the last ``keep`` and already delivered are
  deleted, state parts of batches no retained commit names (an uncommitted newer batch's are
  kept, also when nothing is committed yet), outputs of delivered batches; objects not named
  ``b<digits>`` stay (``other``, ``x0001``, ``bz0001``); two ``delivered`` records are kept;
  batch ids use all 12 digits.
"""

from __future__ import annotations

import json
import math
import os
import random
import shutil
import tempfile
from typing import Any

from conformance.core.results import SuiteResult
from conformance.oplus.checks.handover import DoublingClock
from conformance.oplus.checks import append_check

#: Name of the check in the O+ suite.
CHECK = "spark-streaming O+ commit bookkeeping vs its definition (no Spark)"
#: Batches of the drawn commit sequence (enough to fill and slide both history windows).
COMMITS = 40
#: The history a commit record and ``requests/`` keep: "the last 8 rescales (``KEEP_RESCALES``)",
#: "the last 8 applied ones (``KEEP_APPLIED``)" (docs/spark.md, "O+ on a live stream": the
#: bounded-storage paragraph and ``run.status()``).
HISTORY = 8
#: Objects under ``state/`` and ``out/`` that are no batch's (``b<digits>``): prune keeps them.
FOREIGN = ("other", "x0001", "bz0001")


class _Query:
    def stop(self) -> None:
        pass


class _Ran(Exception):
    """Raised by :class:`_Fresh` when ``foreachBatch`` starts to run a batch."""


class _Fresh:
    """A micro-batch DataFrame that stops ``foreachBatch`` as soon as the batch is run."""

    @property
    def rdd(self) -> Any:
        raise _Ran


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


def commit_problems(root: str, seed: int) -> list[str]:
    """The commit sequence of the module docstring against the model."""
    from spark_impl.oplus.streaming import OplusStreamingRun, commit_batch
    from spark_impl.oplus.streaming_jobs import oplus_job
    from spark_impl.oplus.streaming_log import Commit, Log

    rng = random.Random(f"oplus-commits-{seed}")
    jobs = [oplus_job("sliding-sum", 2, 4, parallelism=2), oplus_job("wordcount", 1, 2, parallelism=3)]
    run = OplusStreamingRun(_Query(), jobs, Log(root))
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
        model["rescales"] = (model["rescales"] + _model_step(model, batch, marks))[-HISTORY:]
        model["late"] = {j: model["late"][j] + drawn[j] for j in marks}
        want = Commit(batch, ran, dict(model["parallelism"]), partitions, bounds, dict(marks), list(model["applied"]),
                      dict(model["late"]), outputs, list(model["rescales"]), dict(model["rescaled"]))
        if record != want:
            written, expected = record.to_json(), want.to_json()
            differ = {k: (written.get(k), v) for k, v in expected.items() if written.get(k) != v} or (record, want)
            return [f"batch {batch} of a drawn commit sequence (seed {seed}): commit_batch's record differs from the "
                    f"definition in (got, expected) {differ}"]
        stored = run.log.latest()
        if stored != want:
            return [f"batch {batch}: the commit record read back is {stored}, expected {want}"]
        done = [i for i in sorted(model["listed"]) if i in model["applied"]]
        newest = max(model["requests"], default=None)
        model["listed"] -= {i for i in done[:max(0, len(done) - HISTORY)] if i != newest}
        listed = sorted(int(r["id"]) for r in run.log.requests())
        if listed != sorted(model["listed"]):
            return [f"batch {batch}: the request log keeps the ids {listed}, expected {sorted(model['listed'])} "
                    f"(the pending ones, the {HISTORY} newest applied ones, the newest id)"]
        prev = record
    return []


def format_problems() -> list[str]:
    """The durable form of times and records (module docstring)."""
    from spark_impl.oplus.streaming_log import Commit, decode_time, encode_time

    found = []
    # 2**60 + 1: an event time above 2**53 (a float would round it), within MAX_TIME = 2**62
    for value, form in ((float("inf"), "inf"), (float("-inf"), None), (7.0, 7), (-3.0, -3), (0.0, 0),
                        (2**60 + 1, 2**60 + 1), (-(2**62) + 1, -(2**62) + 1)):
        try:
            written = encode_time(value)  # float("inf"): an infinity that is not math.inf's object
            read = decode_time(json.loads(json.dumps(written)))
        except (TypeError, ValueError, OverflowError) as error:
            found.append(f"the time {value} could not be written and read back: {type(error).__name__}: {error}")
            continue
        if written != form or type(written) is not type(form) or read != value:
            found.append(f"the time {value} is written as {written!r} and read back as {decode_time(written)}, "
                         f"expected {form!r}")
    record = Commit(12, {0: 2, 1: 1}, {0: 3, 1: 1}, 3, {(0, 0): 5.0, (0, 1): math.inf, (1, 0): -math.inf},
                    {0: 5.0, 1: -math.inf}, [4, 9], {0: 2, 1: 0}, 17,
                    [{"request": 9, "job": 0, "batch": 12, "watermark": 5, "before": 2, "after": 3}], {0: 4})
    back = Commit.from_json(json.loads(json.dumps(record.to_json())))
    if back != record:
        found.append(f"a commit record written and read back is {back}, expected {record}")
    return found


def handler_problems(root: str) -> list[str]:
    """``foreachBatch`` on committed batches (module docstring)."""
    import spark_impl.oplus.streaming as streaming
    from spark_impl.oplus.streaming import OplusStreamingRun, SimulatedCrash, _Handler
    from spark_impl.oplus.streaming_jobs import oplus_job
    from spark_impl.oplus.streaming_log import Commit, Log
    from spark_impl.oplus.streaming_sink import deliver_pending

    run = OplusStreamingRun(_Query(), [oplus_job("sliding-sum", 2, 4)], Log(root))
    handler = _Handler([run], None, None, frozenset(), 1)  # type: ignore[arg-type]  # no Spark, no sink reached
    found = []

    def call(batch: int, frame: Any = None) -> str | None:
        clock = getattr(streaming, "time")
        setattr(streaming, "time", DoublingClock())  # reads 2.0, then 4.0: 2 s
        try:
            handler(frame, batch)  # no DataFrame: a committed batch must not be run again
            return None
        except SimulatedCrash as crash:
            return str(crash)
        except _Ran:
            return "ran"
        except Exception as error:  # noqa: BLE001 - anything else is a finding
            found.append(f"foreachBatch on the committed batch {batch} raised {type(error).__name__}: {error}")
            return None
        finally:
            setattr(streaming, "time", clock)

    if call(0, frame=_Fresh()) != "ran" or run.replayed:
        found.append(f"the first batch of a checkpoint with no commit was not run (replayed {run.replayed})")
    for batch in (5000, 5001):
        run.log.write_commit(Commit(batch, {0: 1}, {0: 1}, 1, watermark={0: 7.0}))
    run.log.mark_delivered(5000)
    call(5000)
    if run.replayed != [5000] or run.batch_ms != {5000: 2000.0}:
        found.append(f"the committed batch 5000 replayed in 2 s (the process's first call) left replayed "
                     f"{run.replayed}, batch_ms {run.batch_ms} (expected [5000], {{5000: 2000.0}})")
    if run.log.delivered() != 5001 or run.log.committed() != [5001]:
        found.append(f"after the replay of batch 5000 the delivered batch is {run.log.delivered()} and the commits "
                     f"kept {run.log.committed()} (expected 5001: committed, not yet delivered; keep=1: [5001])")
    run.batch_ms = {b: 1.0 for b in range(1000)}
    call(5001)
    if len(run.batch_ms) != 1000 or 0 in run.batch_ms or run.batch_ms.get(5001) != 2000.0:
        found.append(f"batch 5001 replayed in 2 s after 1000 earlier calls left {len(run.batch_ms)} wall times, "
                     f"the oldest {min(run.batch_ms) if run.batch_ms else None}, its own {run.batch_ms.get(5001)} ms "
                     "(expected 1000, 1, 2000.0: the last 1000 calls)")
    run.log.write_commit(Commit(5002, {0: 1}, {0: 1}, 1, watermark={0: 8.0}))
    run.crash_at("after-delivery")
    crashed = call(5002)
    if crashed is None or run.log.delivered() != 5001 or 5002 in run.batch_ms:
        found.append(f"a crash asked for after the delivery of batch 5002: {crashed or 'no crash'}, delivered "
                     f"{run.log.delivered()}, wall time {run.batch_ms.get(5002)} (expected a crash, 5001, none)")
    call(5002)
    if (run.log.delivered(), run.replayed, run.batch_ms.get(5002)) != (5002, [5000, 5001, 5002, 5002], 2000.0):
        found.append(f"the call after the crash left delivered {run.log.delivered()}, replayed {run.replayed}, "
                     f"wall time {run.batch_ms.get(5002)} (expected 5002, [5000, 5001, 5002, 5002], 2000.0)")
    if call(5003, frame=_Fresh()) != "ran" or run.replayed[-1] != 5002:
        found.append(f"batch 5003 after the commit of 5002 was not run (replayed {run.replayed})")
    for name, committed, marked, want in (("fresh", [0, 1], [], [0, 1]), ("behind", [3, 4, 5], [4], [5])):
        log = Log(os.path.join(root, name))
        for batch in committed:
            log.write_commit(Commit(batch, {0: 1}, {0: 1}, 1, watermark={0: 9.0}))
        before = log.delivered()
        for batch in marked:
            log.mark_delivered(batch)
        sent = deliver_pending(None, log, None)  # type: ignore[arg-type]  # no outputs: no Spark, no sink
        if before != -1 or sent != want or log.delivered() != want[-1]:
            found.append(f"deliver_pending with batches {committed} committed and {marked or 'none'} delivered "
                         f"delivered {sent}, then the last delivered is {log.delivered()} (expected {want}: only "
                         f"what the delivered log is behind; -1 before any delivery, was {before})")
    return found


def prune_problems(root: str) -> list[str]:
    """:meth:`Log.prune` against the module docstring: ``keep`` 2 and 1 (the second with batch
    ids above 10**11, all 12 digits of a part's name), and a checkpoint with no commit yet."""
    from spark_impl.oplus.streaming_log import Commit, Log, write_part
    from spark_impl.records import write_pickle_record

    found = []
    for keep, delivered, base, committed in ((2, 6, 0, 10), (1, 9, 10**11, 10), (2, -1, 0, 0)):
        log = Log(os.path.join(root, f"keep{keep}-{committed}"))
        for batch in range(committed):
            log.write_commit(Commit(base + batch, {0: 1}, {0: 1}, 1))
        for batch in range(committed + 1):  # the last: written by a round, not committed yet
            for kind in ("state", "out"):
                write_part(log.location, kind, base + batch, 0, [batch])
        for kind in ("state", "out"):
            for other in FOREIGN:
                write_pickle_record(log.store, f"{kind}/{other}/p00000.pkl", [0])
        marks = [b for b in (delivered - 2, delivered - 1, delivered) if b >= 0]
        for batch in marks:
            log.mark_delivered(base + batch)
        try:
            log.prune(keep)
        except Exception as error:  # noqa: BLE001 - a crash is a finding
            found.append(f"prune(keep={keep}) raised {type(error).__name__}: {error}")
            continue
        kept = sorted(set(range(max(0, committed - keep), committed)) | set(range(delivered + 1, committed)))
        want = {"commits": kept, "state": kept + [committed], "out": list(range(delivered + 1, committed + 1))}
        got = {"commits": [b - base for b in log.committed()]}
        for kind in ("state", "out"):
            names = log.store.list(kind)
            got[kind] = sorted(int(n[1:]) - base for n in names if n not in FOREIGN)
            if not set(FOREIGN) <= set(names):
                found.append(f"prune(keep={keep}) deleted some of {kind}/{FOREIGN} (not a batch's objects)")
        if got != want or len(log.deliveries.sequences()) != min(2, len(marks)):
            found.append(f"prune(keep={keep}) with batches {base}+0..{committed - 1} committed, up to {delivered} "
                         f"delivered and batch {committed}'s parts written kept {got} and "
                         f"{len(log.deliveries.sequences())} delivered records, expected {want} and "
                         f"{min(2, len(marks))}")
    return found


def check(seed: int) -> list[str]:
    """Every problem of the module docstring's contracts (empty: all kept)."""
    root = tempfile.mkdtemp(prefix="streamproof-oplus-commits-")
    try:
        parts = [os.path.join(root, n) for n in ("commits", "handler", "prune")]
        return (commit_problems(parts[0], seed) + format_problems() + handler_problems(parts[1])
                + prune_problems(parts[2]))
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_check(result: SuiteResult, seed: int) -> None:
    """Append the check (a failure reports the first five problems) to ``result``."""
    append_check(result, CHECK, 4, lambda: check(seed))
