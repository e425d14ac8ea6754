"""The ``streaming`` path of :mod:`conformance.fries.engines.paths`: one Fries scenario through the
Structured Streaming front end (``spark_impl.reconfig.streaming.start_query``).

The scenario's single source becomes small JSON-lines files read by a file-source query, one
file per trigger, oldest first (the files get strictly increasing modification times, so the
input log holds the tuples in the scenario's ingestion order, and ``S:i`` names the same tuple
on both sides; this is checked, a different order is a :class:`PathFailure`). Each planned
request is ``submit`` ted once the executor has ingested ``at`` tuples and the previous one
completed. When the query has processed everything, the executor must have ingested every
tuple of the input log (``foreachBatch`` steps it until it has; checked, else a
:class:`PathFailure`); the query is stopped and the executor stepped until no request is in
progress, then once more so the last batch is committed.

Two options make the live path's teeth:

* ``crash_at``: a **driver crash** in the executor batch that ingests tuple ``crash_at``,
  after its tasks wrote outputs and state and before its commit
  (``StreamingRun.crash_before_commit``): ``foreachBatch`` raises, the query dies, and a new
  ``start_query`` on the same checkpoint recovers (Structured Streaming replays its batch, the
  executor resumes from its last commit under new batch numbers). A request accepted but not
  committed is lost with the driver (docs/spark.md); the harness submits it again, as a user
  would. ``duplicate-after-restart`` (the sink shows every batch that ran) then shows. The new
  query keeps ``start_query``'s default batch size (a whole trigger per executor batch; the
  first query runs one tuple per batch), and every trigger of it must have run at most one
  executor batch (:func:`whole_trigger_problem`).
* ``stepped``: the harness **owns the control-message clock** as the batch suite's ``stepped``
  path does (:mod:`conformance.fries.engines.stepped`: the job's FCM timing from
  :func:`~conformance.fries.engines.stepped.stepped_job`, :class:`~conformance.fries.engines.stepped.Releases`
  run around every executor step through the front end's ``StepHook``): heads of a component
  switch :data:`~conformance.fries.engines.stepped.GAP` micro-batches apart while data keeps flowing,
  so a member that does not align (``missing-alignment``) or no alignment at all (``naive``)
  is a cycle on every alignment probe. The files are then landed **one at a time** (each after
  the previous one was processed, :func:`stepped_rows` tuples each = one executor batch) and a
  request is submitted between two files once ``at`` tuples are in: every run makes the same
  batches and requests at the same tuples. ``Releases``' checks run after every step (a head
  that switched before its release, the commit rule, and - given the scenario's requests - the
  executor's MCS against Fries Alg. 1-4): a problem is a :class:`PathFailure`; reported delays
  are dropped (the clock was moved).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import replace
from typing import Any, Callable

from spec.fries.scenario import Scenario, ingestion_order

import conformance.fries.engines.typed as typed_module
from conformance.fries.engines.stepped import Releases, stepped_job
from conformance.fries.outcome import PathFailure
from spark_impl.reconfig import collect_results, scenario_job
from spark_impl.reconfig.streaming import start_query

_ROWS_PER_FILE = 3
_DEADLINE_S = 600.0


class _Timeout(Exception):
    """The query did not reach a point within the deadline (a :class:`PathFailure`)."""


class _Clock:
    """:class:`conformance.fries.engines.stepped.Releases` as the front end's ``StepHook``. The
    streaming job has no planned requests (they come through ``submit``), so the MCS check of
    ``Releases`` is given the scenario's job (``planned``: request ``j`` = the ``j``-th submitted)."""

    def __init__(self, planned_job: Any) -> None:
        self.releases = Releases()
        self.planned_job = planned_job

    def before(self, executor: Any) -> Any:
        a = executor.state[0].live.active
        if a is not None and executor.scheduler == "fries" and (0, a.j, a.attempt) not in self.releases.seen:
            self.releases._check_mcs(0, self.planned_job, a)  # noqa: SLF001 - see the class docstring
        return self.releases.advance(executor)

    def after(self, executor: Any, token: Any) -> None:
        self.releases.check(executor, token)


class _Live:
    """One scenario's query, its restarts after a crash and its requests."""

    def __init__(self, spark: Any, full: Any, checkpoint_dir: str, scheduler: str, faults: frozenset[str],
                 stepped: bool, schema: str = "key long, value long") -> None:
        self.spark, self.full, self.scheduler, self.faults, self.stepped = spark, full, scheduler, faults, stepped
        self.schema = schema
        self.job = replace(full, planned=())
        self.data = os.path.join(checkpoint_dir, "data")
        self.query_dir = os.path.join(checkpoint_dir, "query")
        os.makedirs(self.data, exist_ok=True)
        self.stamp = time.time() - 10_000
        self.deadline = time.monotonic() + _DEADLINE_S
        self.clocks: list[_Clock] = []
        self.submitted: list[Any] = []  # requests accepted, in order
        self.crashes: list[str] = []
        self.run: Any = None
        self.whole = False  # the query runs with the default batch size (whole_trigger_problem)

    def land(self, number: int, rows: list[tuple[Any, Any]]) -> None:
        """File ``number`` of the input (written elsewhere, then renamed in: never read half)."""
        path = os.path.join(self.data, f"f{number:06d}.json")
        tmp = os.path.join(os.path.dirname(self.data), f".f{number:06d}.tmp")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.write("".join(json.dumps({"key": k, "value": v}) + "\n" for k, v in rows))
        os.utime(tmp, (self.stamp + number, self.stamp + number))
        os.replace(tmp, path)

    def start(self, crash_at: int | None = None) -> None:
        stream = self.spark.readStream.schema(self.schema).option("maxFilesPerTrigger", 1).json(self.data)
        clock = _Clock(self.full) if self.stepped else None
        if clock is not None:
            self.clocks.append(clock)
        # settle_steps=0 and (unless stepped) one tuple per executor batch: the handler's step
        # budget (tuples behind + settle + 2) is then exactly what ingesting its batch needs, so
        # a handler that stops early leaves tuples behind and the end-of-input check sees it.
        # The query recovering from a crash keeps start_query's default (a whole trigger per
        # executor batch): checked by whole_trigger_problem
        self.whole = not self.stepped and bool(self.crashes)
        size = stepped_rows(self.job) if self.stepped else None if self.whole else 1
        self.run = start_query(self.spark, self.job, stream, scheduler=self.scheduler, checkpoint_dir=self.query_dir,
                               faults=self.faults, batch_size=size, settle_steps=0, step_hook=clock)
        if crash_at is not None:
            self.run.crash_before_commit(crash_at)
        # a request the crash lost (accepted, never committed): submitted again, as a user would
        made = self.run.executor.state[0].live.made
        for request in self.submitted[made:]:
            answer = self.run.submit(request)
            if answer is not None:
                raise RuntimeError(f"a request submitted again after the restart was refused: {answer}")

    def recover(self) -> None:
        """Start a new query if the armed crash killed this one; any other death is an error."""
        if self.run.query.isActive:
            return
        if self.run.crashed is None:
            raise RuntimeError(f"the streaming query died: {self.run.query.exception()}")
        self.crashes.append(self.run.crashed)
        self.run.stop()
        self.start()

    def wait(self, ready: Callable[[], bool], what: str) -> None:
        """Poll ``ready`` (restarting after the armed crash) until it holds or the deadline."""
        while time.monotonic() < self.deadline:
            self.recover()
            if ready():
                return
            time.sleep(0.005)
        raise _Timeout(f"the query did not reach {what} within {_DEADLINE_S:.0f} s (ingested "
                       f"{self.offset()} tuples; an overloaded machine?)")

    def offset(self) -> int:
        return int(self.run.executor.state[0].live.offset)

    def idle_at(self, count: int) -> bool:
        """``count`` tuples ingested and the handler returned (no executor step running)."""
        return self.offset() >= count and not self.run.busy.locked()

    def submit(self, request: Any) -> None:
        answer = self.run.submit(request)
        if answer is not None:
            raise RuntimeError(f"a scenario request was refused by submit: {answer}")
        self.submitted.append(request)

    def drain(self) -> None:
        """Let the query process everything it has (restarting after the armed crash)."""
        while True:
            try:
                self.run.query.processAllAvailable()
            except Exception:  # noqa: BLE001 - the query died: the armed crash, or an error (recover)
                pass
            if self.run.query.isActive:
                return
            self.recover()


def whole_trigger_problem(run: Any) -> str | None:
    """``start_query`` without ``batch_size`` runs each Structured Streaming batch as *one*
    executor batch (its docstring: "default: a whole Structured Streaming batch"). A streaming
    job has no planned requests, so nothing pauses ingestion, and with ``settle_steps=0`` the
    handler steps only while tuples are behind: every trigger runs at most one executor batch.
    (A smaller default still ingests everything, only in more batches, so no other check sees
    it.) The problem in words, or None."""
    split = {b: ran for b, ran in sorted(run.batches.items()) if len(ran) > 1}
    if split:
        b, ran = next(iter(split.items()))
        return (f"with start_query's default batch size, Structured Streaming batch {b} ran as {len(ran)} executor "
                f"batches {ran} (and {len(split) - 1} more triggers were split): the default is a whole trigger")
    return None


def stepped_rows(job: Any) -> int:
    """Tuples per input file, and per executor batch, when the harness owns the clock: the
    job's batch size (4: any 4 consecutive tuples of a probe reach every head)."""
    return max(1, int(job.timing.batch_size))


def run_streaming(spark: Any, scenario: Scenario, index: int, scheduler: str, *, faults: frozenset[str],
                  checkpoint_dir: str, restart_at: int | None = None, crash_at: int | None = None,
                  stepped: bool = False, typed: bool = False) -> Any:
    """Run ``scenario`` as a streaming query; its ``RunResult`` (``scenario_index`` = ``index``)
    or a :class:`PathFailure`. ``restart_at``: once the executor has ingested that many tuples
    (and no request is in progress) the query is stopped and started again on the same
    checkpoint (a graceful driver restart). ``crash_at`` and ``stepped``: the module docstring.
    ``typed``: keys and values as nested Spark types of mixed kinds
    (:mod:`conformance.fries.engines.typed`), decoded back to the scenario's integers."""
    plain = [(t.key, t.value) for t in ingestion_order(scenario)]
    full = stepped_job(scenario, 0) if stepped else scenario_job(scenario)
    rows: list[tuple[Any, Any]]
    written: list[tuple[Any, Any]]
    if typed:  # the documented forms, what the operators get, and the files' JSON of them
        full = typed_module.typed_job(full)
        rows = [(typed_module.encode_key(k), typed_module.encode_value(v)) for k, v in plain]
        written = [(typed_module.key_json(k), typed_module.value_json(v)) for k, v in plain]
    else:
        rows, written = list(plain), list(plain)
    requests = [p.request for p in full.planned]
    points = [p.at for p in full.planned]
    live = _Live(spark, full, checkpoint_dir, scheduler, faults, stepped,
                 typed_module.SCHEMA if typed else "key long, value long")
    per_file = stepped_rows(full) if stepped else _ROWS_PER_FILE
    files = [written[o: o + per_file] for o in range(0, len(rows), per_file)]
    try:
        if stepped:
            live.start(crash_at)
            _paced(live, files, requests, points)
        else:
            for number, chunk in enumerate(files):
                live.land(number, chunk)
            live.start(crash_at)
            if restart_at is not None:
                live.wait(lambda: live.offset() >= min(restart_at, len(rows)), f"tuple {restart_at}")
                live.run.stop()
                live.start()
            for at, request in zip(points, requests):
                # once the query has processed every file nothing steps the executor, so a
                # request still in progress then completes (and the rest are submitted) below
                live.wait(lambda: live.offset() >= min(at, len(rows))  # noqa: B023 - waited on within this iteration and not live.run.in_progress()
                          or live.idle_at(len(rows)), f"request at={at}")
                if live.run.in_progress():
                    break
                live.submit(request)
        live.drain()
        behind = (live.offset(), live.run.source.count())
    except _Timeout as timeout:
        return PathFailure(index, str(timeout))
    finally:
        if live.run is not None:
            live.run.stop()
    whole = whole_trigger_problem(live.run) if live.whole else None
    if whole is not None:
        return PathFailure(index, whole)
    if behind[0] < behind[1]:
        # foreachBatch steps the executor until it ingested every indexed tuple (no request
        # pauses ingestion here): after the last batch nothing may be left for a next trigger
        return PathFailure(index, f"after the query processed all its input the executor had ingested "
                                  f"{behind[0]} of the {behind[1]} tuples of the input log")
    run = live.run
    run.crash_offset = None  # a crash point past the input never fires
    left = requests[len(live.submitted):]
    for _ in range(200 + 200 * len(left)):
        if not run.in_progress() and left:
            live.submit(left.pop(0))
        elif not run.in_progress() and run.executor.state[0].live.offset >= run.source.count():
            break
        run.step()
    run.step()  # commit the last batch
    logged = [run.source.get(i)[2:] for i in range(run.source.count())]
    if logged != rows:
        return PathFailure(index, f"the streaming input log holds {logged} instead of {rows} (file order)")
    problems = [c.releases.problems[0] for c in live.clocks if 0 in c.releases.problems]
    if problems:
        return PathFailure(index, problems[0])
    (result,) = collect_results(run.executor)
    if typed:
        try:
            result = typed_module.decoded(result)
        except TypeError as error:
            return PathFailure(index, f"a committed output or state is not a documented form: {error}")
    return replace(result, scenario_index=index, delays_ms=() if stepped else result.delays_ms)


def _paced(live: _Live, files: list[list[tuple[Any, Any]]], requests: list[Any], points: list[int]) -> None:
    """Land the files one at a time; between two, submit the next request once ``at`` tuples are
    in and the previous request completed (module docstring)."""
    landed = 0
    for number, chunk in enumerate(files):
        if len(live.submitted) < len(requests) and landed >= points[len(live.submitted)] \
                and not live.run.in_progress():
            live.submit(requests[len(live.submitted)])
        live.land(number, chunk)
        landed += len(chunk)
        live.wait(lambda: live.idle_at(landed), f"tuple {landed}")  # noqa: B023 - waited on within this iteration
