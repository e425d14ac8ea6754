"""The configurations the model checker explores: every small dataflow, up to isomorphism.

A configuration is a logical dataflow (:class:`spec.fries.dataflow.Dataflow`), a worker
count per operator (Fries §7.2, hash partitioning) and the set of operators one
reconfiguration updates. ``max_objects`` bounds the number of *objects* (workers) after the
worker expansion, so "N operators" counts workers: with N = 4, four single-worker operators,
or three operators one of which has two workers, and so on.

Enumerated: every weakly connected DAG on 2..N operators (edges ``i -> j`` for ``i < j``
over a topological numbering), every kind for every non-source operator (one-to-one,
one-to-many, replicate, blocking), every unique flag, every non-empty set of reconfigured
non-source operators, every worker assignment that fits. Sources are exactly the operators
without parents (the "source iff no parent" shape of user dataflows) and are never
reconfigured (a source has no log, Def. 4.2: its tuples *start* the transactions).

Reductions (each sound: the skipped configurations behave exactly like a kept one, or their
violations are violations of a kept one; docs/proofs.md says why):

* **isomorphism** - configurations equal up to renaming the operators have the same runs up to
  renaming, so one representative per isomorphism class is kept (the canonical form is the
  smallest relabelling);
* **disconnected DAGs** - with one update transaction every precedence cycle is t -> R -> t
  for one data transaction t, whose operations all lie in t's weakly connected component;
  the runs of a component are the runs of the whole restricted to it, so a violation of a
  disconnected DAG is a violation of a connected DAG with fewer operators;
* **labels that change nothing** - a sink (no children in the pipelined view) emits nothing
  during the run whatever its kind (blocking: its flush comes after every reconfiguration,
  §7.1), is no one's ancestor (no seed of Alg. 3) and is the end of every path through it
  (never the U of the uniqueness rule, which must be strictly inside): its kind is fixed to
  one-to-one and its unique flag to false. A source emits its one tuple whatever its flag and
  is on no path from a one-to-many operator; a blocking operator's outputs are cut (it is a
  sink of the pipelined view): both get unique = false.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations, permutations, product
from typing import Iterator, Mapping

from spec.fries.dataflow import Dataflow, Operator, OperatorKind

#: Kinds a non-source operator may have.
INNER_KINDS = (OperatorKind.ONE_TO_ONE, OperatorKind.ONE_TO_MANY, OperatorKind.REPLICATE,
               OperatorKind.BLOCKING)
NAMES = "ABCDEFGHIJ"


@dataclass(frozen=True)
class Config:
    """One dataflow to explore: ``flow`` (logical), ``workers`` per operator (1 if absent),
    ``reconfigured`` operators (updated by the one reconfiguration)."""

    flow: Dataflow
    workers: Mapping[str, int]
    reconfigured: frozenset[str]

    @property
    def objects(self) -> int:
        """Objects after the worker expansion."""
        return sum(self.workers.get(n, 1) for n in self.flow.names)

    def one_to_one(self) -> bool:
        """True when no operator is one-to-many (Thm 5.8's domain, Def. 5.1)."""
        return not any(op.kind.is_one_to_many for op in self.flow.operators)

    def to_json(self) -> dict[str, object]:
        """The dataflow JSON form plus ``workers`` and ``reconfigured``."""
        document = dict(self.flow.to_json())
        document["workers"] = {n: c for n, c in self.workers.items() if c > 1}
        document["reconfigured"] = sorted(self.reconfigured)
        return document


Edges = tuple[tuple[int, int], ...]
Label = tuple[int, int, bool, int, bool]  # (is source, kind index, unique, workers, reconfigured)


def _connected(n: int, edges: Edges) -> bool:
    seen, stack = {0}, [0]
    while stack:
        v = stack.pop()
        for a, b in edges:
            for x, y in ((a, b), (b, a)):
                if x == v and y not in seen:
                    seen.add(y)
                    stack.append(y)
    return len(seen) == n


def _canonical(n: int, edges: Edges, labels: tuple[Label, ...]) -> tuple[object, ...]:
    """The smallest (labels, edges) over every renaming of the n vertices."""
    best: tuple[object, ...] | None = None
    for perm in permutations(range(n)):
        where = {old: new for new, old in enumerate(perm)}
        form = (tuple(labels[old] for old in perm),
                tuple(sorted((where[a], where[b]) for a, b in edges)))
        if best is None or form < best:
            best = form
    assert best is not None
    return best


def _shapes(n: int) -> Iterator[Edges]:
    """Weakly connected DAGs on n vertices over the numbering 0..n-1, one per isomorphism
    class of the unlabelled graph."""
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    seen: set[tuple[object, ...]] = set()
    blank: tuple[Label, ...] = tuple((0, 0, False, 0, False) for _ in range(n))
    for mask in range(1 << len(pairs)):
        edges = tuple(p for k, p in enumerate(pairs) if mask >> k & 1)
        if not _connected(n, edges):
            continue
        form = _canonical(n, edges, blank)
        if form not in seen:
            seen.add(form)
            yield edges


def _automorphisms(n: int, edges: Edges) -> list[tuple[int, ...]]:
    edge_set = set(edges)
    return [perm for perm in permutations(range(n))
            if {(perm[a], perm[b]) for a, b in edges} == edge_set]


def configurations(max_objects: int) -> Iterator[Config]:
    """Every configuration with at most ``max_objects`` objects (module docstring), fewest
    objects first, one per isomorphism class."""
    shapes = {n: list(_shapes(n)) for n in range(2, max_objects + 1)}
    for objects in range(2, max_objects + 1):
        for n in range(2, objects + 1):
            for edges in shapes[n]:
                yield from _labelled(n, edges, objects)


def _labelled(n: int, edges: Edges, objects: int) -> Iterator[Config]:
    """The labellings of one shape with exactly ``objects`` objects."""
    parents = {v: [a for a, b in edges if b == v] for v in range(n)}
    autos = _automorphisms(n, edges)
    seen: set[tuple[Label, ...]] = set()
    per_vertex: list[list[tuple[int, bool]]] = []
    for v in range(n):
        if not parents[v]:
            per_vertex.append([(-1, False)])
            continue
        options: list[tuple[int, bool]] = []
        for k, kind in enumerate(INNER_KINDS):
            for unique in (False, True):
                options.append((k, unique))
        per_vertex.append(options)
    inner = [v for v in range(n) if parents[v]]
    for kinds in product(*per_vertex):
        if not _reduced(n, edges, kinds):
            continue
        for count in range(1, len(inner) + 1):
            for chosen in combinations(inner, count):
                for workers in product(range(1, objects - n + 2), repeat=n):
                    if sum(workers) != objects:
                        continue
                    labels = tuple((1 if not parents[v] else 0, kinds[v][0], kinds[v][1],
                                    workers[v], v in chosen) for v in range(n))
                    key = min(tuple(labels[p[v]] for v in range(n)) for p in autos)
                    if key in seen:
                        continue
                    seen.add(key)
                    yield _config(n, edges, labels)


def _reduced(n: int, edges: Edges, kinds: tuple[tuple[int, bool], ...]) -> bool:
    """Keep only the representative labels of the "labels that change nothing" reduction."""
    for v in range(n):
        kind, unique = kinds[v]
        if kind < 0:
            continue
        if not any(a == v for a, _ in edges) and (kind, unique) != (0, False):
            return False
        if INNER_KINDS[kind] is OperatorKind.BLOCKING and unique:
            return False
    return True


def _config(n: int, edges: Edges, labels: tuple[Label, ...]) -> Config:
    operators = []
    for v in range(n):
        is_source, kind, unique, _, _ = labels[v]
        operators.append(Operator(NAMES[v], OperatorKind.SOURCE if is_source else INNER_KINDS[kind],
                                  unique))
    flow = Dataflow(tuple(operators), tuple((NAMES[a], NAMES[b]) for a, b in edges))
    return Config(flow, {NAMES[v]: labels[v][3] for v in range(n) if labels[v][3] > 1},
                  frozenset(NAMES[v] for v in range(n) if labels[v][4]))
