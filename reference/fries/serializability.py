"""Linear-time conflict-serializability checking (Fries Def. 4.8, 4.9) - reference.

Verified against the brute-force definition :mod:`spec.fries.serializability` by
``tests/reference/fries/test_fries_serializability.py``.

**Why it is linear.** A schedule is conflict-serializable iff its precedence graph is acyclic
(the textbook theorem; the spec checks the definition itself, over all serial orders). The
full graph may have (data operations x updates) edges, so we build a *compressed* graph with
the same reachability. In each object's log the update operations cut the data operations
into segments; an operation conflicts with an update iff they are on the same object, so:

* a data operation of T after update u (and before the next one) gives u -> T,
* a data operation of T before update u' (and after the previous one) gives T -> u',
* consecutive updates u, u' of one object give u -> u'.

Every full edge is a path of these edges (follow the chain of updates of that object) and
every compressed edge is a full edge, so both graphs have the same transitive closure: the
same cycles, and the same topological orders. Further, a data transaction only touches
update transactions: one that is only ever *after* updates is a sink and one only *before*
updates (or touching no update) is a source; neither lies on a cycle. Only the *bridging*
data transactions (after some update and before some update) join the update transactions
in the graph we sort. Building it is array work over the logs (numpy), O(operations); the
sort is Kahn's algorithm over the compressed graph, O(its size) = O(operations).

**The witness.** When the graph has a cycle, :mod:`reference.fries.two_cycles` looks for a
2-cycle (the shortest possible) in O(operations) array work; when there is none,
:mod:`reference.fries.cycles` finds a shortest cycle of the full precedence graph by BFS.
Either way each edge comes with its evidence (object and the two log positions);
:meth:`Verdict.explain` tells it in words, in the style of Elle.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

from reference.fries.compact import CompactSchedule, compact_from_schedule, segments, update_mask
from reference.fries.cycles import Edge, shortest_cycle, strongly_connected
from reference.fries.two_cycles import shortest_two_cycle
from spec.fries.schedule import Schedule

_Mask = npt.NDArray[np.bool_]
_Ints = npt.NDArray[np.int64]


@dataclass(frozen=True)
class CycleStep:
    """One edge of a witness cycle: ``before`` must precede ``after`` in any equivalent
    serial order, because on ``obj`` the operation at ``before_position`` (of ``before``)
    precedes the conflicting operation at ``after_position`` (of ``after``)."""

    before: str
    after: str
    obj: str
    before_position: int
    after_position: int
    before_update: bool
    after_update: bool

    def explain(self) -> str:
        """This edge in words."""
        where = (f"({self.obj}: {self.before} at [{self.before_position}], then "
                 f"{self.after} at [{self.after_position}])")
        if self.before_update and self.after_update:
            return f"update {self.before} changed {self.obj} before update {self.after} did {where}"
        if self.before_update:
            return (f"update {self.before} changed {self.obj} before {self.after} "
                    f"reached it {where}")
        return f"{self.before} reached {self.obj} before update {self.after} changed it {where}"


@dataclass(frozen=True)
class Verdict:
    """The result of :func:`check_serializability`: a conflict-equivalent serial order
    (every transaction once) when serializable, else a shortest cycle of the precedence
    graph (transaction ids, the first not repeated at the end) and its edges."""

    serializable: bool
    serial_order: tuple[str, ...] | None
    cycle: tuple[str, ...] | None
    steps: tuple[CycleStep, ...]

    def explain(self) -> str:
        """The verdict in words (the cycle, edge by edge, when not serializable)."""
        if self.serializable:
            order = self.serial_order or ()
            shown = ", ".join(order[:20]) + (", ..." if len(order) > 20 else "")
            return (f"conflict-serializable: {len(order)} transactions; an equivalent serial "
                    f"order is {shown}")
        assert self.cycle is not None
        said = [s.explain() for s in self.steps]
        if len(self.cycle) == 2:
            a, b = self.cycle
            reason = f"{said[0]}, but {said[1]}: {a} must come both before and after {b}"
        else:
            chain_text = ", ".join(f"{s.before} before {s.after}" for s in self.steps)
            reason = "; ".join(said) + f": a serial order would need {chain_text}, a cycle"
        return f"NOT conflict-serializable: {reason}."

    def to_json(self) -> dict[str, Any]:
        """``{"serializable", "cycle", "serial_order"}`` (the check-schedule contract)."""
        return {
            "serializable": self.serializable,
            "cycle": list(self.cycle) if self.cycle is not None else None,
            "serial_order": list(self.serial_order) if self.serial_order is not None else None,
        }


def check_serializability(schedule: Schedule) -> Verdict:
    """Is ``schedule`` conflict-serializable (Def. 4.9)? Linear time; see the module doc."""
    return check_compact(compact_from_schedule(schedule))


def check_compact(schedule: CompactSchedule) -> Verdict:
    """:func:`check_serializability` on the compact form (what the CLI uses).

    The serial order lists, each group in order of first appearance (objects in input
    order, then log order): the data transactions that precede every update they conflict
    with, then those that conflict with nothing, then the update and bridging transactions
    in a topological order, then the data transactions that follow updates."""
    graph = compressed_graph(schedule)
    order = _topological(graph)
    names = schedule.names
    if order is not None:
        before, after, core = graph.before, graph.after, graph.core
        groups = [np.flatnonzero(before & ~after), np.flatnonzero(~before & ~after & ~core),
                  graph.nodes[np.array(order, dtype=np.int64)],
                  np.flatnonzero(after & ~before)]
        serial = np.concatenate(groups).tolist()
        return Verdict(True, tuple(map(names.__getitem__, serial)), None, ())
    edges = shortest_two_cycle(schedule, graph.before & graph.after)
    if edges is None:
        edges = longer_cycle(schedule, graph)
    steps = [CycleStep(names[a], names[b], obj, p, q,
                       schedule.is_update(obj, p), schedule.is_update(obj, q))
             for a, b, obj, p, q in edges]
    start = next((i for i, s in enumerate(steps) if not s.before_update), 0)
    steps = steps[start:] + steps[:start]
    return Verdict(False, None, tuple(s.before for s in steps), tuple(steps))


@dataclass
class _Graph:
    is_update: _Mask   # per transaction number
    before: _Mask      # data transactions with an operation before some update
    after: _Mask       # data transactions with an operation after some update
    core: _Mask        # update and bridging transactions
    nodes: _Ints       # the core transactions, ascending (= in appearance order)
    sources: _Ints     # compressed edges as indices into ``nodes``
    targets: _Ints


def compressed_graph(schedule: CompactSchedule) -> _Graph:
    """The compressed precedence graph (module docstring), by array operations."""
    is_update = update_mask(schedule)
    count = len(schedule.names)
    before = np.zeros(count, dtype=bool)
    after = np.zeros(count, dtype=bool)
    for obj, positions, segment in segments(schedule):
        ids = schedule.txns[obj]
        before[ids[positions[segment < len(schedule.updates[obj])]]] = True
        after[ids[positions[segment > 0]]] = True
    bridging = before & after
    core = is_update | bridging
    nodes = np.flatnonzero(core)
    index = np.full(count, -1, dtype=np.int64)
    index[nodes] = np.arange(len(nodes))
    sources: list[_Ints] = []
    targets: list[_Ints] = []
    any_bridging = bool(bridging.any())
    for obj in schedule.objects:  # chains of updates
        ids, marks = schedule.txns[obj], schedule.updates[obj]
        chain = index[ids[marks]]
        sources.append(chain[:-1])
        targets.append(chain[1:])
    for obj, positions, segment in segments(schedule) if any_bridging else ():
        ids, marks = schedule.txns[obj], schedule.updates[obj]
        chain = index[ids[marks]]
        keep = bridging[ids[positions]]
        txn, seg = index[ids[positions[keep]]], segment[keep]
        later = seg > 0
        sources.append(chain[seg[later] - 1])
        targets.append(txn[later])
        earlier = seg < len(marks)
        sources.append(txn[earlier])
        targets.append(chain[seg[earlier]])
    empty = np.zeros(0, dtype=np.int64)
    return _Graph(is_update, before, after, core, nodes,
                  np.concatenate(sources) if sources else empty,
                  np.concatenate(targets) if targets else empty)


def _successors(graph: _Graph) -> list[list[int]]:
    """Adjacency lists over ``graph.nodes`` indices (edges in construction order)."""
    order = np.argsort(graph.sources, kind="stable")
    starts = np.searchsorted(graph.sources[order], np.arange(len(graph.nodes) + 1))
    targets = graph.targets[order].tolist()
    bounds = starts.tolist()
    return [targets[bounds[i]:bounds[i + 1]] for i in range(len(graph.nodes))]


def _topological(graph: _Graph) -> list[int] | None:
    """Kahn's algorithm seeded in appearance order (indices into ``graph.nodes``); None
    when there is a cycle."""
    size = len(graph.nodes)
    indegree = np.bincount(graph.targets, minlength=size).tolist()
    successors = _successors(graph)
    ready = deque(i for i in range(size) if indegree[i] == 0)
    out: list[int] = []
    while ready:
        node = ready.popleft()
        out.append(node)
        for nxt in successors[node]:
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return out if len(out) == size else None


def longer_cycle(schedule: CompactSchedule, graph: _Graph) -> list[Edge]:
    """A shortest cycle when there is no 2-cycle (BFS per update transaction in a cyclic
    strongly connected component, :mod:`reference.fries.cycles`)."""
    successors = _successors(graph)
    nodes = graph.nodes.tolist()
    components = [[nodes[i] for i in c]
                  for c in strongly_connected(range(len(nodes)), successors) if len(c) > 1]
    return shortest_cycle(schedule, components, graph.is_update)
