"""Running a DGS program under a synchronization plan on Spark (docs/spark-dgs-oplus.md).

The driver is the coordinator (it holds the batch-level mailbox, spark_impl.dgs.release);
the state lives in an RDD with one element per leaf of the plan (spark_impl.dgs.topology).
For every tick with released events the driver builds one chain of Spark stages and runs it
as one job:

* a run of leaf events becomes a **leaf segment**: the events are sent to their leaf's
  partition and ``states.zip(events)`` lets every leaf process its own events, in key order,
  in parallel tasks, without moving any state;
* a synchronizing event of worker ``w`` (consecutive ones of the same worker are merged)
  becomes two shuffles: **gather** the states of ``w``'s subtree leaves at ``w``'s host
  partition, where one task joins them up to ``w``, processes the event(s) with ``w``'s
  state type and forks the state back down; then **scatter** the new leaf states back.

Outputs go to the file sink (spark_impl.sink); the driver reads them once, at the end. After
each tick the states are materialized and their lineage cut. A user function that raises in
a task stops the run with the program's one-line error (InputError), never a half-run
stream without a message.
"""

from __future__ import annotations

import shutil
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Mapping

from spec.dgs.loader import load_program
from spec.dgs.plan import Plan, plan_from_json
from spec.dgs.streams import Streams
from spec.errors import InputError

from spark_impl.dgs.release import Arrival, Released, release_schedule
from spark_impl.dgs.tasks import final_state, gather, initial_states, leaf_segment, synchronize
from spark_impl.dgs.topology import Topology, topology
from spark_impl.sink import read_parts


@dataclass
class TickStats:
    """One tick's job: how many events, how many synchronizing steps, its wall time."""

    events: int
    syncs: int
    seconds: float


@dataclass
class DgsRun:
    """The outputs (a multiset, in no particular order), the final state (every leaf joined
    back into the root), the processed events ``(worker id, key, payload)`` - the reference
    executor's formats - and what the run cost."""

    outputs: list[Any]
    leaves: int
    final_state: Any = None
    processed: list[tuple[str, tuple[int, str], Any]] = field(default_factory=list)
    ticks: list[TickStats] = field(default_factory=list)

    @property
    def seconds(self) -> float:
        """Wall time of all tick jobs."""
        return sum(t.seconds for t in self.ticks)


Step = tuple[str, Any]  # ("leaf", [[events of leaf 0], ...]) or ("sync", (worker, [events]))


def steps_of(topo: Topology, released: list[Released]) -> list[Step]:
    """Cut a tick's released events (key order) into leaf segments and synchronizing steps."""
    steps: list[Step] = []
    segment: list[list[Any]] = [[] for _ in topo.leaves]
    for event in released:
        leaf = topo.leaf_index(event.worker)
        if leaf is not None:
            segment[leaf].append((event.key, event.payload))
            continue
        if any(segment):
            steps.append(("leaf", segment))
            segment = [[] for _ in topo.leaves]
        if steps and steps[-1][0] == "sync" and steps[-1][1][0] == event.worker:
            steps[-1][1][1].append((event.key, event.payload))
        else:
            steps.append(("sync", (event.worker, [(event.key, event.payload)])))
    if any(segment):
        steps.append(("leaf", segment))
    return steps


def run_dgs(spark: Any, target: str, plan: Plan | Mapping[str, Any], streams: Streams, *,
            arrival: Arrival = Arrival(), tick: int = 1_000_000, sink_dir: str | None = None) -> DgsRun:
    """Run the program at ``target`` (``file.py:NAME``, simple or multi-state form) under
    ``plan`` on ``streams``; ``arrival`` models per-stream delays, ``tick`` the driver's
    polling period in time units (the default releases everything in one tick)."""
    program = load_program(target)
    parsed = plan if isinstance(plan, Plan) else plan_from_json(plan)
    topo = topology(program, parsed)
    schedule = release_schedule(program, topo, streams, arrival, tick)
    sc = spark.sparkContext
    leaves = len(topo.leaves)
    sink = sink_dir or tempfile.mkdtemp(prefix="streamproof-dgs-sink-")
    result = DgsRun([], leaves)
    try:
        states = _materialize(sc.parallelize([0], 1)
                              .flatMap(lambda _: initial_states(target, topo))
                              .partitionBy(leaves, _identity).map(_value))
        for number, released in enumerate(schedule):
            steps = steps_of(topo, released)
            start = time.perf_counter()
            rdd = states
            for index, (kind, body) in enumerate(steps):
                name = f"t{number:06d}-s{index:05d}"
                if kind == "leaf":
                    rdd = rdd.zip(sc.parallelize(body, leaves)).mapPartitionsWithIndex(
                        leaf_segment(target, topo, sink, name))
                else:
                    worker, events = body
                    rdd = (rdd.mapPartitionsWithIndex(gather(topo, worker))
                           .partitionBy(leaves, _identity)
                           .mapPartitionsWithIndex(synchronize(target, topo, worker, events, sink, name))
                           .partitionBy(leaves, _identity).map(_value))
            new_states = _materialize(rdd)
            states.unpersist()
            states = new_states
            result.ticks.append(TickStats(len(released), sum(k == "sync" for k, _ in steps),
                                          time.perf_counter() - start))
        (result.final_state,) = (states.mapPartitionsWithIndex(gather(topo, parsed.root.id))
                                 .partitionBy(leaves, _identity)
                                 .mapPartitionsWithIndex(final_state(target, topo)).collect())
        states.unpersist()
        for _, records in read_parts(sink):
            for kind, value in records:
                (result.outputs if kind == "out" else result.processed).append(value)
        result.processed.sort(key=lambda entry: entry[1])
    finally:
        if sink_dir is None:
            shutil.rmtree(sink, ignore_errors=True)
    return result


def _materialize(rdd: Any) -> Any:
    """Compute once, cut the lineage (persist first: see spark_impl.oplus.driver); a user
    function's exception inside a task becomes the program's one-line InputError."""
    rdd.persist()
    rdd.localCheckpoint()
    try:
        rdd.count()
    except Exception as error:  # noqa: BLE001 - Py4J wraps the task's exception
        problem = _user_error(str(error))
        if problem is None:
            raise
        raise InputError(problem) from None
    return rdd


def _user_error(text: str) -> str | None:
    marker = "UserCodeError: "
    for line in text.splitlines():
        if marker in line:
            return line.split(marker, 1)[1].strip()
    return None


def _identity(partition: int) -> int:
    return partition


def _value(entry: tuple[int, Any]) -> Any:
    return entry[1]
