"""The greedy communication optimizer of DGS Appendix B: tag rates (and locations) in, a
P-valid synchronization plan out.

Appendix B: the optimizer "generates a graph of implementation tags (where the edges are
between dependent tags) and iteratively removes the implementation tags with the lowest rate
until it ends up with at least two disconnected components". The removed tags are handled by
the current worker; the components are split into two non-empty groups (we balance their
total rates, heaviest component first, then their sizes) that become its two subtrees, recursively, "until there is no
implementation tag left". Leaves - which process events without synchronizing - thus get the
high-rate tags.

It then "exhaustively tries to match this implementation tag tree with a sequence of forks":
:func:`assign_types` tries every fork/join pair of the worker's state type (both child
orders) so that each child's state type accepts its subtree's tags (V1); a subtree that
cannot be typed is collapsed into its parent. The root has type ``State_0``, which accepts
every tag, so a plan always exists. Each worker is placed on the location (``node``) where
most of its own - or, if it has none, its subtree's - event rate arrives (Example B.1).
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import count
from typing import Iterator, Mapping

from reference.dgs.strategies import components
from reference.dgs.validity import check_plan
from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program
from spec.dgs.streams import ImplTag
from spec.errors import InputError


@dataclass(frozen=True)
class TagTree:
    """The implementation-tag tree before typing: tags kept here and 0 or 2 subtrees."""

    kept: tuple[ImplTag, ...]
    children: tuple["TagTree", ...] = ()

    def all_tags(self) -> Iterator[ImplTag]:
        """Every implementation tag of the subtree."""
        yield from self.kept
        for child in self.children:
            yield from child.all_tags()


def split_tags(program: Program, impls: list[ImplTag], rates: Mapping[ImplTag, float]) -> TagTree:
    """Appendix B's greedy decomposition of ``impls``."""
    ordered = sorted(impls, key=lambda t: (rates[t], repr(t)))
    if len(ordered) <= 1:
        return TagTree(tuple(ordered))
    removed: list[ImplTag] = []
    remaining = list(ordered)
    parts = components(program, remaining)
    while len(parts) < 2 and remaining:
        removed.append(remaining.pop(0))
        parts = components(program, remaining)
    if len(parts) < 2:
        return TagTree(tuple(ordered))
    groups: tuple[list[ImplTag], list[ImplTag]] = ([], [])
    totals = [0.0, 0.0]
    for part in sorted(parts, key=lambda p: (-sum(rates[t] for t in p), repr(p))):
        side = 0 if (totals[0], len(groups[0])) <= (totals[1], len(groups[1])) else 1
        groups[side].extend(part)
        totals[side] += sum(rates[t] for t in part)
    children = (split_tags(program, groups[0], rates), split_tags(program, groups[1], rates))
    return TagTree(tuple(removed), children)


def assign_types(program: Program, tree: TagTree, state_type: str, ids: Iterator[int]) -> Worker | None:
    """Type ``tree`` with root type ``state_type`` (module docstring), or None."""
    pred = program.state_types[state_type].pred
    every = frozenset(tree.all_tags())
    if not {t for t, _ in every} <= pred:
        return None
    worker_id = f"w{next(ids)}"
    if tree.children:
        for fork, join in program.fork_join_pairs(state_type):
            for first, second in (tree.children, tree.children[::-1]):
                left = assign_types(program, first, fork.left, ids)
                right = assign_types(program, second, fork.right, ids) if left is not None else None
                if left is not None and right is not None:
                    return Worker(worker_id, state_type, frozenset(tree.kept), fork.name, join.name, (left, right))
    return Worker(worker_id, state_type, every)


def _place(worker: Worker, rates: Mapping[ImplTag, float], locations: Mapping[ImplTag, str]) -> Worker:
    children = tuple(_place(c, rates, locations) for c in worker.children)
    tags = worker.impl_tags or worker.subtree_impl_tags()
    load: dict[str, float] = {}
    for tag in tags:
        if tag in locations:
            load[locations[tag]] = load.get(locations[tag], 0.0) + rates[tag]
    node = min(load, key=lambda n: (-load[n], n)) if load else None
    return Worker(worker.id, worker.state_type, worker.impl_tags, worker.fork, worker.join, children, node)


def _renumber(worker: Worker, ids: Iterator[int]) -> Worker:
    worker_id = f"w{next(ids)}"
    children = tuple(_renumber(c, ids) for c in worker.children)
    return Worker(worker_id, worker.state_type, worker.impl_tags, worker.fork, worker.join, children, worker.node)


def optimize(
    program: Program, rates: Mapping[ImplTag, float], locations: Mapping[ImplTag, str] | None = None
) -> Plan:
    """A P-valid plan for the implementation tags of ``rates`` (events per second, >= 0),
    placing workers by ``locations`` (implementation tag -> node) when given."""
    for impl, rate in rates.items():
        if impl[0] not in program.tags:
            raise InputError(f"{impl[0]!r} is not a tag of {program.name}", "rates")
        if rate < 0:
            raise InputError(f"negative rate {rate} for {impl!r}", "rates")
    tree = split_tags(program, sorted(rates, key=repr), rates)
    root = assign_types(program, tree, program.initial, count())
    assert root is not None  # State_0 accepts every tag
    root = _renumber(_place(root, rates, locations or {}), count())
    plan = Plan(root)
    check_plan(program, plan)
    return plan
