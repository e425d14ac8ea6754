"""What the Spark DGS executor needs to know about a synchronization plan (DGS Def. 3.1).

* **Leaves are partitions.** Leaf ``i`` (left-to-right order) is partition ``i`` of the state
  RDD; between synchronizing events only leaves hold state (a worker with children has forked
  its whole state to them).
* **Routing.** Each implementation tag ``(tag, stream)`` has one responsible worker (P-validity,
  spec.dgs.validity); an event goes to it. An event whose worker is a leaf is a *leaf event*;
  otherwise a *synchronizing event* of that worker.
* **Host of a worker.** The partition of its leftmost leaf: a synchronizing event of ``w``
  gathers the states of ``w``'s subtree leaves there, joins them up to ``w``, processes the
  event and forks the state back down.
* **Release streams** ``D(tag, stream)``: the streams that carry an implementation tag whose
  tag depends on ``tag``, plus ``stream`` itself: an event may be released once every one of
  them has delivered something later (spark_impl.dgs.release).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Hashable

from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program
from spec.dgs.streams import ImplTag
from spark_impl.dgs.plan_checks import responsibility_unique, tags_known, v1_holds, v2_holds
from spec.errors import InputError


@dataclass(frozen=True)
class Topology:
    """The plan, indexed for routing and for the tasks (picklable)."""

    plan: Plan
    leaves: tuple[str, ...]
    owner: dict[ImplTag, str]
    workers: dict[str, Worker]
    subtree_leaves: dict[str, tuple[int, ...]]
    release_streams: dict[ImplTag, frozenset[str]]

    def leaf_index(self, worker_id: str) -> int | None:
        """The partition of a leaf worker, None for a worker with children."""
        worker = self.workers.get(worker_id)
        return None if worker is None or worker.children else self.subtree_leaves[worker_id][0]

    def host(self, worker_id: str) -> int:
        """The partition where ``worker_id``'s synchronizing events run."""
        return self.subtree_leaves[worker_id][0]

    def worker_of(self, tag: Hashable, stream: str) -> str:
        """The worker responsible for ``(tag, stream)``; InputError if none is."""
        worker = self.owner.get((tag, stream))
        if worker is None:
            raise InputError(f"no worker of the plan is responsible for implementation tag "
                             f"({tag!r}, {stream!r})", f"stream {stream!r}")
        return worker


def topology(program: Program, plan: Plan) -> Topology:
    """Index ``plan`` after checking it P-valid for ``program`` (Def. 3.2)."""
    check_valid_plan(program, plan)
    workers = plan.workers()
    leaves = tuple(w.id for w in workers if not w.children)
    owner = {impl: w.id for w in workers for impl in w.impl_tags}
    position = {leaf: k for k, leaf in enumerate(leaves)}
    subtree: dict[str, tuple[int, ...]] = {}
    for worker in reversed(workers):  # children first; left-to-right order kept
        subtree[worker.id] = ((position[worker.id],) if not worker.children
                              else tuple(k for child in worker.children for k in subtree[child.id]))
    streams_of: dict[Hashable, set[str]] = {}
    for tag, stream in owner:
        streams_of.setdefault(tag, set()).add(stream)
    # one depends call per pair of distinct tags, not per pair of implementation tags
    dependent = {tag: frozenset(s for other, streams in streams_of.items() if program.depends(tag, other)
                                for s in streams) for tag in streams_of}
    release: dict[ImplTag, frozenset[str]] = {}
    for tag, stream in owner:
        release[(tag, stream)] = frozenset({stream}) | dependent[tag]
    return Topology(plan, leaves, owner, {w.id: w for w in workers}, subtree, release)


def check_valid_plan(program: Program, plan: Plan) -> None:
    """InputError naming the first Def. 3.2 condition the plan breaks (``streamproof
    check-dgs`` explains it in detail). The predicates are :mod:`spark_impl.dgs.plan_checks`'s,
    equal to :mod:`spec.dgs.validity`'s but near-linear in the plan's workers."""
    checks: list[tuple[Any, str]] = [
        (tags_known(program, plan), "a worker names a tag the program does not have"),
        (responsibility_unique(plan), "an implementation tag belongs to two workers"),
        (v1_holds(program, plan), "V1 fails: a worker is not well typed (state type, its tags, "
                                  "fork/join names, or not 0 or 2 children)"),
        (v2_holds(program, plan), "V2 fails: two unrelated workers have dependent or shared "
                                  "implementation tags"),
    ]
    for holds, problem in checks:
        if not holds:
            raise InputError(f"plan is not P-valid (DGS Def. 3.2): {problem}", "plan")
