"""Re-planning a live DGS query: another synchronization plan for a job, at a micro-batch
boundary (docs/spark.md, "DGS on a live stream").

A re-plan is a synchronization of the whole job at its root, at a point where every event
released so far has been processed (a committed micro-batch boundary): the job's leaf states
are joined up the *old* plan into the root's state (``join_up``, what a root event does) and
forked down the *new* plan (``fork_down``, DGS Def. 2.1's fork functions). For a consistent
program (C1-C3) the joined state is the sequential state of the processed events, whatever
the plan, so the run goes on exactly as if the new plan had been used from a fresh state
holding those events. Events waiting in the mailbox are re-assigned to the new plan's
responsible workers; they are released by the same rule as before. Jobs not re-planned keep
their leaf states untouched.

The states pass through the driver once (a re-plan is rare; every batch's state work stays in
the tasks). The new states go to a fresh states directory; the commit naming them (and the new
plan in the job signature) is the switch, so a driver killed before it resumes on the old plan.
"""

from __future__ import annotations

import uuid
from dataclasses import replace
from typing import Any, Sequence

from spec.dgs.program import Program

from spark_impl.dgs.streaming_input import Mailbox
from spark_impl.dgs.tasks import Layout, PartitionStates, Slot, fork_down, join_up
from spark_impl.dgs.topology import Topology


def replan_states(leaves: dict[Slot, Any], old: Layout, new: Layout, programs: Sequence[Program],
                  changed: frozenset[int]) -> list[PartitionStates]:
    """The partitions of ``new`` (module docstring): ``changed`` jobs' leaves joined by the
    old plan and forked by the new one; the other jobs' leaves as they are."""
    parts: list[PartitionStates] = [{} for _ in range(new.partitions)]
    for (job, leaf), state in leaves.items():
        if job not in changed:
            parts[leaf][(job, leaf)] = state
    for job in sorted(changed):
        was, now, program = old.topos[job], new.topos[job], programs[job]
        root = join_up(program, was, was.plan.root.id, {leaf: s for (j, leaf), s in leaves.items() if j == job})
        for leaf, state in fork_down(program, now, now.plan.root.id, root).items():
            parts[leaf][(job, leaf)] = state
    return parts


def remap_mailbox(box: Mailbox, topo: Topology) -> Mailbox:
    """``box`` with every waiting event (taken or held for reordering) assigned to ``topo``'s
    responsible worker; its watermarks and late counts as they are."""
    return replace(box, timers=dict(box.timers), buffered=[replace(e, worker=topo.worker_of(e.tag, e.stream))
                                                           for e in box.buffered],
                   held=[replace(e, worker=topo.worker_of(e.tag, e.stream)) for e in box.held],
                   highest=dict(box.highest), late=dict(box.late))


def migrate(spark: Any, load: Any, save: Any, old: Layout, new: Layout, programs: Sequence[Program],
            changed: frozenset[int]) -> None:
    """Read ``old``'s leaf states (``load``: task function over ``range(old.partitions)``),
    re-plan them (:func:`replan_states`) and save them (``save``: task function writing
    partition ``i``)."""
    total = old.partitions
    leaves: dict[Slot, Any] = {}
    for part in spark.sparkContext.parallelize(range(total), total).mapPartitions(load).collect():
        leaves.update(part)
    parts = replan_states(leaves, old, new, programs, changed)
    spark.sparkContext.parallelize(parts, len(parts)).mapPartitionsWithIndex(save).count()


def fresh_name() -> str:
    """A states directory name no other commit uses."""
    return f"replan-{uuid.uuid4().hex[:12]}"
