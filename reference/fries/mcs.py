"""Minimal covering sub-DAG and the Fries seed set (Fries Alg. 1, 2, 3, 4) - reference.

Efficient versions of the definitions in :mod:`spec.fries.mcs`, verified against them by
``tests/reference/fries/test_fries_mcs.py`` on random DAGs with every combination of switches:

* :func:`minimal_covering_subdag` - Alg. 1 (red/blue marking, O(|V| + |E|)) and the
  components of the result (weakly connected components, §5.3);
* :func:`fries_mcs` - the MCS Fries synchronises on: the reconfigured operators plus, with
  ``one_to_many=True`` (Alg. 3), the earliest *unpruned* one-to-many ancestors of each of them,
  where the pruning rules of Alg. 4 are switchable one by one. The DAG used is the pipelined
  view of §7.1 (output edges of blocking operators cut).

The interpretation choices (and why they keep Theorems 5.8 and 6.4 true) are written in
:mod:`spec.fries.mcs` and docs/fries.md; this module implements exactly those choices.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterable, Mapping, Sequence

from spec.errors import InputError
from spec.fries.dataflow import Dataflow, OperatorKind
from spec.fries.workers import WorkerGroups, pipelined_view, weak_components


@dataclass(frozen=True)
class MCS:
    """A minimal covering sub-DAG (Def. 5.4) with its components (§5.3).

    ``components`` are sorted by their smallest vertex name; ``seeds`` is the vertex set V'
    the MCS was built from (for :func:`fries_mcs`: the reconfigured operators plus the
    unpruned earliest one-to-many ancestors)."""

    vertices: frozenset[str]
    edges: frozenset[tuple[str, str]]
    components: tuple[frozenset[str], ...]
    seeds: frozenset[str]

    def heads(self, component: Iterable[str]) -> frozenset[str]:
        """The head operators of ``component`` (Alg. 2): members with no input edge inside
        the component. They receive the FCM and start the epoch marker."""
        members = frozenset(component)
        has_input = {dst for src, dst in self.edges if src in members and dst in members}
        return frozenset(v for v in members if v not in has_input)

    def longest_path(self, component: Iterable[str]) -> int:
        """Edges on a longest path inside ``component`` (the "longest path length" column
        of Fries Tables 4 and 5: it bounds how far the epoch marker travels)."""
        members = frozenset(component)
        inner = [(s, d) for s, d in self.edges if s in members and d in members]
        length = dict.fromkeys(members, 0)
        for _ in members:  # Bellman-Ford style relaxation; components are small
            changed = False
            for src, dst in inner:
                if length[src] + 1 > length[dst]:
                    length[dst] = length[src] + 1
                    changed = True
            if not changed:
                break
        return max(length.values(), default=0)

    def component_of(self, vertex: str) -> frozenset[str] | None:
        """The component containing ``vertex``, or None when it is outside the MCS."""
        for component in self.components:
            if vertex in component:
                return component
        return None

    def to_json(self) -> dict[str, list[list[str]]]:
        """``{"components": [[names], ...]}``: each component sorted, components sorted by
        their first name (the ``streamproof mcs --json`` contract)."""
        return {"components": [sorted(c) for c in self.components]}


def minimal_covering_subdag(flow: Dataflow, vertices: Iterable[str]) -> MCS:
    """Fries Alg. 1: the MCS of ``flow`` and V' = ``vertices``.

    Red = in V' or a red parent (topological order); blue = in V' or a blue child (reverse
    order); the MCS is the red-and-blue vertices and the edges between them."""
    seeds = _known(flow, vertices, "vertex", "vertices")
    order = flow.topological_order()
    red: set[str] = set()
    for v in order:
        if v in seeds or any(p in red for p in flow.parents(v)):
            red.add(v)
    blue: set[str] = set()
    for v in reversed(order):
        if v in seeds or any(c in blue for c in flow.children(v)):
            blue.add(v)
    chosen = frozenset(red & blue)
    edges = frozenset((s, d) for s, d in flow.edges if s in chosen and d in chosen)
    return MCS(chosen, edges, weak_components(sorted(chosen), sorted(edges)), seeds)


def fries_mcs(flow: Dataflow, reconfigured: Iterable[str], *, prune_edgewise: bool = True,
              prune_uniqueness: bool = True, one_to_many: bool = True,
              groups: WorkerGroups | None = None) -> MCS:
    """The MCS Fries schedules a reconfiguration of ``reconfigured`` on.

    ``one_to_many=False`` is Alg. 2 (V' = the reconfigured operators). Otherwise Alg. 3/4:
    V' also holds, for each reconfigured O, the earliest operators among O's one-to-many
    ancestors that no enabled pruning rule removes (see :mod:`spec.fries.mcs` for the rules
    and why pruning happens *before* taking the earliest). ``groups`` describes workers and
    ports of a worker-expanded dataflow (§7.2); default: single-worker. Raises
    :class:`InputError` naming unknown reconfigured operators."""
    view = pipelined_view(flow)
    targets = _known(view, reconfigured, "reconfigured operator", "reconfiguration")
    seeds = set(targets)
    if one_to_many:
        seeds |= seed_ancestors(view, targets, prune_edgewise=prune_edgewise,
                                prune_uniqueness=prune_uniqueness,
                                groups=groups or WorkerGroups.trivial())
    return minimal_covering_subdag(view, seeds)


def seed_ancestors(view: Dataflow, targets: frozenset[str], *, prune_edgewise: bool,
                   prune_uniqueness: bool, groups: WorkerGroups) -> frozenset[str]:
    """Alg. 3 + 4: the union over reconfigured O of the earliest unpruned one-to-many
    ancestors of O, in O(|V| + |E|) plus the pruning rules.

    "Earliest for O" does not depend on O: an unpruned one-to-many ancestor a of O is
    earliest iff no unpruned one-to-many operator is an ancestor of a (an ancestor of a is
    an ancestor of O). So the union is: the unpruned one-to-many operators that are proper
    ancestors of some reconfigured operator and have no unpruned one-to-many ancestor -
    one pass in topological order."""
    order = view.topological_order()
    leads = _leads_to(view, targets, order)
    candidates = [x for x in order if view.kind(x).is_one_to_many
                  and any(leads[c] for c in view.children(x))]
    pruned: set[str] = set()
    if prune_edgewise:
        pruned.update(x for x in candidates if edgewise_prunable(view, x, leads, groups))
    if prune_uniqueness:
        blocked = _uniqueness_blocked(view, targets, groups, order, leads)
        pruned.update(x for x in candidates if blocked(x))
    kept = set(candidates) - pruned
    covered: set[str] = set()  # operators with an unpruned one-to-many ancestor
    for v in order:
        if any(p in kept or p in covered for p in view.parents(v)):
            covered.add(v)
    return frozenset(x for x in kept if x not in covered)


def edgewise_prunable(view: Dataflow, x: str, leads: Mapping[str, bool],
                      groups: WorkerGroups) -> bool:
    """Alg. 4, edge-wise one-to-one rule: ``x`` emits at most one tuple per output port
    (kind ``replicate``) and exactly one of its ports leads to a reconfigured operator."""
    if view.kind(x) is not OperatorKind.REPLICATE:
        return False
    ports = {groups.port((x, c)) for c in view.children(x) if leads[c]}
    return len(ports) == 1


def uniqueness_prunable(view: Dataflow, x: str, targets: frozenset[str],
                        groups: WorkerGroups) -> bool:
    """Alg. 4, uniqueness rule: some logical operator U whose vertices all have the
    uniqueness property lies on every path from ``x`` to a reconfigured operator, strictly
    before that path's end (U may be ``x`` itself). For one operator; :func:`seed_ancestors`
    decides all of them at once."""
    order = view.topological_order()
    return _uniqueness_blocked(view, targets, groups, order, _leads_to(view, targets, order))(x)


def _uniqueness_blocked(view: Dataflow, targets: frozenset[str], groups: WorkerGroups,
                        order: Sequence[str], leads: Mapping[str, bool]
                        ) -> Callable[[str], bool]:
    """The uniqueness rule for every proper ancestor x of a target.

    Groups of one vertex u (every group, for a single-worker dataflow) use post-dominators:
    in the DAG where each target's only successor is a sink T (a path ends at the first
    target it reaches), u lies strictly inside every path from x to a target iff u is x, or
    u is not a target and post-dominates all of x's children that reach T, i.e. u lies on
    the post-dominator tree path from the lowest common ancestor of those children up to T.
    One pass in reverse topological order builds the tree (for a DAG, ipdom(v) is the lowest
    common ancestor of its children) and marks the vertices with a unique non-target vertex
    on their tree path. Larger groups (workers of one operator, §7.2) are checked one group at
    a time by a reverse search from the targets that does not pass through the group:
    O(|V| + |E|) per all-unique group of two or more vertices."""
    members: dict[str, list[str]] = {}
    for op in view.operators:
        members.setdefault(groups.operator(op.name), []).append(op.name)
    unique_group = {v: all(view.operator(w).unique for w in group)
                    for group in members.values() for v in group}
    single = {v for group in members.values() if len(group) == 1 for v in group}
    sink = ""  # the tree's root T (operator names are non-empty)
    ipdom: dict[str, str] = {}
    depth: dict[str, int] = {sink: 0}
    marked: dict[str, bool] = {sink: False}  # a unique single non-target on v's tree path

    def meet(a: str, b: str) -> str:
        while a != b:
            if depth[a] >= depth[b]:
                a = ipdom[a]
            else:
                b = ipdom[b]
        return a

    def lowest(v: str) -> str | None:
        """Lowest common tree ancestor of v's children that reach a target."""
        found: str | None = None
        for c in view.children(v):
            if leads[c]:
                found = c if found is None else meet(found, c)
        return found

    for v in reversed(order):
        if not leads[v]:
            continue
        parent = sink if v in targets else lowest(v)
        assert parent is not None  # a non-target that leads to a target has such a child
        ipdom[v], depth[v] = parent, depth[parent] + 1
        marked[v] = marked[parent] or (v in single and unique_group[v] and v not in targets)
    larger = [set(group) for group in members.values()
              if len(group) > 1 and unique_group[group[0]]]
    reach = [_reaching_avoiding(view, targets, group) for group in larger]

    def blocked(x: str) -> bool:
        if unique_group[x]:
            return True
        below = lowest(x)
        if below is not None and marked[below]:
            return True
        return any(x not in reaching for reaching in reach)

    return blocked


def _reaching_avoiding(view: Dataflow, targets: frozenset[str], blocked: set[str]) -> set[str]:
    """The vertices with a non-empty path to a target whose inner vertices avoid
    ``blocked`` (a target that is itself blocked still counts as reached)."""
    reaching: set[str] = set()
    stack = list(targets)
    while stack:
        for parent in view.parents(stack.pop()):
            if parent not in reaching:
                reaching.add(parent)
                if parent not in blocked and parent not in targets:
                    stack.append(parent)
    return reaching


def _leads_to(view: Dataflow, targets: frozenset[str],
              order: Sequence[str]) -> dict[str, bool]:
    """For every vertex (``order``: a topological order): is it a target or an ancestor of
    one?"""
    leads: dict[str, bool] = {}
    for v in reversed(order):
        leads[v] = v in targets or any(leads[c] for c in view.children(v))
    return leads


def _known(flow: Dataflow, names: Iterable[str], what: str, where: str) -> frozenset[str]:
    """``names`` as a set, or an InputError naming every unknown one."""
    chosen = frozenset(names)
    unknown = sorted(n for n in chosen if n not in flow)
    if unknown:
        listed = ", ".join(repr(n) for n in unknown)
        raise InputError(f"unknown {what}{'s' if len(unknown) > 1 else ''} {listed}", where)
    return chosen
