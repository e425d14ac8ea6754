"""Pipelined regions and worker expansion (Fries §7.1, §7.2).

**Pipelined regions (§7.1).** A blocking operator (sort, final aggregate, the build side of
a hash join) emits only after it has consumed its whole input, so the operators before it and
the operators after it never exchange tuples while the upstream part runs. We model this by
*cutting the output edges of every blocking operator*: a blocking operator belongs, as a
consumer, to its upstream region; the tuples it later emits are new source tuples of the
downstream region (each starts a data transaction there). A data transaction therefore never
crosses a blocking operator, and Fries runs per region (:func:`pipelined_view` is the DAG
Fries works on; :func:`pipelined_regions` lists the regions as weakly connected components).

**Workers (§7.2).** Each operator ``A`` with ``n`` workers becomes vertices ``A#0 .. A#n-1``.
Each edge ``A -> B`` carries a partitioning:

* ``hash`` / ``range`` - every tuple A emits towards B goes to exactly one worker of B:
  channels ``A#i -> B#j`` for all i, j, grouped in one *output port* of ``A#i`` (the worker
  emits at most one tuple *per port* where the operator emitted one per edge); workers
  inherit the operator's kind (the paper: "treats a worker of an operator to have the same
  property as the operator");
* ``broadcast`` - a worker sends each tuple to every worker of B: "as if a Replicate operator
  is added after the worker". We add a virtual vertex ``A#i->B`` of kind ``replicate``
  between ``A#i`` and ``B#0 .. B#m-1``; each of its channels is its own port;
* ``forward`` (an addition the paper does not name, Flink's pointwise channels) - ``A#i ->
  B#i``, both operators must have the same number of workers.

Two facts of the logical dataflow must survive the expansion for the pruning rules of Alg. 4
to stay both sound and useful; :class:`WorkerGroups` carries them:

* ``port_of`` groups a vertex's output edges into ports: the edge-wise one-to-one rule counts
  *ports* leading to reconfigured vertices (a hash-partitioned Replicate worker still emits at
  most one tuple towards B, although it has a channel to each worker of B);
* ``operator_of`` maps each worker to its logical operator: the uniqueness property ("at most
  one output tuple per data transaction") holds for the operator as a whole, i.e. for the
  *set* of its workers, so the uniqueness rule looks for a set of vertices of one operator
  that cuts every path.

On a single-worker dataflow (:meth:`WorkerGroups.trivial`) every vertex is its own operator
and every edge its own port, which is exactly the paper's §6.3 setting.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Iterable, Mapping

from spec.errors import InputError
from spec.fries.dataflow import Dataflow, Operator, OperatorKind


@dataclass(frozen=True)
class WorkerGroups:
    """Which vertices are workers of one logical operator, and which output edges form one
    output port (see the module docstring). Missing entries mean "its own group"."""

    operator_of: Mapping[str, str] = field(default_factory=dict)
    port_of: Mapping[tuple[str, str], str] = field(default_factory=dict)

    @staticmethod
    def trivial() -> "WorkerGroups":
        """Single-worker dataflow: every vertex its own operator, every edge its own port."""
        return WorkerGroups()

    def operator(self, vertex: str) -> str:
        """The logical operator of ``vertex`` (itself by default)."""
        return self.operator_of.get(vertex, vertex)

    def port(self, edge: tuple[str, str]) -> str:
        """The output port of ``edge`` (the edge itself by default)."""
        return self.port_of.get(edge, f"{edge[0]}->{edge[1]}")


# --- §7.1 pipelined regions ----------------------------------------------------------------


def pipelined_view(flow: Dataflow) -> Dataflow:
    """The DAG Fries schedules on (§7.1): ``flow`` without the output edges of blocking
    operators. The same operators, so names and kinds are unchanged."""
    blocking = {op.name for op in flow.operators if op.kind is OperatorKind.BLOCKING}
    if not blocking:
        return flow
    edges = tuple((src, dst) for src, dst in flow.edges if src not in blocking)
    return Dataflow(flow.operators, edges)


def pipelined_regions(flow: Dataflow) -> tuple[frozenset[str], ...]:
    """The pipelined regions (§7.1): weakly connected components of :func:`pipelined_view`,
    sorted by their smallest operator name."""
    view = pipelined_view(flow)
    return weak_components(view.names, view.edges)


def weak_components(vertices: Iterable[str],
                    edges: Iterable[tuple[str, str]]) -> tuple[frozenset[str], ...]:
    """Weakly connected components (edge directions ignored), sorted by smallest name.
    Used for MCS components (Fries §5.3) and pipelined regions."""
    neighbours: dict[str, list[str]] = {v: [] for v in vertices}
    for src, dst in edges:
        neighbours[src].append(dst)
        neighbours[dst].append(src)
    seen: set[str] = set()
    found: list[frozenset[str]] = []
    for start in neighbours:
        if start in seen:
            continue
        seen.add(start)
        stack, members = [start], [start]
        while stack:
            for nxt in neighbours[stack.pop()]:
                if nxt not in seen:
                    seen.add(nxt)
                    stack.append(nxt)
                    members.append(nxt)
        found.append(frozenset(members))
    return tuple(sorted(found, key=min))


# --- §7.2 worker expansion -----------------------------------------------------------------


class Partitioning(str, Enum):
    """How an edge distributes an operator's output tuples over the receiver's workers."""

    HASH = "hash"
    RANGE = "range"
    BROADCAST = "broadcast"
    FORWARD = "forward"


@dataclass(frozen=True)
class ParallelDataflow:
    """A worker-expanded dataflow (§7.2).

    ``flow`` is the parallel DAG (workers and virtual broadcast replicators), ``groups`` the
    ports and operator groups the pruning rules need, ``workers`` maps each logical operator
    to its worker vertices, ``virtual`` holds the virtual Replicate vertices of broadcast
    edges (they are not physical workers; a channel through one is one physical channel
    ``A#i -> B#j``)."""

    flow: Dataflow
    groups: WorkerGroups
    workers: Mapping[str, tuple[str, ...]]
    virtual: frozenset[str]

    def reconfiguration(self, operators: Iterable[str]) -> frozenset[str]:
        """§7.2: a function update of operator O becomes one update per worker of O."""
        out: set[str] = set()
        for name in operators:
            if name not in self.workers:
                raise InputError(f"unknown reconfigured operator {name!r}", "reconfiguration")
            out.update(self.workers[name])
        return frozenset(out)

    def physical_channels(self, edges: Iterable[tuple[str, str]] | None = None) -> int:
        """Number of physical data channels among ``edges`` (default: all edges): a channel
        is a worker-to-worker pair; a path through a virtual replicator counts once."""
        chosen = set(self.flow.edges if edges is None else edges)
        count = 0
        for src, dst in chosen:
            if src in self.virtual:
                count += 1  # virtual -> worker: the physical channel owner->worker
            elif dst not in self.virtual:
                count += 1
        return count


def worker_name(operator: str, index: int) -> str:
    """The vertex name of worker ``index`` of ``operator``."""
    return f"{operator}#{index}"


def expand_workers(flow: Dataflow, workers: Mapping[str, int],
                   partitioning: Mapping[tuple[str, str], Partitioning | str] | None = None,
                   default: Partitioning = Partitioning.HASH) -> ParallelDataflow:
    """Fries §7.2: expand each operator into its workers (``workers[name]``, default 1) and
    each edge according to its partitioning (``partitioning[(a, b)]``, default ``default``).
    Raises :class:`InputError` for unknown operators/edges, non-positive worker counts and
    ``forward`` edges between operators with different worker counts."""
    for name, count in workers.items():
        if name not in flow:
            raise InputError(f"unknown operator {name!r}", "workers")
        if count < 1:
            raise InputError(f"operator {name!r} needs at least one worker, got {count}",
                             "workers")
    parts = dict(partitioning or {})
    known = set(flow.edges)
    for edge in parts:
        if edge not in known:
            raise InputError(f"no edge {edge[0]!r} -> {edge[1]!r}", "partitioning")
    count_of = {op.name: workers.get(op.name, 1) for op in flow.operators}
    ops: list[Operator] = []
    members: dict[str, tuple[str, ...]] = {}
    operator_of: dict[str, str] = {}
    for op in flow.operators:
        names = tuple(worker_name(op.name, i) for i in range(count_of[op.name]))
        members[op.name] = names
        for name in names:
            ops.append(Operator(name, op.kind, op.unique))
            operator_of[name] = op.name
    edges: list[tuple[str, str]] = []
    port_of: dict[tuple[str, str], str] = {}
    virtual: set[str] = set()
    for src, dst in flow.edges:
        mode = Partitioning(parts.get((src, dst), default))
        for i, up in enumerate(members[src]):
            if mode is Partitioning.FORWARD:
                if count_of[src] != count_of[dst]:
                    raise InputError(
                        f"forward edge {src!r} -> {dst!r} needs equal worker counts "
                        f"({count_of[src]} vs {count_of[dst]})", "partitioning")
                edges.append((up, members[dst][i]))
            elif mode is Partitioning.BROADCAST:
                rep = f"{up}->{dst}"
                virtual.add(rep)
                ops.append(Operator(rep, OperatorKind.REPLICATE))
                operator_of[rep] = rep
                edges.append((up, rep))
                edges.extend((rep, down) for down in members[dst])
            else:
                for down in members[dst]:
                    edges.append((up, down))
                    port_of[(up, down)] = f"{up}->{dst}"
    groups = WorkerGroups(operator_of=operator_of, port_of=port_of)
    return ParallelDataflow(Dataflow(tuple(ops), tuple(edges)), groups, members,
                            frozenset(virtual))
