"""The ``sink`` path of :mod:`conformance.fries.engines.paths`: keys of any type, a real sink,
bounded storage and a driver crash between a delivery and its record (the sink, storage and retention modules).

Every case of the batch runs in one ``Executor`` with

* **keys of other types** (:mod:`spark_impl.keys`): the scenario's integer key ``k`` becomes,
  by ``k mod 3``, a string ``"k<k>.<i>"``, a nested tuple ``(b"k", (k, None), i)`` or a number
  ``k - 60`` (negative: an integer or an equal float, varying by tuple - the first tuple of
  every key an integer); in every other case (and the ``objstore`` case) keys 0 and 1 are
  ``False``/``True``, ``0``/``1`` or ``0.0``/``1.0`` instead (family ``boolish``). ``i`` is the first index whose :func:`~spark_impl.keys.stable_hash` routes like
  the integer (``stable_hash mod 60 == k mod 60``: every worker count and fan-out of the
  generators, 1-5), so the objects are the scenario's and the schedule is judged unchanged.
  The operators (:class:`KeyedLogic`) see the integer and emit encoded keys, so every record
  of the run carries a non-integer key (routed by ``stable_hash``) or a mix of equal numbers
  (routed alike, one state);
* a **sink**: a ``CallbackSink`` (the ``foreachBatch`` contract) whose function writes with a
  ``ParquetSink`` (dynamic partition overwrite by job and batch id);
* ``Retention(1)``: after each batch every batch no restart or delivery needs is deleted; after
  the run, a batch still on the store or in a job's history that nothing needs is a failure of
  every case (:func:`conformance.fries.retention.retention_problem`: a retention that
  keeps every batch loses nothing the other oracles see) - unless the crash fell in the last
  delivery and the resumed executor ran no batch (its collection runs after a batch);
* the **stepped clock** (:mod:`conformance.fries.engines.stepped`: heads released
  :data:`~conformance.fries.engines.stepped.GAP` batches apart), so a job's commits wait for several
  batches while its request's heads are released: batches pend behind one another, and the
  retention must keep them (a retention that forgets the pending batches loses their outputs
  at the commit); the harness's checks run after every batch (not for the ``objstore``
  variant, which keeps the case's own control-message timing);
* a **driver crash with a lost delivery mark**: the function raises right after the
  :data:`CRASH_AT`-th write (before ``sink.json`` records it and before the garbage
  collection); the run continues with ``Executor(resume=True)``, which must deliver the same
  batches again under the same batch id (the table keeps them once).

The outputs judged are read back **from the Parquet table** (keys decoded to the integers),
the states from the checkpoint; the schedule and senders are read from each batch's task
files while its delivery runs (afterwards the retention deletes them). So a sink that writes
twice, skips a batch, or a retention that deletes what a restart or a delivery still needs,
fails the same oracles as every other case.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, replace
from functools import lru_cache
from typing import Any, Sequence

from spec.fries.scenario import Scenario
from spec.fries.schedule import Operation, Schedule

import spark_impl.keys as spark_keys

from conformance.fries.engines.stepped import CommitWatch, Releases, stepped_job
from conformance.fries.outcome import PathFailure
from conformance.fries.retention import retention_problem
from spark_impl.reconfig import ListSource, PlannedRequest, Request, Update, scenario_job, Executor, collect_results
from spark_impl.reconfig.objectstore import ObjectStoreSink, read_committed
from spark_impl.reconfig.results import FileCache, traced_logs
from spark_impl.reconfig.retention import Retention
from spark_impl.reconfig.sinks import CallbackSink, ParquetSink

#: Key families: every job uses ``mixed``, the family of each key drawn from the key
#: (``(k + k // 3) mod 3``: string, tuple, numeric), so one object holds strings, tuples and numbers.
FAMILIES = ("string", "tuple", "numeric")
#: Source tuples per micro-batch (every batch is a sink delivery per job: kept few).
BATCH_SIZE = 8
#: Routing period honoured by the encoded keys (lcm of 1..5).
PERIOD = 60
#: The delivery after which the driver "crashes" (1-based).
CRASH_AT = 2
#: Committed batches the retention keeps (``Retention(RETAIN)``): after the run, every batch on
#: the store and in a job's history must be one it needs (:func:`conformance.fries.retention.retention_problem`).
RETAIN = 1
#: Distinct keys a sink case routes at least (:func:`worthy`).
MIN_KEYS = 4


class DriverCrash(RuntimeError):
    """The simulated crash between a sink write and its record."""


@lru_cache(maxsize=4096)
def _hashed(k: int, family: str) -> Any:
    i = 0
    while True:
        key: Any = f"k{k}.{i}" if family == "string" else ("k", (k, None), i) if family == "json" else \
            (b"k", (k, None), i)
        if spark_keys.stable_hash(key) % PERIOD == k % PERIOD:
            return key
        i += 1


def encode(k: int, family: str, form: int) -> Any:
    """The key standing for integer ``k`` (``k < PERIOD``) in ``family``; ``form`` varies the
    numeric form. ``boolish``: keys 0 and 1 as ``False``/``True``, ``0``/``1`` or
    ``0.0``/``1.0`` (bool first: equal keys, one state, routed alike), the others as ``mixed``."""
    if family == "boolish":
        if k in (0, 1):
            return (bool(k), k, float(k))[form % 3]
        family = "mixed"
    if family == "mixed":
        # k + k // 3, not k: on 3 workers k mod 3 == 0 was always numeric, where |k - 60| and
        # k - 60 route alike (a |k| mod p routing bug survived); now every residue gets every family
        family = FAMILIES[(k + k // len(FAMILIES)) % len(FAMILIES)]
    if family != "numeric":  # string, tuple, json (a tuple without bytes: JSON arrays once written)
        return _hashed(k, family)
    shifted = k - PERIOD  # negative for the generators' keys, routed like k (a multiple of PERIOD apart)
    return float(shifted) if form % 3 == 1 else shifted


def decode(key: Any) -> int:
    """The integer an encoded key stands for (also a sink's JSON text of one)."""
    if isinstance(key, str):
        if key.startswith("k"):
            return int(key[1:].rsplit(".", 1)[0])
        return decode(json.loads(key))
    if isinstance(key, (tuple, list)):
        return int(key[1][0])
    return int(key) if key >= 0 else int(key) + PERIOD  # boolish 0/1 as they are, numeric keys shifted


@dataclass(frozen=True)
class KeyedLogic:
    """Operator logic over encoded keys: ``inner`` computes on the integers."""

    inner: Any
    family: str

    def process(self, state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[str, Any, Any]]]:
        """``inner.process`` on the decoded key; emitted keys encoded."""
        new_state, emitted = self.inner.process(state, decode(key), value)
        return new_state, [(r, encode(k, self.family, int(v)), v) for r, k, v in emitted]

    def flush(self, state: Any, key: Any) -> list[tuple[str, Any, Any]]:
        """``inner.flush`` on the decoded key; emitted keys encoded."""
        return [(r, encode(k, self.family, int(v)), v) for r, k, v in self.inner.flush(state, decode(key))]


def keyed_job(scenario: Scenario, family: str) -> Any:
    """The scenario's executor job with keys of ``family`` (module docstring)."""
    job = scenario_job(scenario, batch_size=BATCH_SIZE)
    logic = {op: KeyedLogic(inner, family) for op, inner in job.logic.items()}
    planned = tuple(PlannedRequest(p.at, Request({op: Update(KeyedLogic(u.logic, family), u.transform)
                                                  for op, u in p.request.updates.items()}))
                    for p in job.planned)
    seen: dict[int, int] = {}

    def occurrence(key: int) -> int:  # the n-th tuple of a key: its first one is an int
        seen[key] = seen.get(key, -1) + 1
        return seen[key]

    tuples = tuple((src, txn, encode(int(key), family, occurrence(int(key))), value)
                   for src, txn, key, value in map(job.source.get, range(job.source.count())))
    return replace(job, logic=logic, planned=planned, source=ListSource(tuples))


def worthy(scenario: Scenario) -> bool:
    """A case the sink path can judge something on: source tuples of at least :data:`MIN_KEYS`
    distinct keys reach an operator (the generators' keys are 0-4, so every key family and a
    negative integer of a non-zero residue mod 3 - where ``|k| mod 3`` and ``k mod 3`` differ -
    are among them). Drawn cases are small first: at seed 0 the two sink cases held 4 and 2
    tuples, one source fed nothing, and no negative integer key was ever routed."""
    flow = scenario.dataflow
    keys = {t.key for name, tuples in scenario.sources.items() if flow.children(name) for t in tuples}
    return len(keys) >= MIN_KEYS


class Delivery:
    """The ``CallbackSink`` function: trace the newly committed batches of every job (their
    files are deleted after the delivery), write to the table (``sink``: a ``ParquetSink`` or
    an ``ObjectStoreSink``), crash once."""

    def __init__(self, sink: Any) -> None:
        self.parquet = sink
        self.executor: Any = None
        self.calls = 0
        self.traced: dict[int, list[int]] = {}
        self.logs: dict[int, dict[str, list[tuple[Any, ...]]]] = {}

    def __call__(self, df: Any, batch_id: int) -> None:
        ex = self.executor
        cache = FileCache(ex.directory, ex.depth, ex.partitions)
        for s, st in enumerate(ex.state):
            done = self.traced.setdefault(s, [])
            fresh = [g for g in st.committed.history if g not in done]
            for obj, ops in traced_logs(cache, s, st.job, fresh).items():
                self.logs.setdefault(s, {}).setdefault(obj, []).extend(ops)
            done.extend(fresh)
        self.parquet.deliver(df, batch_id)
        self.calls += 1
        if self.calls == CRASH_AT:
            raise DriverCrash("driver crash after a sink write, before its record")


def decoded(result: Any) -> Any:
    """A ``RunResult`` of keyed jobs with its outputs' and states' keys decoded."""
    return replace(result, outputs=[(op, txn, decode(k), v) for op, txn, k, v in result.outputs],
                   states={(op, decode(k)): v for (op, k), v in result.states.items()})


def run_sink_path(spark: Any, scenarios: Sequence[Scenario], scheduler: str, *, faults: frozenset[str],
                  checkpoint_dir: str, object_store: bool = False) -> list[Any]:
    """Run ``scenarios`` as the module docstring says; one ``RunResult`` per scenario.
    ``object_store``: the ``objstore`` path - the checkpoint and the table on pyarrow's
    ``file://`` filesystem (a URI: the executor's no-rename commit protocol, write-once
    objects and record logs, as on S3) and the table written by an ``ObjectStoreSink``
    (part files plus a manifest per batch id, read back with ``read_committed``)."""
    # every other case (and the objstore case) with bool keys for 0 and 1 (True == 1: routed alike)
    jobs = [keyed_job(sc, "boolish" if s % 2 or object_store else "mixed") for s, sc in enumerate(scenarios)]
    releases = None if object_store else Releases()
    if releases is not None:  # the stepped clock: commits wait while heads are released
        jobs = [stepped_job(sc, s, job) for s, (sc, job) in enumerate(zip(scenarios, jobs))]
    if object_store:
        root = "file://" + os.path.abspath(checkpoint_dir)
        table, checkpoint_dir = f"{root}/table", f"{root}/checkpoint"
        delivery = Delivery(ObjectStoreSink(table, key_type="string", value_type="long"))
    else:
        table = os.path.join(checkpoint_dir, "table")
        delivery = Delivery(ParquetSink(table, key_type="string", value_type="long"))
    sink = CallbackSink(delivery, key_type="string", value_type="long")

    def executor(resume: bool) -> Any:
        return Executor(spark, jobs, scheduler, checkpoint_dir, faults=faults, sink=sink, retention=Retention(RETAIN),
                        resume=resume)

    def drive(ex: Any) -> None:
        if releases is None:
            ex.run()
        else:
            releases.drive(ex)

    delivery.executor = executor(False)
    collected = True
    try:
        drive(delivery.executor)
    except DriverCrash:
        delivery.executor = executor(True)
        resumed_at = delivery.executor.g
        if releases is not None:
            releases.commits = CommitWatch()  # the committed views are read back from the checkpoint
        drive(delivery.executor)
        # the crash fell in the last batch's delivery, before its garbage collection, and the
        # resumed executor had nothing left to run: it delivered again (at construction) but
        # collects only after a batch, so the last batch's leftovers stay (bounded: one batch)
        collected = delivery.executor.g > resumed_at

    # a retention that keeps too much
    kept = retention_problem(delivery.executor, RETAIN) if collected else None
    if kept is not None:
        return [PathFailure(s, kept) for s in range(len(scenarios))]
    if object_store:
        rows = read_committed(table, "string", "long").to_pylist()
    else:
        rows = spark.read.parquet(table).collect() if os.path.isdir(table) else []
    out: list[Any] = []
    results = collect_results(delivery.executor)
    for result in results if releases is None else releases.results(results):
        if getattr(result, "error", None):
            out.append(result)
            continue
        s = result.scenario_index
        logs = {obj: delivery.logs.get(s, {}).get(obj, []) for obj in result.schedule.logs}
        out.append(replace(
            result,
            outputs=[(r["operator"], r["txn"], decode(r["key"]), r["value"]) for r in rows if r["job"] == s],
            schedule=Schedule({obj: tuple(Operation(op[0], op[1]) for op in ops) for obj, ops in logs.items()}),
            senders={obj: tuple(op[2] if len(op) > 2 else None for op in ops) for obj, ops in logs.items()},
            states=decoded(result).states))
    return out
