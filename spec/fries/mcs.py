"""Minimal covering sub-DAG and Fries' seed set (Fries Def. 5.4, §5.3, Alg. 2-4), as
definitions. Paths are enumerated explicitly: exponential, for small DAGs only. The
efficient version is :mod:`reference.fries.mcs`; tests check the two agree.

**Def. 5.4.** MCS(G, V') is the smallest sub-DAG containing V' and every vertex and edge on
every path between two vertices of V'. So: vertices = {v : a ->* v ->* b for some a, b in V'}
(->* allows the empty path, so V' is included), edges = {(u, v) in E : a ->* u and
v ->* b for some a, b in V'} - every such edge lies on the path a ->* u -> v ->* b, and every
edge on such a path has this form. Components (§5.3) are the weakly connected components.

**Alg. 2/3/4: the seed set V'.** The reconfigured operators R, plus, for each O in R, the
*earliest* operators of P(O) = {one-to-many ancestors of O that no enabled pruning rule
removes}; "earliest" = no other member of P(O) is an ancestor of it. All of this on the
pipelined view of §7.1 (output edges of blocking operators cut; :mod:`spec.fries.workers`).

Interpretation choices (each keeps Theorems 5.8 and 6.4 true; the argument is in
docs/fries.md, "Why the choices keep Theorems 5.8 and 6.4"):

1. **Prune, then take the earliest** (not the reverse). With X1 -> X2 -> O where X1 is a
   prunable Replicate and X2 a general one-to-many operator, "earliest first" would pick X1,
   prune it, and leave O - which receives several tuples per transaction from X2 -
   unsynchronised. Pruning first keeps X2.
2. **Edge-wise one-to-one rule**: X has kind ``replicate`` (at most one tuple per output
   edge, or per output *port* in a worker-expanded DAG) and exactly one of X's output edges
   (ports) *leads to* a reconfigured operator, i.e. its head is in R or has a descendant in
   R. The paper's "has only one output edge connected to a downstream reconfiguration
   operator, and this edge is connected to O" is this condition (the edge reaching O is one
   leading to R), so it does not depend on O.
3. **Uniqueness rule, strengthened**: some *single* logical operator U, all of whose
   vertices have the uniqueness property, lies on every path from X to *any* reconfigured
   operator, strictly before the path's end (U may be X itself). The paper's wording ("on
   each path from X to O there exists an operator with the uniqueness property") is unsound
   when the unique operators differ from path to path, or when only the paths to O are
   checked: X=Replicate -> P -> U1 -> A and X -> Q -> U2 -> B, R = {A, B}, U1, U2 unique:
   the literal rule prunes X for A and for B, {A} and {B} become separate components, and a
   transaction replicated by X reaches A before the FCM and B after it - the schedule of
   Figure 2. Likewise X -> U1 -> O, X -> U2 -> O: O receives two tuples of one transaction.
4. **Unique U must not be the end of the path**: uniqueness bounds U's *outputs*; a
   reconfigured U may still receive several tuples of one transaction.
5. ``source`` operators are not one-to-many: each source tuple starts its own transaction.
   ``blocking`` operators are not one-to-many either: their outputs start new transactions
   of the downstream region (§7.1).
"""

from __future__ import annotations

from typing import Iterable, Iterator

from spec.fries.dataflow import Dataflow, OperatorKind
from spec.fries.workers import WorkerGroups, pipelined_view


def reaches(flow: Dataflow, a: str, b: str) -> bool:
    """a ->* b: a path from a to b, possibly empty."""
    return a == b or b in flow.descendants(a)


def mcs_vertices(flow: Dataflow, vprime: Iterable[str]) -> frozenset[str]:
    """Def. 5.4 vertices: V' and every vertex on a path between two vertices of V'."""
    seeds = frozenset(vprime)
    return frozenset(v for v in flow.names
                     if any(reaches(flow, a, v) for a in seeds)
                     and any(reaches(flow, v, b) for b in seeds))


def mcs_edges(flow: Dataflow, vprime: Iterable[str]) -> frozenset[tuple[str, str]]:
    """Def. 5.4 edges: every edge on a path between two vertices of V'."""
    seeds = frozenset(vprime)
    return frozenset((u, v) for u, v in flow.edges
                     if any(reaches(flow, a, u) for a in seeds)
                     and any(reaches(flow, v, b) for b in seeds))


def components(vertices: Iterable[str],
               edges: Iterable[tuple[str, str]]) -> frozenset[frozenset[str]]:
    """§5.3: maximal sets of vertices pairwise connected ignoring edge direction
    (computed as the fixpoint of merging sets joined by an edge)."""
    parts = {frozenset([v]) for v in vertices}
    pairs = list(edges)
    changed = True
    while changed:
        changed = False
        for u, v in pairs:
            pu = next(p for p in parts if u in p)
            pv = next(p for p in parts if v in p)
            if pu != pv:
                parts = (parts - {pu, pv}) | {pu | pv}
                changed = True
    return frozenset(parts)


def paths_from(flow: Dataflow, start: str) -> Iterator[tuple[str, ...]]:
    """Every path with at least one edge starting at ``start``."""
    for child in flow.children(start):
        yield (start, child)
        for rest in paths_from(flow, child):
            yield (start,) + rest


def one_to_many_ancestors(flow: Dataflow, target: str) -> frozenset[str]:
    """Alg. 3: the ancestors of ``target`` that are one-to-many (Def. 5.2)."""
    return frozenset(a for a in flow.ancestors(target) if flow.kind(a).is_one_to_many)


def earliest(flow: Dataflow, candidates: Iterable[str]) -> frozenset[str]:
    """Alg. 3: the candidates none of whose ancestors is a candidate."""
    chosen = frozenset(candidates)
    return frozenset(x for x in chosen if not (flow.ancestors(x) & chosen))


def edgewise_prunable(flow: Dataflow, x: str, reconfigured: frozenset[str],
                      groups: WorkerGroups) -> bool:
    """Alg. 4 edge-wise one-to-one rule (choice 2 above)."""
    if flow.kind(x) is not OperatorKind.REPLICATE:
        return False
    ports = {groups.port((p[0], p[1])) for p in paths_from(flow, x) if p[-1] in reconfigured}
    return len(ports) == 1


def uniqueness_prunable(flow: Dataflow, x: str, reconfigured: frozenset[str],
                        groups: WorkerGroups) -> bool:
    """Alg. 4 uniqueness rule (choices 3 and 4 above)."""
    to_targets = [p for p in paths_from(flow, x) if p[-1] in reconfigured]
    for operator in {groups.operator(v) for v in flow.names}:
        members = {v for v in flow.names if groups.operator(v) == operator}
        if not all(flow.operator(v).unique for v in members):
            continue
        if all(any(v in members for v in path[:-1]) for path in to_targets):
            return True
    return False


def seed_set(flow: Dataflow, reconfigured: Iterable[str], *, prune_edgewise: bool = True,
             prune_uniqueness: bool = True, one_to_many: bool = True,
             groups: WorkerGroups | None = None) -> frozenset[str]:
    """V' of Alg. 2 (``one_to_many=False``: just R) or Alg. 3/4 on the pipelined view."""
    view = pipelined_view(flow)
    targets = frozenset(reconfigured)
    if not one_to_many:
        return targets
    grouping = groups or WorkerGroups.trivial()

    def pruned(x: str) -> bool:
        return (prune_edgewise and edgewise_prunable(view, x, targets, grouping)) or (
            prune_uniqueness and uniqueness_prunable(view, x, targets, grouping))

    added: set[str] = set()
    for target in targets:
        kept = {a for a in one_to_many_ancestors(view, target) if not pruned(a)}
        added |= earliest(view, kept)
    return targets | added


def fries_mcs_definition(flow: Dataflow, reconfigured: Iterable[str], *,
                         prune_edgewise: bool = True, prune_uniqueness: bool = True,
                         one_to_many: bool = True, groups: WorkerGroups | None = None
                         ) -> tuple[frozenset[str], frozenset[tuple[str, str]],
                                    frozenset[frozenset[str]], frozenset[str]]:
    """(vertices, edges, components, seeds) of the MCS Fries synchronises on."""
    view = pipelined_view(flow)
    seeds = seed_set(flow, reconfigured, prune_edgewise=prune_edgewise,
                     prune_uniqueness=prune_uniqueness, one_to_many=one_to_many, groups=groups)
    vertices = mcs_vertices(view, seeds)
    edges = mcs_edges(view, seeds)
    return vertices, edges, components(vertices, edges), seeds
