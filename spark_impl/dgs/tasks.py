"""What runs inside Spark tasks for DGS: the user's program, fork down, join up, and the three
task functions (leaf segment, gather for a synchronizing event, synchronize).

The program is shipped as its ``file.py:NAME`` target and loaded once per Python worker
(:func:`program_for`), as ``--py-files`` / ``--files`` ship user code to a cluster: a module
loaded from a file under a generated name cannot be pickled by reference.
"""

from __future__ import annotations

from typing import Any, Iterator

from spec.dgs.loader import load_program
from spec.dgs.program import Program

from spark_impl.dgs.topology import Topology
from spark_impl.sink import write_part

_PROGRAMS: dict[str, Program] = {}


def program_for(target: str) -> Program:
    """The program at ``target``, loaded once per process."""
    program = _PROGRAMS.get(target)
    if program is None:
        program = _PROGRAMS[target] = load_program(target)
    return program


def fork_down(program: Program, topo: Topology, worker_id: str, state: Any) -> dict[int, Any]:
    """Fork ``worker_id``'s state recursively into its subtree's leaf states (by partition)."""
    worker = topo.workers[worker_id]
    if not worker.children:
        return {topo.subtree_leaves[worker_id][0]: state}
    left, right = worker.children
    assert worker.fork is not None  # V1: a worker with children names a fork
    a, b = program.fork(worker.fork, state, left.subtree_tags(), right.subtree_tags())
    return {**fork_down(program, topo, left.id, a), **fork_down(program, topo, right.id, b)}


def join_up(program: Program, topo: Topology, worker_id: str, leaves: dict[int, Any]) -> Any:
    """Join the subtree's leaf states recursively into ``worker_id``'s state."""
    worker = topo.workers[worker_id]
    if not worker.children:
        return leaves[topo.subtree_leaves[worker_id][0]]
    left, right = worker.children
    assert worker.join is not None  # V1: a worker with children names a join
    return program.join(worker.join, join_up(program, topo, left.id, leaves),
                        join_up(program, topo, right.id, leaves))


def run_events(program: Program, worker_id: str, state_type: str, state: Any,
               events: list[tuple[Any, Any]]) -> tuple[Any, list[tuple[str, Any]]]:
    """Process ``(key, payload)`` events in order with ``state_type``'s out and update
    (Def. 2.1 item 6). Records: ``("out", output)`` and ``("processed", (worker, key,
    payload))`` - the reference executor's trace format."""
    records: list[tuple[str, Any]] = []
    for key, event in events:
        records.extend(("out", x) for x in program.out(state_type, state, event))
        records.append(("processed", (worker_id, key, event)))
        state = program.update(state_type, state, event)
    return state, records


def initial_states(target: str, topo: Topology) -> list[tuple[int, Any]]:
    """``init()`` at the root forked down to every leaf: ``[(partition, state)]``."""
    program = program_for(target)
    return sorted(fork_down(program, topo, topo.plan.root.id, program.init()).items())


def leaf_segment(target: str, topo: Topology, sink: str, name: str
                 ) -> Any:
    """The task function of a leaf segment: each leaf processes its own events."""
    def run(index: int, pairs: Iterator[tuple[Any, list[Any]]]) -> Iterator[Any]:
        program = program_for(target)
        worker = topo.leaves[index]
        for state, events in pairs:
            new_state, outputs = run_events(program, worker, topo.workers[worker].state_type, state, events)
            write_part(sink, f"{name}-p{index:05d}", outputs)
            yield new_state
    return run


def gather(topo: Topology, worker_id: str) -> Any:
    """Send the subtree's leaf states to the host of ``worker_id``; others stay."""
    members = set(topo.subtree_leaves[worker_id])
    host = topo.host(worker_id)

    def run(index: int, states: Iterator[Any]) -> Iterator[tuple[int, tuple[int, Any]]]:
        for state in states:
            yield (host if index in members else index), (index, state)
    return run


def final_state(target: str, topo: Topology) -> Any:
    """The task function that joins every leaf state (all gathered at the root's host) back
    into the root's state: the run's final state, as the reference reports it."""
    host = topo.host(topo.plan.root.id)

    def run(index: int, entries: Iterator[tuple[int, tuple[int, Any]]]) -> Iterator[Any]:
        if index == host:
            yield join_up(program_for(target), topo, topo.plan.root.id, dict(e for _, e in entries))
    return run


def synchronize(target: str, topo: Topology, worker_id: str, events: list[Any], sink: str,
                name: str) -> Any:
    """At the host: join the subtree up to ``worker_id``, process its events, fork back down.
    Every partition emits ``(partition, state)`` for the return shuffle."""
    host = topo.host(worker_id)

    def run(index: int, entries: Iterator[tuple[int, tuple[int, Any]]]) -> Iterator[tuple[int, Any]]:
        gathered = dict(entry for _, entry in entries)
        if index != host:
            yield from gathered.items()
            return
        program = program_for(target)
        members = set(topo.subtree_leaves[worker_id])
        state = join_up(program, topo, worker_id, {i: s for i, s in gathered.items() if i in members})
        state, outputs = run_events(program, worker_id, topo.workers[worker_id].state_type, state, events)
        write_part(sink, f"{name}-p{index:05d}", outputs)
        yield from fork_down(program, topo, worker_id, state).items()
        yield from ((i, s) for i, s in gathered.items() if i not in members)
    return run
