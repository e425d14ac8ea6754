"""The live DGS front end run as a user runs it, on the pure-Python Spark stand-in.

:func:`run_query` starts the real :func:`spark_impl.dgs.streaming.start_dgs_query` with its
defaults (no ``keep_records``) on :class:`conformance.standin.spark.LocalSpark` and a stand-in
streaming source (:class:`conformance.standin.streaming.Stream`), and calls the
``foreachBatch`` function the query registered, file by file, as Structured Streaming would.
Its jobs are drawn DGS cases (one job per case), their files cut as the live engine cuts them
(:func:`conformance.dgs.engines.live.case_chunks`), with the inlining bounds of
:func:`support.dgs_variants.variant` and the live engine's re-plans
(:func:`conformance.dgs.engines.replan.replan_of`). The last file comes after ``stop()``; a
new query on the checkpoint then computes it. What each batch left behind is recorded in a
:class:`QueryRun` for the tests to hold against the front end's docstrings; the outputs go to
a ``CallbackSink``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Sequence

from reference.dgs.examples import target
from spark_impl.dgs.driver import inline_short_segments, steps_of
from spark_impl.dgs.streaming import DgsStreamingRun, LiveJob, start_dgs_query
from spark_impl.dgs.streaming_input import Mailbox, group_rows, receive
from spark_impl.dgs.streaming_replan import remap_mailbox
from spark_impl.dgs.streaming_store import Store
from spark_impl.dgs.topology import topology
from spark_impl.reconfig.sinks import CallbackSink
from spark_impl.reconfig.streaming import StreamStopped

from conformance.dgs.cases import DgsCase, draw_dgs_cases, program_of
from conformance.dgs.engines.live import Collected, case_chunks
from conformance.dgs.engines.replan import Replan, replan_of
from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import Frame, Stream
from support.dgs_variants import variant

CASES = 8
"""Jobs of the query: the first cases of :func:`conformance.dgs.cases.draw_dgs_cases`."""

SEED = 7
"""Their seed (chosen for it): five jobs re-planned, before batches 1 (two jobs), 2, 3 and - on
the query started after ``stop()`` - 4; events inlined in batches 1, 3 and 4."""


def query_cases() -> list[DgsCase]:
    """The query's jobs (module docstring)."""
    return [variant(case, index)[0] for index, case in enumerate(draw_dgs_cases(CASES, SEED))]


class Rows:
    """A delivered stand-in DataFrame whose rows read by column name (as Spark's ``Row``)."""

    def __init__(self, df: Any) -> None:
        self.df = df

    def collect(self) -> list[dict[str, Any]]:
        """The rows as ``{column: value}``."""
        names = [column.split()[0] for column in self.df.schema.split(",")]
        return [dict(zip(names, row)) for row in self.df.collect()]


@dataclass
class Watch:
    """The sink's function: the outputs (:class:`conformance.dgs.engines.live.Collected`) and,
    at each delivery, the batch's ``processed`` records still on the checkpoint ``state``."""

    state: str
    collected: Collected = field(default_factory=Collected)
    processed: dict[int, list[tuple[int, Any]]] = field(default_factory=dict)

    def __call__(self, df: Any, batch_id: int) -> None:
        self.collected(Rows(df), batch_id)
        self.processed[batch_id] = [(job, value) for batch, records in Store(self.state).records(batch_id)
                                    if batch == batch_id for job, kind, value in records if kind == "processed"]


class Mirror:
    """Each job's mailbox, topology and inlining bound, kept on the side: which worker
    ``inline_short_segments(topo, steps_of(topo, receive(...)), inline_below)`` names for
    every event of a batch."""

    def __init__(self, cases: Sequence[DgsCase]) -> None:
        self.programs = [program_of(case.name) for case in cases]
        self.topos = [topology(p, case.plan) for p, case in zip(self.programs, cases)]
        self.boxes = [Mailbox() for _ in cases]
        self.below = [case.inline_below for case in cases]
        self.inlined = 0

    def replan(self, job: int, plan: Any) -> None:
        """Job ``job`` goes on under ``plan`` (its mailbox remapped)."""
        self.topos[job] = topology(self.programs[job], plan)
        self.boxes[job] = remap_mailbox(self.boxes[job], self.topos[job])

    def workers(self, rows: list[str], batch_id: int) -> list[list[tuple[Any, str]]]:
        """Per job, ``(key, worker)`` of every event the batch of ``rows`` processes, in key order."""
        found = []
        for job, items in enumerate(group_rows(rows, len(self.boxes), batch_id)):
            topo = self.topos[job]
            steps = steps_of(topo, receive(self.programs[job], topo, self.boxes[job], items, f"batch {batch_id}"))
            plain = by_worker(topo, steps)
            inlined = by_worker(topo, inline_short_segments(topo, steps, self.below[job]))
            self.inlined += len(set(inlined) - set(plain))
            found.append(inlined)
        return found


def by_worker(topo: Any, steps: Sequence[Any]) -> list[tuple[Any, str]]:
    """``(key, worker)`` of every event of ``steps``, sorted."""
    pairs = [(key, topo.leaves[leaf]) for segment, _ in steps for leaf, events in enumerate(segment)
             for key, _ in events]
    pairs += [(key, sync[0]) for _, sync in steps if sync is not None for key, _ in sync[1]]
    return sorted(pairs)


@dataclass
class BatchSeen:
    """What batch ``number`` left: the commit's ``(batch, delivered)``, the committed states,
    the checkpoint's ``states/`` and ``records/`` listings, the run's bookkeeping
    ``(batches, replayed, replanned, sorted batch_ms keys)``, what the run computed and
    re-planned by then, and per job the ``(key, worker)`` its records name and the mirror's."""

    number: int
    restarted: bool
    committed: tuple[int, int]
    states: str
    listed: tuple[list[str], list[str]]
    bookkeeping: tuple[list[int], list[int], list[tuple[int, int]], list[int]]
    computed: list[int]
    replanned: list[tuple[int, int]]
    named: list[list[tuple[Any, str]]]
    expected: list[list[tuple[Any, str]]]


@dataclass
class StopSeen:
    """``stop()`` before the last file: whether the query stopped, whether the next
    ``foreachBatch`` call raised ``StreamStopped``, and the commit's ``(batch, delivered,
    states)`` before and after that call."""

    query_stopped: bool
    refused: bool
    before: tuple[int, int, str]
    after: tuple[int, int, str] | None


@dataclass
class QueryRun:
    """Everything :func:`run_query` saw (module docstring)."""

    cases: list[DgsCase]
    replans: list[Replan | None]
    batches: list[BatchSeen]
    stop: StopSeen
    watch: Watch
    inlined: int
    final_states: list[Any]
    keep_records: bool


def run_query(cases: Sequence[DgsCase], root: str) -> QueryRun:
    """Run ``cases`` as one query on the checkpoint ``root`` (module docstring)."""
    chunks = [case_chunks(case) for case in cases]
    files = [[json.dumps({"job": job, **row}) for job, parts in enumerate(chunks) if number < len(parts)
              for row in parts[number]] for number in range(max(len(parts) for parts in chunks))]
    replans = [replan_of(case, len(parts)) for case, parts in zip(cases, chunks)]
    watch = Watch(f"{root}/dgs")
    mirror = Mirror(cases)
    last = len(files) - 1

    def start(jobs: Sequence[LiveJob]) -> tuple[DgsStreamingRun, Stream]:
        source = Stream(columns=("value",))
        return start_dgs_query(LocalSpark(), jobs, source, checkpoint_dir=root, sink=CallbackSink(watch)), source

    run, source = start([LiveJob(target(c.name), c.plan, c.inline_below) for c in cases])
    keep_records = run.keep_records
    computed: list[int] = []
    replanned: list[tuple[int, int]] = []
    seen: list[BatchSeen] = []
    stop: StopSeen | None = None
    for number, rows in enumerate(files):
        if number == last:
            stop = _stop(run, source, rows, number)
            run, source = start(run.jobs)
            computed, replanned = [], []
        for job, replan in enumerate(replans):
            if replan is not None and replan.before == number:
                run.replan(replan.plan, job=job)
                mirror.replan(job, replan.plan)
                replanned.append((number, job))
        expected = mirror.workers(rows, number)
        source.handler(Frame(rows), number)
        computed.append(number)
        commit = run.committed()
        location = run.store.location
        named = [sorted((key, by) for j, (by, key, _) in watch.processed.get(number, []) if j == job)
                 for job in range(len(cases))]
        seen.append(BatchSeen(number, number == last, (commit.batch, commit.delivered), commit.states,
                              (location.list("states"), location.list("records")),
                              (list(run.batches), list(run.replayed), list(run.replanned), sorted(run.batch_ms)),
                              list(computed), list(replanned), named, expected))
    assert stop is not None, "the query has fewer than two files"
    return QueryRun(list(cases), replans, seen, stop, watch, mirror.inlined, run.final_states(), keep_records)


def _stop(run: DgsStreamingRun, source: Stream, rows: list[str], number: int) -> StopSeen:
    """``stop()``, then batch ``number`` offered to the stopped query."""
    before = run.committed()
    run.stop()
    stopped = source.writeStream.query.stopped
    try:
        source.handler(Frame(rows), number)
        refused = False
    except StreamStopped:
        refused = True
    after = run.store.read()
    return StopSeen(stopped, refused, (before.batch, before.delivered, before.states),
                    None if after is None else (after.batch, after.delivered, after.states))
