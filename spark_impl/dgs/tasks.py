"""What runs inside Spark tasks for DGS: the user's program, fork down, join up, and the task
functions (initial fork, leaf segment, gather, synchronize, final join).

Several runs (jobs) share one Spark job: partition ``i`` holds leaf ``i`` of every run
(:class:`Layout`), as ``{(run, leaf): state}``. The program is shipped as its ``file.py:NAME`` target and loaded
once per Python worker (:func:`program_for`), as ``--py-files`` / ``--files`` ship user code
to a cluster: a module loaded from a file under a generated name cannot be pickled by
reference. Task records written to the sink are ``(run, "out", output)`` and ``(run,
"processed", (worker, key, payload))``: the reference executor's trace format.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from spec.dgs.loader import load_program
from spec.dgs.program import Program

from spark_impl.dgs.topology import Topology
from spark_impl.sink import write_part

_PROGRAMS: dict[str, Program] = {}

Sync = tuple[int, str, list[tuple[Any, Any]]]
"""A synchronizing step of one run: ``(run, worker id, [(key, payload), ...])``."""


Slot = tuple[int, int]
"""``(run, leaf index)``: one leaf of one run."""

PartitionStates = dict[Slot, Any]
"""The one element of a state partition: the states of the leaves it holds."""


@dataclass(frozen=True)
class Layout:
    """Runs side by side: run ``j`` has program ``targets[j]`` and plan ``topos[j]``; leaf
    ``i`` of every run lives in partition ``i`` (so a stage has as many tasks as the widest
    plan has leaves, whatever the number of runs)."""

    targets: tuple[str, ...]
    topos: tuple[Topology, ...]

    @property
    def partitions(self) -> int:
        """Number of partitions: the most leaves of any run."""
        return max(len(t.leaves) for t in self.topos)

    def host(self, run: int, worker_id: str) -> int:
        """Partition where ``worker_id`` of ``run`` synchronizes (its leftmost leaf's)."""
        return self.topos[run].host(worker_id)

    def members(self, run: int, worker_id: str) -> frozenset[Slot]:
        """The leaves below ``worker_id`` of ``run``."""
        return frozenset((run, i) for i in self.topos[run].subtree_leaves[worker_id])


def program_for(target: str) -> Program:
    """The program at ``target``, loaded once per process."""
    program = _PROGRAMS.get(target)
    if program is None:
        program = _PROGRAMS[target] = load_program(target)
    return program


def fork_down(program: Program, topo: Topology, worker_id: str, state: Any) -> dict[int, Any]:
    """Fork ``worker_id``'s state recursively into its subtree's leaf states (local index)."""
    worker = topo.workers[worker_id]
    if not worker.children:
        return {topo.subtree_leaves[worker_id][0]: state}
    left, right = worker.children
    assert worker.fork is not None  # V1: a worker with children names a fork
    a, b = program.fork(worker.fork, state, left.subtree_tags(), right.subtree_tags())
    return {**fork_down(program, topo, left.id, a), **fork_down(program, topo, right.id, b)}


def join_up(program: Program, topo: Topology, worker_id: str, leaves: dict[int, Any]) -> Any:
    """Join the subtree's leaf states (by local index) recursively into ``worker_id``'s state."""
    worker = topo.workers[worker_id]
    if not worker.children:
        return leaves[topo.subtree_leaves[worker_id][0]]
    left, right = worker.children
    assert worker.join is not None  # V1: a worker with children names a join
    return program.join(worker.join, join_up(program, topo, left.id, leaves),
                        join_up(program, topo, right.id, leaves))


def run_events(program: Program, run: int, worker_id: str, state_type: str, state: Any,
               events: list[tuple[Any, Any]]) -> tuple[Any, list[tuple[int, str, Any]]]:
    """Process ``(key, payload)`` events in order with ``state_type``'s out and update
    (Def. 2.1 item 6); returns the new state and the sink records."""
    records: list[tuple[int, str, Any]] = []
    for key, event in events:
        records.extend((run, "out", x) for x in program.out(state_type, state, event))
        records.append((run, "processed", (worker_id, key, event)))
        state = program.update(state_type, state, event)
    return state, records


def initial_states(layout: Layout, run: int) -> list[tuple[int, tuple[Slot, Any]]]:
    """``init()`` at the root of ``run`` forked down to its leaves: ``[(partition, (slot,
    state))]``."""
    program = program_for(layout.targets[run])
    topo = layout.topos[run]
    states = fork_down(program, topo, topo.plan.root.id, program.init())
    return sorted((i, ((run, i), s)) for i, s in states.items())


def collect_slots(entries: Iterator[tuple[int, tuple[Slot, Any]]]) -> Iterator[PartitionStates]:
    """After a shuffle: the partition's one element, ``{slot: state}``."""
    yield dict(entry for _, entry in entries)


def leaf_segment(layout: Layout, sink: str, name: str) -> Any:
    """The task function of a leaf segment: each leaf processes its own events."""
    def task(index: int, pairs: Iterator[tuple[PartitionStates, dict[Slot, list[Any]]]]
             ) -> Iterator[PartitionStates]:
        for states, events in pairs:
            records: list[tuple[int, str, Any]] = []
            for (run, leaf), todo in sorted(events.items()):
                topo = layout.topos[run]
                worker = topo.leaves[leaf]
                states[(run, leaf)], done = run_events(
                    program_for(layout.targets[run]), run, worker, topo.workers[worker].state_type,
                    states[(run, leaf)], todo)
                records.extend(done)
            write_part(sink, f"{name}-p{index:05d}", records)
            yield states
    return task


def gather(routes: dict[Slot, int]) -> Any:
    """Send the states of ``routes``' slots to their host partition; the others stay."""
    def task(index: int, parts: Iterator[PartitionStates]) -> Iterator[tuple[int, tuple[Slot, Any]]]:
        for states in parts:
            for slot, state in states.items():
                yield routes.get(slot, index), (slot, state)
    return task


def synchronize(layout: Layout, syncs: dict[int, list[Sync]], sink: str, name: str) -> Any:
    """At each host: for every synchronizing group hosted here, join the subtree up to the
    worker, process its events, fork back down. Emits ``(partition, (slot, state))`` for the
    return shuffle."""
    def task(index: int, entries: Iterator[tuple[int, tuple[Slot, Any]]]
             ) -> Iterator[tuple[int, tuple[Slot, Any]]]:
        gathered: PartitionStates = dict(entry for _, entry in entries)
        records: list[tuple[int, str, Any]] = []
        for run, worker_id, events in syncs.get(index, []):
            topo = layout.topos[run]
            program = program_for(layout.targets[run])
            members = layout.members(run, worker_id)
            state = join_up(program, topo, worker_id, {leaf: gathered[(r, leaf)] for r, leaf in members})
            state, done = run_events(program, run, worker_id, topo.workers[worker_id].state_type, state, events)
            records.extend(done)
            gathered.update(((run, leaf), s) for leaf, s in fork_down(program, topo, worker_id, state).items())
        write_part(sink, f"{name}-p{index:05d}", records)
        for slot, state in gathered.items():
            yield slot[1], (slot, state)
    return task


def final_states(layout: Layout) -> Any:
    """At each run's root host: join every leaf state back into the root's state; emits
    ``(run, final state)``."""
    def task(index: int, entries: Iterator[tuple[int, tuple[Slot, Any]]]) -> Iterator[tuple[int, Any]]:
        by_run: dict[int, dict[int, Any]] = {}
        for _, ((run, leaf), state) in entries:
            by_run.setdefault(run, {})[leaf] = state
        for run, leaves in sorted(by_run.items()):
            topo = layout.topos[run]
            yield run, join_up(program_for(layout.targets[run]), topo, topo.plan.root.id, leaves)
    return task
