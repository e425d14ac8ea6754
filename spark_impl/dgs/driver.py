"""Running DGS programs under synchronization plans on Spark (docs/spark-dgs-oplus.md).

The driver releases the events (it holds the batch-level mailbox, spark_impl.dgs.release);
the state lives in an RDD whose partition ``i`` holds leaf ``i`` (spark_impl.dgs.topology)
of every run of the batch.
For every tick with released events the driver builds one chain of Spark stages and runs it
as one job:

* a run of leaf events becomes a **leaf segment**: the events are sent to their leaf's
  partition and ``states.zip(events)`` lets every leaf process its own events, in key order,
  in parallel tasks, without moving any state;
* a synchronizing event of worker ``w`` (consecutive ones of the same worker are merged)
  becomes two shuffles: **gather** the states of ``w``'s subtree leaves at ``w``'s host
  partition, where one task joins them up to ``w``, processes the event(s) with ``w``'s
  state type and forks the state back down; then **scatter** the new leaf states back.

Several runs share the same Spark jobs (:func:`run_dgs_many`: tick ``t`` of every run in one
job, leaf i of every run in partition i, spark_impl.dgs.tasks.Layout), which is how tests and the
conformance suite run many cases. Outputs go to the file sink (spark_impl.sink); the driver
reads them once, at the end, with each run's final state (its leaves joined back into the
root) and processed-event trace, in the reference executor's formats. After
each tick the states are materialized and their lineage cut. A user function that raises in
a task stops the run with the program's one-line error (InputError), never a half-run
stream without a message.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from spec.dgs.loader import load_program
from spec.dgs.plan import Plan, plan_from_json
from spec.dgs.streams import Streams
from spec.errors import InputError

from spark_impl.dgs.release import Arrival, Released, release_schedule
from spark_impl.dgs.tasks import (
    Layout, Slot, Sync, collect_slots, final_states, gather, initial_states, leaf_segment, synchronize,
)
from spark_impl.dgs.topology import Topology, topology
from spark_impl.lineage import cut_lineage
from spark_impl.sink import read_parts


@dataclass
class TickStats:
    """One tick's job: this run's events and synchronizing steps in it, the job's wall time
    (shared by every run of the batch)."""

    events: int
    syncs: int
    seconds: float


@dataclass
class DgsRun:
    """The outputs (a multiset, in no particular order), the final state (every leaf joined
    back into the root), the processed events ``(worker id, key, payload)`` in key order - the
    reference executor's formats - and what the run cost."""

    outputs: list[Any]
    leaves: int
    final_state: Any = None
    processed: list[tuple[str, tuple[int, str], Any]] = field(default_factory=list)
    ticks: list[TickStats] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """Wall time of all tick jobs."""
        return sum(t.seconds for t in self.ticks)


@dataclass(frozen=True)
class DgsJob:
    """One run: program ``file.py:NAME``, plan (object or JSON), input streams, arrival model
    and the driver's polling period (the default releases everything in one tick)."""

    target: str
    plan: Plan | Mapping[str, Any]
    streams: Streams
    arrival: Arrival = Arrival()
    tick: int = 1_000_000
    inline_below: int = 0  # see inline_short_segments (0 = run the plan as given)


Pair = tuple[list[list[tuple[Any, Any]]], tuple[str, list[tuple[Any, Any]]] | None]
"""One step of a run: a leaf segment (events per leaf) then, optionally, a synchronizing
event group of one worker."""


def steps_of(topo: Topology, released: list[Released]) -> list[Pair]:
    """Cut a tick's released events (key order) into (leaf segment, synchronizing group)."""
    steps: list[Pair] = []
    segment: list[list[tuple[Any, Any]]] = [[] for _ in topo.leaves]
    for event in released:
        entry = (event.key, event.payload)
        leaf = topo.leaf_index(event.worker)
        if leaf is not None:
            segment[leaf].append(entry)
            continue
        last = steps[-1][1] if steps else None
        if not any(segment) and last is not None and last[0] == event.worker:
            last[1].append(entry)
        else:
            steps.append((segment, (event.worker, [entry])))
            segment = [[] for _ in topo.leaves]
    if any(segment):
        steps.append((segment, None))
    return steps


def inline_short_segments(topo: Topology, steps: list[Pair], below: int) -> list[Pair]:
    """The runtime optimization (off when ``below <= 0``): a leaf segment with fewer than
    ``below`` events, all on leaves under worker ``w``, between two synchronizing groups of
    ``w`` is processed at ``w`` itself, in key order between the two groups, saving a scatter
    and a gather. Valid: V1 makes ``w``'s state type handle every tag of its subtree, and the
    events are processed in the sequential order. Such events appear in the trace as
    processed by ``w``."""
    if below <= 0 or not steps:
        return steps
    merged = [steps[0]]
    for segment, sync in steps[1:]:
        previous_segment, previous = merged[-1]
        if (previous is not None and sync is not None and sync[0] == previous[0]
                and sum(len(events) for events in segment) < below
                and all(not events or leaf in topo.subtree_leaves[sync[0]] for leaf, events in enumerate(segment))):
            inlined = sorted((entry for events in segment for entry in events), key=lambda entry: entry[0])
            merged[-1] = (previous_segment, (previous[0], previous[1] + inlined + sync[1]))
        else:
            merged.append((segment, sync))
    return merged


def run_dgs(spark: Any, target: str, plan: Plan | Mapping[str, Any], streams: Streams, *,
            arrival: Arrival = Arrival(), tick: int = 1_000_000, inline_below: int = 0,
            sink_dir: str | None = None) -> DgsRun:
    """Run the program at ``target`` (``file.py:NAME``, simple or multi-state form) under
    ``plan`` on ``streams``; ``arrival`` models per-stream delays, ``tick`` the driver's
    polling period in time units, ``inline_below`` the optional runtime optimization
    (:func:`inline_short_segments`)."""
    job = DgsJob(target, plan, streams, arrival, tick, inline_below)
    return run_dgs_many(spark, [job], sink_dir=sink_dir)[0]


def run_dgs_many(spark: Any, jobs: Sequence[DgsJob], *, sink_dir: str | None = None) -> list[DgsRun]:
    """Run every job; tick ``t`` of all of them is one Spark job. Every job is validated
    (program, plan, input) before any Spark job starts."""
    if not jobs:
        return []
    topos: list[Topology] = []
    schedules: list[list[list[Released]]] = []
    for index, job in enumerate(jobs):
        try:
            program = load_program(job.target)
            parsed = job.plan if isinstance(job.plan, Plan) else plan_from_json(job.plan)
            topos.append(topology(program, parsed))
            schedules.append(release_schedule(program, topos[-1], job.streams, job.arrival, job.tick))
        except InputError as error:
            raise (error if len(jobs) == 1 else error.located(f"jobs[{index}]")) from None
    layout = Layout(tuple(j.target for j in jobs), tuple(topos))
    sc = spark.sparkContext
    total = layout.partitions
    sink = sink_dir or tempfile.mkdtemp(prefix="streamproof-dgs-sink-")
    runs = [DgsRun([], len(t.leaves)) for t in topos]
    try:
        states = _materialize(sc.parallelize(range(len(jobs)), len(jobs))
                              .flatMap(lambda run: initial_states(layout, run))
                              .partitionBy(total, identity_partition).mapPartitions(collect_slots))
        for number in range(max(len(s) for s in schedules)):
            plans = {j: inline_short_segments(topos[j], steps_of(topos[j], s[number]), jobs[j].inline_below)
                     for j, s in enumerate(schedules) if number < len(s)}
            start = time.perf_counter()
            rdd = states
            for index in range(max(len(p) for p in plans.values())):
                rdd = _step(sc, layout, rdd, {j: p[index] for j, p in plans.items() if index < len(p)},
                            sink, f"t{number:06d}-s{index:05d}")
            new_states = _materialize(rdd)
            states.unpersist()
            states = new_states
            seconds = time.perf_counter() - start
            for j, steps in plans.items():
                runs[j].ticks.append(TickStats(len(schedules[j][number]),
                                               sum(sync is not None for _, sync in steps), seconds))
        roots = {slot: layout.host(j, t.plan.root.id) for j, t in enumerate(topos)
                 for slot in layout.members(j, t.plan.root.id)}
        for run, state in (states.mapPartitionsWithIndex(gather(roots)).partitionBy(total, identity_partition)
                           .mapPartitionsWithIndex(final_states(layout)).collect()):
            runs[run].final_state = state
        states.unpersist()
        for _, records in read_parts(sink):
            for run, kind, value in records:
                (runs[run].outputs if kind == "out" else runs[run].processed).append(value)
        for result in runs:
            result.processed.sort(key=lambda entry: entry[1])
    finally:
        if sink_dir is None:
            shutil.rmtree(sink, ignore_errors=True)
    return runs


def combined_step(sc: Any, layout: Layout, rdd: Any, pairs: dict[int, Pair], sink: str, name: str) -> Any:
    """One combined step: every run's leaf segment (one stage, in place), then every run's
    synchronizing group (gather, synchronize at the hosts, scatter)."""
    lists: list[dict[Slot, list[tuple[Any, Any]]]] = [{} for _ in range(layout.partitions)]
    syncs: dict[int, list[Sync]] = {}
    routes: dict[Slot, int] = {}
    for run, (segment, sync) in pairs.items():
        for leaf, events in enumerate(segment):
            if events:
                lists[leaf][(run, leaf)] = events
        if sync is not None:
            worker, events = sync
            host = layout.host(run, worker)
            syncs.setdefault(host, []).append((run, worker, events))
            routes.update({slot: host for slot in layout.members(run, worker)})
    if any(lists):
        rdd = rdd.zip(sc.parallelize(lists, layout.partitions)).mapPartitionsWithIndex(
            leaf_segment(layout, sink, f"{name}-leaf"))
    if syncs:
        rdd = (rdd.mapPartitionsWithIndex(gather(routes)).partitionBy(layout.partitions, identity_partition)
               .mapPartitionsWithIndex(synchronize(layout, syncs, sink, f"{name}-sync"))
               .partitionBy(layout.partitions, identity_partition).mapPartitions(collect_slots))
    return rdd


_step = combined_step  # the name this module's calls use


def _materialize(rdd: Any) -> Any:
    """Compute once, cut the lineage (:func:`spark_impl.lineage.cut_lineage`: survives an
    executor loss when the context has a checkpoint directory); a user function's exception
    inside a task becomes the program's one-line InputError."""
    cut_lineage(rdd)
    try:
        rdd.count()
    except Exception as error:  # noqa: BLE001 - Py4J wraps the task's exception
        problem = _user_error(str(error))
        if problem is None:
            raise
        raise InputError(problem) from None
    return rdd


def user_error(text: str) -> str | None:
    """The user's one-line error in the text of a failed Spark job (the line a task's
    ``UserCodeError`` left), or None when the failure is not the user's (shared with the live
    executor, :mod:`spark_impl.dgs.streaming`)."""
    marker = "UserCodeError: "
    for line in text.splitlines():
        if marker in line:
            return line.split(marker, 1)[1].strip()
    return None


_user_error = user_error  # the name this module's calls use


def identity_partition(partition: int) -> int:
    """``partitionBy``'s partitioner for keys that are already partition numbers."""
    return partition
