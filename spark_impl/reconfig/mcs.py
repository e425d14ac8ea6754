"""Minimal covering sub-DAG and its components: Fries Alg. 1-4, §7.1, §7.2.

Independent of ``reference/`` (the conformance suite cross-checks the two).

* :func:`pipelined_edges` - §7.1: a blocking operator emits only after its whole input, so
  its output edges carry no tuple while reconfigurations run (the executor finishes every
  reconfiguration before the end-of-input flush). Fries runs per pipelined region, which we
  get by dropping the output edges of blocking operators.
* :func:`minimal_covering_subdag` - Def. 5.4 / Alg. 1 (red = in V' or a red parent, in
  topological order; blue = in V' or a blue child, in reverse order; MCS = red and blue).
* :func:`sync_operators` - V' of Alg. 3 with Alg. 4's pruning: the reconfigured operators plus,
  for each, the earliest one-to-many ancestors that no pruning rule removes (prune first, then
  take the earliest; the uniqueness rule in the project's strengthened, sound reading - one
  unique operator on every path to any reconfigured operator; see docs/fries.md).
* :func:`components` - weakly connected components of the MCS with their heads (operators with
  no input edge inside the component).
* :func:`object_components` - §7.2: the components on the parallel dataflow where each
  operator with p workers becomes p objects with hash-partitioned (all-to-all) edges.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Mapping

from spec.fries.dataflow import Dataflow, OperatorKind, reachable

Edge = tuple[str, str]


def pipelined_edges(flow: Dataflow) -> frozenset[Edge]:
    """The dataflow's edges without the output edges of blocking operators (§7.1)."""
    return frozenset((a, b) for a, b in flow.edges if flow.kind(a) is not OperatorKind.BLOCKING)


def _adjacency(flow: Dataflow, edges: frozenset[Edge]) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    children: dict[str, list[str]] = {n: [] for n in flow.names}
    parents: dict[str, list[str]] = {n: [] for n in flow.names}
    for a, b in flow.edges:
        if (a, b) in edges:
            children[a].append(b)
            parents[b].append(a)
    return children, parents


def minimal_covering_subdag(flow: Dataflow, chosen: Iterable[str],
                            edges: frozenset[Edge] | None = None) -> tuple[frozenset[str], frozenset[Edge]]:
    """Alg. 1: the MCS of ``chosen`` over ``edges`` (default: the pipelined edges)."""
    use = pipelined_edges(flow) if edges is None else edges
    children, parents = _adjacency(flow, use)
    vprime = set(chosen)
    order = flow.topological_order()
    red: set[str] = set()
    for node in order:
        if node in vprime or any(p in red for p in parents[node]):
            red.add(node)
    blue: set[str] = set()
    for node in reversed(order):
        if node in vprime or any(c in blue for c in children[node]):
            blue.add(node)
    vertices = frozenset(red & blue)
    return vertices, frozenset((a, b) for a, b in use if a in vertices and b in vertices)


def _prunable(flow: Dataflow, x: str, reconfigured: frozenset[str],
              children: Mapping[str, list[str]]) -> bool:
    """Alg. 4's rules for a one-to-many ancestor ``x`` (the project's reading, docs/fries.md)."""
    # Edge-wise one-to-one rule (Fig. 9 I): x emits at most one tuple per output edge and
    # exactly one output edge leads to (reaches) a reconfigured operator.
    if flow.kind(x) is OperatorKind.REPLICATE:
        leading = [c for c in children[x] if c in reconfigured or reachable(c, children) & reconfigured]
        if len(leading) == 1:
            return True
    # Uniqueness rule (Fig. 10), strengthened: ONE operator U with the uniqueness property lies
    # on every path from x to ANY reconfigured operator, strictly before the path's end (U may
    # be x). Different unique operators on different paths would let one transaction reach
    # the reconfigured operators twice, so the literal per-path reading is unsound.
    if flow.operator(x).unique:
        return True
    for u in sorted(reachable(x, children)):
        if not flow.operator(u).unique or u in reconfigured:
            continue
        seen: set[str] = set()
        todo = [c for c in children[x] if c != u]
        blocked = False
        while todo:
            node = todo.pop()
            if node in seen:
                continue
            seen.add(node)
            if node in reconfigured:
                blocked = True
                break
            todo.extend(c for c in children[node] if c != u)
        if not blocked:
            return True
    return False


def sync_operators(flow: Dataflow, reconfigured: Iterable[str], *, pruning: bool = True) -> frozenset[str]:
    """V' of Alg. 3 (with Alg. 4's pruning when ``pruning``)."""
    targets = frozenset(reconfigured)
    edges = pipelined_edges(flow)
    children, parents = _adjacency(flow, edges)
    chosen = set(targets)
    for target in targets:
        ancestors = reachable(target, parents)
        many = {a for a in ancestors if flow.kind(a).is_one_to_many}
        if pruning:
            many = {a for a in many if not _prunable(flow, a, targets, children)}
        for a in many:
            if not (reachable(a, parents) & many):
                chosen.add(a)
    return frozenset(chosen)


@dataclass(frozen=True)
class Component:
    """One weakly connected component of the MCS."""

    operators: frozenset[str]
    edges: frozenset[Edge]

    @property
    def heads(self) -> frozenset[str]:
        """Operators with no input edge inside the component (they receive the FCM)."""
        return frozenset(o for o in self.operators if not any(b == o for _, b in self.edges))


def components(flow: Dataflow, reconfigured: Iterable[str], *, pruning: bool = True) -> tuple[Component, ...]:
    """Alg. 2-4 lines 3-5: the MCS components for a reconfiguration of ``reconfigured``."""
    vertices, mcs_edges = minimal_covering_subdag(flow, sync_operators(flow, reconfigured, pruning=pruning))
    neighbours: dict[str, set[str]] = {v: set() for v in vertices}
    for a, b in mcs_edges:
        neighbours[a].add(b)
        neighbours[b].add(a)
    found: list[Component] = []
    left = [n for n in flow.names if n in vertices]
    assigned: set[str] = set()
    for start in left:
        if start in assigned:
            continue
        group = {start}
        todo = [start]
        while todo:
            for nxt in neighbours[todo.pop()]:
                if nxt not in group:
                    group.add(nxt)
                    todo.append(nxt)
        assigned |= group
        found.append(Component(frozenset(group), frozenset(e for e in mcs_edges if e[0] in group)))
    return tuple(found)


@dataclass(frozen=True)
class ObjectRole:
    """What one object does for one reconfiguration under Fries."""

    head: bool
    reconfigured: bool
    parents: frozenset[str]
    children: frozenset[str]


def object_components(flow: Dataflow, workers: Mapping[str, tuple[str, ...]], reconfigured: Iterable[str],
                      *, pruning: bool = True) -> dict[str, ObjectRole]:
    """§7.2: roles of the MCS objects on the parallel dataflow (hash partitioning connects
    every worker of an operator to every worker of each child). A component of one operator
    and no edge splits into one component per worker, each its own head."""
    targets = frozenset(reconfigured)
    roles: dict[str, ObjectRole] = {}
    for component in components(flow, targets, pruning=pruning):
        heads = component.heads
        for op in component.operators:
            ins = frozenset(w for a, b in component.edges if b == op for w in workers[a])
            outs = frozenset(w for a, b in component.edges if a == op for w in workers[b])
            for obj in workers[op]:
                roles[obj] = ObjectRole(op in heads, op in targets, ins, outs)
    return roles
