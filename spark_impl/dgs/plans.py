"""Building common synchronization plans (Def. 3.1): a root responsible for the synchronizing
implementation tags over a balanced binary tree of leaves (what the §4 examples use, and what
the benchmark runs at 1, 2 and 4 leaves)."""

from __future__ import annotations

from typing import Sequence

from spec.dgs.plan import Plan, Worker
from spec.dgs.streams import ImplTag
from spec.errors import InputError


def balanced_plan(root_impl: Sequence[ImplTag], leaf_impl: Sequence[Sequence[ImplTag]], *,
                  root_type: str = "State", inner_type: str | None = None,
                  root_prims: tuple[str, str] = ("fork", "join"),
                  inner_prims: tuple[str, str] | None = None) -> Plan:
    """Root with ``root_impl`` over a balanced tree whose leaves have ``leaf_impl[i]``.

    One leaf gives the one-worker plan (everything at the root). Workers below the root have
    ``inner_type`` (default: the root's) and fork/join with ``inner_prims`` (default: the
    root's); the root forks/joins with ``root_prims``."""
    if not leaf_impl:
        raise InputError("a plan needs at least one leaf", "leaf_impl")
    if len(leaf_impl) == 1:
        return Plan(Worker("w0", root_type, frozenset(root_impl) | frozenset(leaf_impl[0])))
    kind = inner_type or root_type
    prims = inner_prims or root_prims
    counter = iter(range(1, 1_000_000))

    def build(group: Sequence[Sequence[ImplTag]], top: bool) -> Worker:
        state_type = root_type if top else kind
        if len(group) == 1:
            return Worker(f"w{next(counter)}", state_type, frozenset(group[0]))
        middle = len(group) // 2
        fork, join = root_prims if top else prims
        children = (build(group[:middle], False), build(group[middle:], False))
        own = frozenset(root_impl) if top else frozenset()
        return Worker("w0" if top else f"w{next(counter)}", state_type, own, fork, join, children)

    return Plan(build(leaf_impl, True))
