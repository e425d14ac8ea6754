"""Operators, partition attributes and jobs (Enorm §4.3, Table 1).

An operator ``O`` has partition attributes ``PA(O)``, a subset of its input schema used to
parallelize it; each distinct combination of their values is one partition. The partition
cardinality ``PA^c`` is the number of partitions those attributes can produce.
Interpretation choice: each attribute has a *domain size* (``None`` for unbounded), and
``PA^c(A) = prod_{a in A} |dom(a)|``: ``1`` for the empty set (Enorm: ``PA = {} => PA^c = 1``)
and unbounded (``math.inf``) as soon as one attribute is (Enorm: ``PA = IS => PA^c = inf``).

Table 1: map is stateless and flexible, compute is stateful and flexible, consolidate is
stateless and rigid (a flexible operator tolerates a change of partitioner without state
migration; a consolidate buffers data but loses nothing that upstream cannot resend).

A job is a DAG of operators whose edges carry the output rate (tuples per second) from the
upstream to the downstream operator (Alg. 1 input: "output rate between any pair of
operators"). Constructing a :class:`Job` validates it and raises :class:`InputError`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from enum import Enum
from typing import Mapping

from spec.errors import InputError


class OperatorKind(str, Enum):
    """Enorm's three operators (§4.2) with their Table 1 properties."""

    MAP = "map"
    COMPUTE = "compute"
    CONSOLIDATE = "consolidate"

    @property
    def stateful(self) -> bool:
        """Table 1: only compute maintains state."""
        return self is OperatorKind.COMPUTE

    @property
    def flexible(self) -> bool:
        """Table 1: map and compute are flexible, consolidate is rigid."""
        return self is not OperatorKind.CONSOLIDATE


@dataclass(frozen=True)
class Operator:
    """One operator: ``name``, ``kind`` and partition attributes ``pa`` (Enorm §4.3)."""

    name: str
    kind: OperatorKind
    pa: frozenset[str]


@dataclass(frozen=True)
class Job:
    """A validated job: operators, attribute domain sizes (``None`` = unbounded) and edges
    ``(upstream, downstream, rate)`` with ``rate >= 0``.

    Raises :class:`InputError` on duplicate operators, unknown attributes or endpoints,
    self-loops, duplicate edges, negative rates and cycles."""

    operators: tuple[Operator, ...]
    domains: Mapping[str, int | None]
    edges: tuple[tuple[str, str, float], ...]
    _index: Mapping[str, int] = field(init=False, repr=False, compare=False)
    _out: Mapping[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        index: dict[str, int] = {}
        for position, op in enumerate(self.operators):
            where = f"operators[{position}]"
            if op.name in index:
                raise InputError(f"duplicate operator name {op.name!r}", where)
            for attribute in sorted(op.pa):
                if attribute not in self.domains:
                    raise InputError(f"unknown partition attribute {attribute!r}", where)
            index[op.name] = position
        for attribute, size in self.domains.items():
            if size is not None and size < 1:
                raise InputError(f"domain size must be >= 1, got {size}", f"domains.{attribute}")
        seen: set[tuple[str, str]] = set()
        for position, (src, dst, rate) in enumerate(self.edges):
            where = f"edges[{position}]"
            for end in (src, dst):
                if end not in index:
                    raise InputError(f"edge names unknown operator {end!r}", where)
            if src == dst:
                raise InputError(f"self-loop on operator {src!r}", where)
            if (src, dst) in seen:
                raise InputError(f"duplicate edge {src!r} -> {dst!r}", where)
            if not rate >= 0:
                raise InputError(f"rate must be >= 0, got {rate}", where)
            seen.add((src, dst))
        object.__setattr__(self, "_index", index)
        out: dict[str, list[str]] = {op.name: [] for op in self.operators}
        for src, dst, _ in self.edges:
            out[src].append(dst)
        # the successors indexed once: Kahn's check and downstream() stay linear in the edges
        object.__setattr__(self, "_out", {name: tuple(successors) for name, successors in out.items()})
        self._check_acyclic()

    def _check_acyclic(self) -> None:
        indegree = {op.name: 0 for op in self.operators}
        for _, dst, _ in self.edges:
            indegree[dst] += 1
        ready = [name for name, d in indegree.items() if d == 0]
        visited = 0
        while ready:
            name = ready.pop()
            visited += 1
            for child in self.downstream(name):
                indegree[child] -= 1
                if indegree[child] == 0:
                    ready.append(child)
        if visited != len(self.operators):
            raise InputError("the job graph has a cycle", "edges")

    @property
    def names(self) -> tuple[str, ...]:
        """Operator names in declaration order (the order Alg. 1 iterates ``O`` in)."""
        return tuple(op.name for op in self.operators)

    def operator(self, name: str) -> Operator:
        """The operator called ``name``."""
        return self.operators[self._index[name]]

    def downstream(self, name: str) -> tuple[str, ...]:
        """``name.downstreamOP`` of Alg. 1: direct successors, in edge order."""
        return self._out[name]

    def rate(self, src: str, dst: str) -> float:
        """``getOutputRate(src, dst)`` of Alg. 1 (0 when there is no edge)."""
        return sum(r for s, d, r in self.edges if s == src and d == dst)

    def total_traffic(self) -> float:
        """The sum of every edge's rate."""
        return sum(rate for _, _, rate in self.edges)

    def cardinality(self, attributes: frozenset[str]) -> float:
        """``PA^c``: ``prod |dom(a)|`` (1 for the empty set, ``math.inf`` if one attribute is
        unbounded)."""
        result: float = 1
        for attribute in attributes:
            size = self.domains[attribute]
            if size is None:
                return math.inf
            result *= size
        return result
