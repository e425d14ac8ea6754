"""The DGS suite's live engine: cases run through the Structured Streaming
front end :func:`spark_impl.dgs.streaming.start_dgs_query`, judged by the DGS suite's oracles
(:func:`conformance.dgs.suite.judge`: outputs = spec(sort(u)), every event processed once by
its worker or an ancestor, final state = the sequential program's).

One engine call runs a batch of cases as **one live query** (job ``i`` = case ``i``):

* a case's items are taken in the order its :class:`~spark_impl.dgs.release.Arrival` model
  delivers them (per-stream delays and jitter: streams reordered, each stream FIFO), grouped
  by the case's driver ``tick``, and the groups cut into at most :data:`FILES` consecutive
  chunks; file ``f`` carries chunk ``f`` of every case. A case whose input arrives within one
  tick (the batch engine runs it as one step) is, when its seed is odd, cut by arrival into
  up to :data:`FILES` files all the same: a live stream's micro-batches need not follow the
  batch engine's ticks, and the outputs and final state may not depend on them (half keep
  one file: the dense one-tick shapes of the generator stay whole there). It lands in the source directory
  (atomic rename) only after the query has processed file ``f - 1``, so micro-batch ``f``
  receives chunk ``f`` (events released early or held in the mailboxes across batches, as the
  heartbeats allow);
* the driver "crashes" at each of :data:`spark_impl.dgs.streaming.CRASH_POINTS` in turn, on
  files 1, 2 and 3, and a new query is started on the same checkpoint each time: a restart
  must neither lose nor duplicate an output;
* about a third of the cases are **re-planned mid-stream** (``run.replan(plan, job=i)``
  before one of their files), and every restart is preceded by one with a malformed plan for
  one job, which the front end must refuse (:mod:`conformance.dgs.engines.replan`);
* outputs are read from a ``CallbackSink`` keyed by batch id (the JSON text read back), the
  processed events and final state from the checkpoint (``keep_records=True``);
* the harness itself fails the whole query (``engine``) when a new query's first commit is
  not batch -1, or when the sink got a batch more than once - except the batch a kill at
  ``after-deliver`` interrupted, which the restart delivers once more (exactly once: the
  sinks are idempotent by batch id, but a ``CallbackSink``'s function sees every call).
"""

from __future__ import annotations

import json
import logging
import math
import os
import shutil
import tempfile
from typing import Any, Sequence

from spec.dgs.streams import Heartbeat, StreamEvent, value_from_json, value_to_json

from reference.dgs.examples import target

import spark_impl.dgs.release as dgs_release

from conformance.core.crashes import Crash, Guard
from conformance.core.results import SuiteResult
from conformance.core.session import shared_session
from conformance.dgs.cases import DgsCase
from conformance.dgs.engines.replan import judged_processed, refused_restart, replan_of
from conformance.dgs.oracles import Observed
from spark_impl.dgs.streaming import CRASH_POINTS, LiveJob, start_dgs_query
from spark_impl.reconfig.sinks import CallbackSink

FILES = 5
"""At most this many files (micro-batches) per case."""


def case_chunks(case: DgsCase) -> list[list[dict[str, Any]]]:
    """The case's item rows in arrival order, cut into at most :data:`FILES` chunks along the
    driver's ticks (module docstring)."""
    times = dgs_release.Arrival(case.max_delay, case.max_jitter, case.seed).times(case.streams)
    arrived = sorted((times[stream][i], stream, i) for stream, items in case.streams.items()
                     for i in range(len(items)))
    if not arrived:
        return []
    first = arrived[0][0]
    ticks = [math.floor((t - first) / case.tick) for t, _, _ in arrived]
    if len(set(ticks)) == 1 and case.seed % 2:
        ticks = list(range(len(arrived)))  # one driver tick: cut by arrival (module docstring)
    distinct = sorted(set(ticks))
    place = {tick: n * FILES // len(distinct) for n, tick in enumerate(distinct)}
    chunks: list[list[dict[str, Any]]] = [[] for _ in range(max(place.values()) + 1)]
    for tick, (_, stream, i) in zip(ticks, arrived):
        item = case.streams[stream][i]
        row: dict[str, Any] = {"stream": stream, "ts": item.ts}
        if isinstance(item, StreamEvent):
            row["event"] = value_to_json(item.payload)
        else:
            assert isinstance(item, Heartbeat)
            row["heartbeat"] = True
        chunks[place[tick]].append(row)
    return [chunk for chunk in chunks if chunk]


def _land(directory: str, index: int, rows: list[str]) -> None:
    staging = os.path.join(os.path.dirname(directory), f".f{index:04d}.tmp")
    with open(staging, "w", encoding="utf-8") as handle:
        handle.write("".join(r + "\n" for r in rows))
    os.replace(staging, os.path.join(directory, f"f{index:04d}.json"))


class Collected:
    """The callback sink's function: rows by batch id (a repeated delivery replaces its batch),
    and how many times each batch was delivered."""

    def __init__(self) -> None:
        self.batches: dict[int, list[tuple[int, str]]] = {}
        self.deliveries: dict[int, int] = {}

    def __call__(self, df: Any, batch_id: int) -> None:
        self.batches[batch_id] = [(int(r["job"]), str(r["value"])) for r in df.collect()]
        self.deliveries[batch_id] = self.deliveries.get(batch_id, 0) + 1

    def repeated(self, killed: set[int]) -> str | None:
        """None when every batch reached the sink once, but a batch whose delivery was not
        recorded (a kill after the sink got it: ``killed``), which reaches it again at most once."""
        extra = {b: n for b, n in sorted(self.deliveries.items()) if n > (2 if b in killed else 1)}
        if extra:
            return (f"batches delivered to the sink more than once (batch: times) {extra}; only a kill between "
                    f"the delivery and its record may repeat one ({sorted(killed)})")
        return None


def run_live(spark: Any, cases: Sequence[DgsCase], root: str, crashes: bool = True) -> list[Observed | Crash]:
    """Run ``cases`` as one live query under ``root`` (module docstring)."""
    per_case = [case_chunks(case) for case in cases]
    files = [[json.dumps({"job": job, **row}) for job, chunks in enumerate(per_case) if f < len(chunks)
              for row in chunks[f]] for f in range(max((len(c) for c in per_case), default=0))]
    replans = [replan_of(case, len(chunks)) for case, chunks in zip(cases, per_case)]
    inbox = os.path.join(root, "in")
    os.makedirs(inbox)
    jobs = [LiveJob(target(c.name), c.plan, c.inline_below) for c in cases]
    collected = Collected()
    sink = CallbackSink(collected)
    refused: dict[int, str] = {}
    killed: set[int] = set()

    def start(crash_at: str | None = None, with_jobs: Sequence[LiveJob] = jobs) -> Any:
        stream = spark.readStream.text(inbox)
        return start_dgs_query(spark, with_jobs, stream, checkpoint_dir=os.path.join(root, "ckpt"), sink=sink,
                               keep_records=True, crash_at=crash_at)

    run = start()
    try:
        first = run.committed()
        if (first.batch, first.delivered) != (-1, -1):
            raise RuntimeError(f"a new query's first commit is batch {first.batch}, delivered {first.delivered}: "
                               "expected -1 and -1 (nothing yet)")
        for number, rows in enumerate(files):
            point = CRASH_POINTS[number - 1] if crashes and 1 <= number <= len(CRASH_POINTS) else None
            if point is not None:
                run.stop()
                run = start(point)
            for job, replan in enumerate(replans):
                if replan is not None and replan.before == number:
                    run.replan(replan.plan, job=job)
                    if replan.restart_with_new:
                        jobs[job] = LiveJob(jobs[job].target, replan.plan, jobs[job].inline_below)
            _land(inbox, number, rows)
            if point is not None:
                quiet = logging.getLogger("py4j.clientserver")  # it logs the handler's traceback
                level = quiet.level
                quiet.setLevel(logging.CRITICAL)
                try:
                    run.process_all()
                except Exception as error:  # noqa: BLE001 - Py4J wraps the handler's exception
                    if "simulated driver kill" not in str(error):
                        raise
                else:
                    raise RuntimeError(f"the simulated driver kill at {point} did not happen")
                finally:
                    quiet.setLevel(level)
                if point == "after-deliver" and collected.deliveries:
                    killed.add(max(collected.deliveries))
                run.query.stop()
                failed = refused_restart(lambda bad: start(with_jobs=bad), jobs, number)
                if failed is not None:
                    refused.setdefault(*failed)
                run = start()
            run.process_all()
        results = run.results()
    finally:
        run.stop()
    repeated = collected.repeated(killed)
    if repeated is not None:
        raise RuntimeError(repeated)
    outputs: list[list[Any]] = [[] for _ in cases]
    for rows_of_batch in collected.batches.values():
        for job, text in rows_of_batch:
            outputs[job].append(value_from_json(json.loads(text)))
    return [Crash(refused[j]) if j in refused else
            (outputs[j], r.final_state, judged_processed(cases[j], replans[j], r.processed))
            for j, r in enumerate(results)]


def streaming_engine(spark: Any = None, timeout_s: float = 900.0, crashes: bool = True) -> Any:
    """A batch engine with the signature of :func:`conformance.dgs.suite.spark_engine`."""
    session = shared_session(spark)

    def run(cases: Sequence[DgsCase]) -> list[Observed | Crash]:
        root = tempfile.mkdtemp(prefix="streamproof-dgs-live-")
        try:
            return run_live(session(), cases, root, crashes)
        finally:
            shutil.rmtree(root, ignore_errors=True)

    guard: Guard[DgsCase, Observed | Crash] = Guard(run, timeout_s, on_hang=lambda: session().sparkContext.cancelAllJobs())
    return guard


def count_arrivals(drawn: Sequence[Any], result: SuiteResult) -> None:
    """How the live DGS run lands its cases (features of the report)."""
    for case in drawn:
        files = len(case_chunks(case))
        result.features["live: several files"] += files > 1
        result.features["live: re-planned mid-stream"] += replan_of(case, files) is not None
