"""The live DGS front end run as a user runs it, on a pure-Python Spark.

:func:`dgs_live_local_problem` starts the real :func:`spark_impl.dgs.streaming.start_dgs_query`
on :class:`~conformance.standin.spark.LocalSpark` with a stand-in streaming source (the
``writeStream.foreachBatch(...).option(...).start()`` chain Structured Streaming offers) and
calls the ``foreachBatch`` function the query registered, file by file, as Structured
Streaming would. The cases are the DGS suite's (:func:`conformance.dgs.suite.draw_dgs_cases`,
:data:`CASES` of seed :data:`SEED`, as one query: job ``i`` = case ``i``), their files cut as the
live check cuts them (:func:`conformance.dgs.engines.live.case_chunks`), with the inlining bounds of
the stand-in check (:func:`conformance.dgs.checks.standin.variant`: 1, 3, 8, 50) and the live
check's re-plans (:func:`conformance.dgs.engines.replan.replan_of`). The query keeps
``start_dgs_query``'s defaults (no ``keep_records``), its outputs go to a ``CallbackSink``,
and the run is judged by the suite's oracles (:func:`conformance.dgs.suite.judge`: outputs =
spec(sort(u)) read from the sink, every event processed once by its worker or an ancestor,
final state). It holds :mod:`spark_impl.dgs.streaming` to four promises of its docstrings
that no other check can see broken:

1. **retention** (``spark_impl/dgs/streaming_store.py``): "Retention: after a delivery every
   states prefix but the committed one is deleted, and the records of delivered batches unless
   ``keep_records``" (``keep_records`` defaults to False; ``results()`` is "Complete only with
   ``keep_records=True`` (else the records of delivered batches are gone: read the sink)").
   After every batch the checkpoint's ``states/`` holds exactly the committed states and
   ``records/`` nothing. The Spark runs (:mod:`conformance.dgs.engines.live`) always pass
   ``keep_records=True`` (they read the trace back), and the contracts check
   (:mod:`conformance.dgs.checks.live_contracts`) calls ``Store.prune`` itself, so a ``deliver`` that
   prunes with ``True`` or not at all (records and old states growing without bound on a
   stream that runs for months) changes nothing they see.
2. **inlining** (``LiveJob``: "``inline_below`` is the executor's runtime optimization
   (:func:`spark_impl.dgs.driver.inline_short_segments`)"; that function: "Such events appear
   in the trace as processed by ``w``"). Each batch's records, read when the sink receives the
   batch (the records exist until the delivery is recorded), must name for every event the
   worker that ``inline_short_segments(topo, steps_of(topo, receive(...)), inline_below)``
   gives it, recomputed here on a mailbox of the check's own (re-planned with the job). The
   judge accepts an event processed by its leaf as well as by an ancestor, and the outputs
   and final state are the same either way, so inlining silently switched off (``inline_below``
   read as 0) passes every Spark run. The check also fails when its cases inline nothing
   (then this part would test nothing).
3. **bookkeeping** (``DgsStreamingRun``): "``batches``: batch ids this process computed;
   ``replayed``: batch ids it found already committed (a restart's replay); ``replanned``:
   ``(batch, job)`` of the re-plans applied; ``batch_ms``: batch id -> wall time of its
   ``foreachBatch`` call". After every batch ``batches`` is every batch this run object
   computed, in order, ``replanned`` the re-plans requested before the batches it ran (batch
   order, then job), ``replayed`` empty and ``batch_ms`` keyed by ``batches``. No Spark run
   reads them; the contracts check reads them only on a replayed batch (``batches`` stays
   empty there) and never re-plans.
4. **stop** (``DgsStreamingRun.stop``: "Stop at a batch boundary ...: the checkpoint stays;
   :func:`start_dgs_query` on it resumes"; :class:`~spark_impl.reconfig.streaming.StreamStopped`:
   "Raised by a batch that starts after :meth:`StreamingRun.stop`: Structured Streaming does not
   commit it, so a restart replays it"). The last file comes after ``stop()``: the query must
   be stopped, the ``foreachBatch`` call must raise ``StreamStopped`` leaving the commit as it
   was; a new ``start_dgs_query`` on the checkpoint (the run's current plans) then computes that
   batch (its ``batches`` is that batch alone). The Spark runs stop only idle queries, and the
   contracts check sets ``run.stopping`` itself, so a ``stop()`` that never sets it (a batch
   after it runs and is committed by the front end while Structured Streaming does not commit
   it) is unseen.

Besides, every batch commits and records its delivery (``batch`` and ``delivered`` both the
batch id) and the sink gets every batch at most once; an exception of the front end's code is
reported as the problem. One query of 8 jobs and 5 batches, no Spark: about half a second.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from spec.dgs.streams import value_from_json

from reference.dgs.examples import target

from conformance.dgs.cases import draw_dgs_cases, program_of
from conformance.dgs.checks.standin import variant
from conformance.dgs.engines.live import Collected, case_chunks
from conformance.dgs.engines.replan import judged_processed, replan_of
from conformance.dgs.oracles import judge
from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import Frame, Query  # the started query: only stop() is called

if TYPE_CHECKING:
    from conformance.dgs.engines.live import Collected

CASES = 8
"""Cases of the query (its jobs): the first of :func:`conformance.dgs.suite.draw_dgs_cases`."""

SEED = 7
"""Their seed (chosen for it): five jobs re-planned, before batches 1 (two jobs), 2, 3 and - on
the query started after ``stop()`` - 4; events inlined in batches 1, 3 and 4."""


class _Writer:
    """``source.writeStream``: keeps the ``foreachBatch`` function and the options."""

    def __init__(self, source: "_Stream") -> None:
        self.source = source

    def foreachBatch(self, function: Callable[[Any, int], None]) -> "_Writer":  # noqa: N802 - Spark's name
        self.source.handler = function
        return self

    def option(self, key: str, value: Any) -> "_Writer":
        self.source.options[key] = value
        return self

    def start(self) -> Query:
        self.source.query = Query()
        return self.source.query


class _Stream:
    """A streaming DataFrame of one column ``value`` (what ``start_dgs_query`` reads of it)."""

    isStreaming = True  # noqa: N815 - Spark's name
    columns = ["value"]

    def __init__(self) -> None:
        self.handler: Callable[[Any, int], None] | None = None
        self.options: dict[str, Any] = {}
        self.query: Query | None = None

    @property
    def writeStream(self) -> _Writer:  # noqa: N802 - Spark's name
        return _Writer(self)

    def batch(self, rows: list[str], batch_id: int) -> None:
        """Structured Streaming runs micro-batch ``batch_id`` of ``rows``."""
        if self.handler is None:
            raise RuntimeError("start_dgs_query registered no foreachBatch function")
        self.handler(Frame(rows), batch_id)


class _Rows:
    """A delivered stand-in DataFrame whose rows read by column name (as Spark's ``Row``)."""

    def __init__(self, df: Any) -> None:
        self.df = df

    def collect(self) -> list[dict[str, Any]]:
        names = [column.split()[0] for column in self.df.schema.split(",")]
        return [dict(zip(names, row)) for row in self.df.collect()]


@dataclass
class _Watch:
    """The sink's function: the outputs (:class:`conformance.dgs.engines.live.Collected`) and,
    at each delivery, the batch's records still on the checkpoint ``state``."""

    state: str
    collected: "Collected"
    processed: dict[int, list[tuple[int, Any]]] = field(default_factory=dict)

    def __call__(self, df: Any, batch_id: int) -> None:
        from spark_impl.dgs.streaming_store import Store

        self.collected(_Rows(df), batch_id)
        self.processed[batch_id] = [(job, value) for batch, records in Store(self.state).records(batch_id)
                                    if batch == batch_id for job, kind, value in records if kind == "processed"]


class _Mirror:
    """Each job's mailbox, topology and inlining bound, kept by the check: who processes what."""

    def __init__(self, cases: Sequence[Any]) -> None:
        from spark_impl.dgs.streaming_input import Mailbox
        from spark_impl.dgs.topology import topology

        self.programs = [program_of(case.name) for case in cases]
        self.topos = [topology(p, case.plan) for p, case in zip(self.programs, cases)]
        self.boxes = [Mailbox() for _ in cases]
        self.below = [case.inline_below for case in cases]
        self.inlined = 0

    def replan(self, job: int, plan: Any) -> None:
        from spark_impl.dgs.streaming_replan import remap_mailbox
        from spark_impl.dgs.topology import topology

        self.topos[job] = topology(self.programs[job], plan)
        self.boxes[job] = remap_mailbox(self.boxes[job], self.topos[job])

    def workers(self, rows: list[str], batch_id: int) -> list[list[tuple[Any, str]]]:
        """Per job, ``(key, worker)`` of every event the batch of ``rows`` processes, in key order."""
        from spark_impl.dgs.driver import inline_short_segments, steps_of
        from spark_impl.dgs.streaming_input import group_rows, receive

        found = []
        for job, items in enumerate(group_rows(rows, len(self.boxes), batch_id)):
            topo = self.topos[job]
            steps = steps_of(topo, receive(self.programs[job], topo, self.boxes[job], items, f"batch {batch_id}"))
            plain, inlined = _by_worker(topo, steps), _by_worker(topo, inline_short_segments(topo, steps,
                                                                                             self.below[job]))
            self.inlined += len(set(inlined) - set(plain))
            found.append(inlined)
        return found


def _by_worker(topo: Any, steps: Sequence[Any]) -> list[tuple[Any, str]]:
    pairs = [(key, topo.leaves[leaf]) for segment, _ in steps for leaf, events in enumerate(segment)
             for key, _ in events]
    pairs += [(key, sync[0]) for _, sync in steps if sync is not None for key, _ in sync[1]]
    return sorted(pairs)


def _cases() -> list[Any]:
    return [variant(case, index)[0] for index, case in enumerate(draw_dgs_cases(CASES, SEED))]


def dgs_live_local_problem() -> str | None:
    """The first broken promise of the module docstring, in one line; None when all hold."""
    root = tempfile.mkdtemp(prefix="streamproof-dgs-live-local-")
    try:
        return _problem(_cases(), root)
    except Exception as error:  # noqa: BLE001 - a crash of the front end's code is a finding
        return f"the live front end on the stand-in raised {type(error).__name__}: {str(error).splitlines()[0]}"
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _problem(cases: Sequence[Any], root: str) -> str | None:
    from spark_impl.dgs.streaming import LiveJob, start_dgs_query
    from spark_impl.reconfig.sinks import CallbackSink

    chunks = [case_chunks(case) for case in cases]
    files = [[json.dumps({"job": job, **row}) for job, parts in enumerate(chunks) if number < len(parts)
              for row in parts[number]] for number in range(max(len(parts) for parts in chunks))]
    replans = [replan_of(case, len(parts)) for case, parts in zip(cases, chunks)]
    watch = _Watch(os.path.join(root, "dgs"), Collected())
    mirror = _Mirror(cases)
    last = len(files) - 1

    def start(jobs: Sequence[Any]) -> tuple[Any, _Stream]:
        source = _Stream()
        return start_dgs_query(LocalSpark(), jobs, source, checkpoint_dir=root, sink=CallbackSink(watch)), source

    run, source = start([LiveJob(target(c.name), c.plan, c.inline_below) for c in cases])
    computed: list[int] = []
    replanned: list[tuple[int, int]] = []
    for number, rows in enumerate(files):
        if number == last:
            stopped = _stop_problem(run, source, rows, number)
            if stopped is not None:
                return stopped
            run, source = start(run.jobs)
            computed, replanned = [], []
        for job, replan in enumerate(replans):
            if replan is not None and replan.before == number:
                run.replan(replan.plan, job=job)
                mirror.replan(job, replan.plan)
                replanned.append((number, job))
        expected = mirror.workers(rows, number)
        source.batch(rows, number)
        computed.append(number)
        problem = _batch_problem(run, watch, number, expected) or _bookkeeping_problem(
            run, computed, replanned, f"after batch {number}{' (a new query after stop())' if number == last else ''}")
        if problem is not None:
            return problem
    if not mirror.inlined:
        return "the check's cases inline no event: its inlining part tests nothing (pick other cases)"
    repeated = watch.collected.repeated(set())
    if repeated is not None:
        return repeated
    outputs: list[list[Any]] = [[] for _ in cases]
    for rows_of_batch in watch.collected.batches.values():
        for job, text in rows_of_batch:
            outputs[job].append(_value(text))
    states = run.final_states()
    for job, case in enumerate(cases):
        processed = sorted((value for batch in sorted(watch.processed) for j, value in watch.processed[batch]
                            if j == job), key=lambda entry: entry[1])
        failed = judge(case, (outputs[job], states[job], judged_processed(case, replans[job], processed)))
        if failed:
            oracle, text = failed[0]
            return f"job {job} ({case.name}, keep_records off) failed {oracle}: {' '.join(text.split())}"
    return None


def _value(text: str) -> Any:
    return value_from_json(json.loads(text))


def _batch_problem(run: Any, watch: _Watch, number: int, expected: list[list[tuple[Any, str]]]) -> str | None:
    """The commit, retention and inlining promises after batch ``number`` (module docstring)."""
    commit = run.committed()
    if (commit.batch, commit.delivered) != (number, number):
        return f"after batch {number} the commit is batch {commit.batch}, delivered {commit.delivered}"
    location = run.store.location
    states, records = location.list("states"), location.list("records")
    if states != [commit.states] or records:
        return (f"after batch {number} (keep_records={run.keep_records}) the checkpoint keeps states {states} and "
                f"records {records}: a delivery keeps only the committed states ({commit.states!r}) and deletes the "
                "records of delivered batches")
    for job, wanted in enumerate(expected):
        got = sorted((key, by) for j, (by, key, _) in watch.processed.get(number, []) if j == job)
        if got != wanted:
            wrong = next((g, w) for g, w in zip(got + [None] * len(wanted), wanted + [None] * len(got)) if g != w)
            return (f"batch {number}, job {job} (inline_below {run.jobs[job].inline_below}): the records name "
                    f"(key, worker) {wrong[0]} where inline_short_segments(steps_of(receive(...))) gives {wrong[1]}")
    return None


def _bookkeeping_problem(run: Any, computed: list[int], replanned: list[tuple[int, int]], when: str) -> str | None:
    """``batches``, ``replayed``, ``replanned`` and ``batch_ms`` of the run (module docstring)."""
    seen = (run.batches, run.replayed, run.replanned, sorted(run.batch_ms))
    wanted: tuple[list[int], list[int], list[tuple[int, int]], list[int]] = (computed, [], replanned, computed)
    if seen != wanted:
        return (f"{when}: the run lists batches {seen[0]}, replayed {seen[1]}, replanned {seen[2]}, batch_ms keys "
                f"{seen[3]}; it computed batches {computed} and applied the re-plans (batch, job) {replanned}")
    return None


def _stop_problem(run: Any, source: _Stream, rows: list[str], number: int) -> str | None:
    """``stop()``, then batch ``number`` is refused and changes nothing (module docstring)."""
    from spark_impl.reconfig.streaming import StreamStopped

    before = run.committed()
    marks = (before.batch, before.delivered, before.states)
    run.stop()
    if source.query is None or not source.query.stopped:
        return "DgsStreamingRun.stop() did not stop the query"
    try:
        source.batch(rows, number)
    except StreamStopped:
        pass
    else:
        return (f"batch {number} started after DgsStreamingRun.stop() and its foreachBatch call returned (committed "
                f"batch {run.committed().batch}): Structured Streaming commits it, and a restart never replays it")
    after = run.store.read()
    if after is None or (after.batch, after.delivered, after.states) != marks:
        return f"batch {number}, refused after stop(), changed the commit from {marks} to {after}"
    return None

