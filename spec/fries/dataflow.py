"""Dataflow DAGs (Fries §2, Def. 5.1-5.3, §7.1).

A dataflow is a DAG of named operators. Each operator has a *kind*, which is all the
scheduling theory needs to know about its computation function:

* ``source``      - produces the source tuples; each source tuple starts a data transaction
  (Fries Def. 4.2, 4.4);
* ``one-to-one``  - emits at most one (tuple, receiver) pair per input tuple (Def. 5.1);
* ``one-to-many`` - may emit several tuples per input tuple, e.g. a join on non-key
  attributes or a flatten (Def. 5.2);
* ``replicate``   - one-to-many, but at most one tuple per *output edge* per input tuple
  (the premise of the edge-wise one-to-one pruning rule, Alg. 4, Fig. 9 I);
* ``blocking``    - emits only after its whole input has been consumed (sort, final
  aggregate); blocking operators split the DAG into pipelined regions (§7.1).

``unique`` marks operators with the *uniqueness property* of Alg. 4 (Fig. 10): the operator
emits at most one output tuple per data transaction, e.g. a self-join that reassembles
replicated tuples on their primary key.

The JSON form (a CLI contract, see docs/fries.md)::

    {"operators": [{"name": "A", "kind": "source", "unique": false}, ...],
     "edges": [["A", "B"], ...]}

Constructing a :class:`Dataflow` validates it: unique names, edges between known operators,
no self-loops or duplicate edges, no cycle (the error names one cycle), and no input edge
into a source (a source receives nothing: its tuples start the transactions, Def. 4.2).
Reading the JSON form also requires every non-source operator to have an input edge (see
:meth:`Dataflow.require_fed_operators`), so user dataflows have the "source iff no parent"
shape the Z3 encodings of ``proofs/`` assume.
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from enum import Enum
from typing import Any, Iterable, Mapping, Sequence

from spec.errors import InputError
from spec.jsonio import (
    expect_bool,
    expect_list,
    expect_object,
    expect_str,
    reject_unknown_keys,
)


class OperatorKind(str, Enum):
    """What an operator may emit per input tuple (Fries Def. 5.1, 5.2, Alg. 4, §7.1)."""

    SOURCE = "source"
    ONE_TO_ONE = "one-to-one"
    ONE_TO_MANY = "one-to-many"
    REPLICATE = "replicate"
    BLOCKING = "blocking"

    @property
    def is_one_to_many(self) -> bool:
        """True for kinds that may emit more than one tuple per input (Def. 5.2).

        ``replicate`` is one-to-many (it emits one tuple per output edge). A ``source`` emits
        each source tuple once: it is the root of a scope, not a one-to-many operator."""
        return self in (OperatorKind.ONE_TO_MANY, OperatorKind.REPLICATE)


@dataclass(frozen=True)
class Operator:
    """One vertex of the dataflow DAG."""

    name: str
    kind: OperatorKind
    unique: bool = False


@dataclass(frozen=True)
class Dataflow:
    """A validated dataflow DAG: operators in the given order and directed edges.

    Raises :class:`InputError` on duplicate names, unknown edge endpoints, self-loops,
    duplicate edges or cycles."""

    operators: tuple[Operator, ...]
    edges: tuple[tuple[str, str], ...]
    _by_name: Mapping[str, Operator] = field(init=False, repr=False, compare=False)
    _children: Mapping[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)
    _parents: Mapping[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        by_name: dict[str, Operator] = {}
        for index, op in enumerate(self.operators):
            if op.name in by_name:
                raise InputError(f"duplicate operator name {op.name!r}", f"operators[{index}]")
            by_name[op.name] = op
        children: dict[str, list[str]] = {name: [] for name in by_name}
        parents: dict[str, list[str]] = {name: [] for name in by_name}
        seen: set[tuple[str, str]] = set()
        for index, (src, dst) in enumerate(self.edges):
            where = f"edges[{index}]"
            for end in (src, dst):
                if end not in by_name:
                    raise InputError(f"edge names unknown operator {end!r}", where)
            if src == dst:
                raise InputError(f"self-loop on operator {src!r}", where)
            if (src, dst) in seen:
                raise InputError(f"duplicate edge {src!r} -> {dst!r}", where)
            seen.add((src, dst))
            children[src].append(dst)
            parents[dst].append(src)
        object.__setattr__(self, "_by_name", by_name)
        object.__setattr__(self, "_children", {k: tuple(v) for k, v in children.items()})
        object.__setattr__(self, "_parents", {k: tuple(v) for k, v in parents.items()})
        cycle = self._find_cycle()
        if cycle is not None:
            raise InputError("the graph has a cycle: " + " -> ".join(cycle + [cycle[0]]), "edges")
        for index, op in enumerate(self.operators):
            if op.kind is OperatorKind.SOURCE and parents[op.name]:
                raise InputError(
                    f"source {op.name!r} has an input edge from {parents[op.name][0]!r}: "
                    "sources start transactions and receive nothing",
                    f"operators[{index}]",
                )

    def require_fed_operators(self) -> None:
        """Raise :class:`InputError` for a non-source operator without input edges.

        A user's dataflow must have this shape (an operator nothing feeds would never run, and
        the Z3 encodings of ``proofs/`` assume "source iff no parent"); graphs derived inside
        streamproof (the pipelined view of §7.1, worker expansions) legitimately break it, so
        it is checked when a dataflow is read from JSON, not by the constructor."""
        for index, op in enumerate(self.operators):
            if op.kind is not OperatorKind.SOURCE and not self._parents[op.name]:
                raise InputError(
                    f"{op.kind.value} operator {op.name!r} has no input edge: only sources may "
                    "(declare it as kind 'source' or connect it)",
                    f"operators[{index}]",
                )

    # --- queries ---------------------------------------------------------------------------

    @property
    def names(self) -> tuple[str, ...]:
        """Operator names in declaration order."""
        return tuple(op.name for op in self.operators)

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def operator(self, name: str) -> Operator:
        """The operator called ``name`` (KeyError if absent)."""
        return self._by_name[name]

    def kind(self, name: str) -> OperatorKind:
        """The kind of operator ``name``."""
        return self._by_name[name].kind

    def children(self, name: str) -> tuple[str, ...]:
        """Direct downstream operators of ``name``, in edge order."""
        return self._children[name]

    def parents(self, name: str) -> tuple[str, ...]:
        """Direct upstream operators of ``name``, in edge order."""
        return self._parents[name]

    def topological_order(self) -> tuple[str, ...]:
        """A topological order, deterministic: Kahn's algorithm always taking the ready
        operator declared first (a heap of declaration positions: O((V + E) log V))."""
        names = self.names
        position = {name: i for i, name in enumerate(names)}
        indegree = [len(self._parents[name]) for name in names]
        ready = [i for i, d in enumerate(indegree) if d == 0]  # ascending: already a heap
        order: list[str] = []
        while ready:
            name = names[heapq.heappop(ready)]
            order.append(name)
            for child in self._children[name]:
                at = position[child]
                indegree[at] -= 1
                if indegree[at] == 0:
                    heapq.heappush(ready, at)
        return tuple(order)

    def descendants(self, name: str) -> frozenset[str]:
        """Operators reachable from ``name`` by a non-empty path."""
        return reachable(name, self._children)

    def ancestors(self, name: str) -> frozenset[str]:
        """Operators from which ``name`` is reachable by a non-empty path."""
        return reachable(name, self._parents)

    def _find_cycle(self) -> list[str] | None:
        """One directed cycle as a list of operator names, or None for a DAG."""
        white, grey, black = 0, 1, 2
        colour = {name: white for name in self._by_name}
        for root in self.names:
            if colour[root] != white:
                continue
            stack: list[tuple[str, int]] = [(root, 0)]
            path: list[str] = [root]
            colour[root] = grey
            while stack:
                node, next_child = stack[-1]
                kids = self._children[node]
                if next_child < len(kids):
                    stack[-1] = (node, next_child + 1)
                    child = kids[next_child]
                    if colour[child] == grey:
                        return path[path.index(child):]
                    if colour[child] == white:
                        colour[child] = grey
                        stack.append((child, 0))
                        path.append(child)
                else:
                    colour[node] = black
                    stack.pop()
                    path.pop()
        return None

    # --- JSON ------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The JSON form (see the module docstring)."""
        return {
            "operators": [
                {"name": op.name, "kind": op.kind.value, "unique": op.unique}
                for op in self.operators
            ],
            "edges": [[src, dst] for src, dst in self.edges],
        }

    @staticmethod
    def from_json(value: Any, where: str = "dataflow") -> "Dataflow":
        """Parse and validate the JSON form; raise :class:`InputError` naming the problem and
        its JSON path (prefixed with ``where``, typically the file name)."""
        try:
            obj = expect_object(value, "top level")
            reject_unknown_keys(obj, {"operators", "edges"}, "top level")
            if "operators" not in obj:
                raise InputError("missing field 'operators'", "top level")
            operators = tuple(
                _operator_from_json(item, f"operators[{i}]")
                for i, item in enumerate(expect_list(obj["operators"], "operators"))
            )
            edges = tuple(
                _edge_from_json(item, f"edges[{i}]")
                for i, item in enumerate(expect_list(obj.get("edges", []), "edges"))
            )
            flow = Dataflow(operators, edges)
            flow.require_fed_operators()
            return flow
        except InputError as error:
            raise error.located(where) from None


def _operator_from_json(value: Any, where: str) -> Operator:
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"name", "kind", "unique"}, where)
    if "name" not in obj:
        raise InputError("missing field 'name'", where)
    name = expect_str(obj["name"], f"{where}.name")
    if "kind" not in obj:
        raise InputError(f"operator {name!r} has no 'kind'", where)
    raw_kind = expect_str(obj["kind"], f"{where}.kind")
    try:
        kind = OperatorKind(raw_kind)
    except ValueError:
        allowed = "|".join(k.value for k in OperatorKind)
        raise InputError(
            f"operator {name!r} has unknown kind {raw_kind!r} (expected {allowed})", where
        ) from None
    unique = expect_bool(obj.get("unique", False), f"{where}.unique")
    return Operator(name, kind, unique)


def _edge_from_json(value: Any, where: str) -> tuple[str, str]:
    pair = expect_list(value, where)
    if len(pair) != 2:
        raise InputError(f"an edge is a pair [from, to], got {len(pair)} items", where)
    return expect_str(pair[0], f"{where}[0]"), expect_str(pair[1], f"{where}[1]")


def reachable(start: str, step: Mapping[str, Sequence[str]]) -> frozenset[str]:
    """Every node reachable from ``start`` in one or more ``step``s (``start`` itself only
    on a cycle). ``step`` maps a node to its successors, e.g. children or parents over any
    subset of the edges (executors use it on the §7.1 pipelined edges)."""
    seen: set[str] = set()
    frontier = list(step[start])
    while frontier:
        node = frontier.pop()
        if node not in seen:
            seen.add(node)
            frontier.extend(step[node])
    return frozenset(seen)


def dataflow(operators: Iterable[tuple[str, str] | tuple[str, str, bool]],
             edges: Iterable[tuple[str, str]]) -> Dataflow:
    """Shorthand used by tests and examples: ``dataflow([("A", "source"), ("B",
    "one-to-one", True)], [("A", "B")])``."""
    ops = []
    for item in operators:
        unique = bool(item[2]) if len(item) == 3 else False
        ops.append(Operator(item[0], OperatorKind(item[1]), unique))
    return Dataflow(tuple(ops), tuple(edges))
