"""One micro-batch of a live O+ query as one Spark job, with its state on durable storage.

1. Every tuple of the batch is routed SN style (STRETCH Alg. 1: one copy per responsible
   instance, ``route_key(key, parallelism)`` for each key of f_MK) and shuffled to
   its instance's partition (``partitionBy``: exactly one task per instance, so an instance
   with no tuple still expires its windows). Late tuples (below the job's previous watermark)
   are dropped here; the driver counted them (and applied the late policy). A user-defined
   operator's tuples are routed by its own f_MK (:mod:`spark_impl.oplus.user_operator`).
2. Task ``j`` loads instance ``j``'s key states from the previous commit's state files, runs
   :func:`spark_impl.oplus.instance.process` (TB order, then expiry of every window instance
   with ``L + WS <= W``), and writes the new states and the outputs to this batch's objects
   (:func:`spark_impl.oplus.streaming_log.write_part`: whole or not at all, on a local disk or
   an object store, so a re-executed task rewrites the same object).

**Elastic rescale at a watermark, VSN style.** The key states live in the shared checkpoint,
not in an instance (STRETCH's shared sigma). A rescale decided at the previous batch's
watermark switches the key -> instance mapping for this batch: the task of instance ``j``
reads, for each rescaled job, *every* previous state file and keeps the keys that the new
mapping gives it. Nothing is sent between instances and no handover job runs; every key's
state is read by exactly one new instance, whole, so nothing is lost or duplicated.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Iterator

from spark_impl.oplus.instance import PartitionState, ScenarioRound, owners, process
from spark_impl.oplus.operators import Item
from spark_impl.oplus.streaming_jobs import Entry, route_key
from spark_impl.oplus.streaming_log import load_part, write_part


@dataclass(frozen=True)
class RoundPlan:
    """What every task of one batch needs (picklable, small)."""

    plans: dict[int, ScenarioRound]  # per job: operator, parallelism, previous and new watermark
    partitions: int  # instances = tasks (the largest parallelism of any job)
    previous: int | None  # the previous commit's batch, whose state parts are read (None: no state yet)
    previous_partitions: int
    moved: frozenset[int]  # jobs rescaled at the previous watermark: re-read by the new mapping
    location: str  # the query's state location (spark_impl.oplus.streaming_log.state_location)
    batch: int  # this batch: its state and output parts


def load_state(plan: RoundPlan, index: int) -> PartitionState:
    """Instance ``index``'s key states for this batch (module docstring: VSN rescale)."""
    if plan.previous is None:
        return {}
    own = load_part(plan.location, "state", plan.previous, index) if index < plan.previous_partitions else None
    state: PartitionState = {job: keys for job, keys in (own or []) if job not in plan.moved}
    if not plan.moved:
        return state
    for f in range(plan.previous_partitions):
        part = dict(load_part(plan.location, "state", plan.previous, f) or [])
        for job in plan.moved & set(part):
            size = plan.plans[job].parallelism if job in plan.plans else 1
            mine = {key: value for key, value in part[job].items() if route_key(key, size) == index}
            if mine:
                state.setdefault(job, {}).update(mine)
    return state


def run_round(entries: Any, plan: RoundPlan) -> list[tuple[int, int]]:
    """Run the batch (``entries``: an RDD of :data:`Entry`); per task ``(instance, outputs)``."""
    plans = plan.plans

    def fan_out(entry: Entry) -> Iterator[tuple[int, tuple[int, Item]]]:
        job, source, ts, _, _, seq, values = entry
        if ts is None or job not in plans:
            return
        round_plan = plans[job]
        if ts < round_plan.previous:
            return  # late: the driver counted it
        user = round_plan.user
        targets = (owners(values, round_plan.op, round_plan.parallelism, route_key) if user is None
                   else {route_key(k, round_plan.parallelism) for k in user.keys_of(values, ts, source, seq)})
        for instance in sorted(targets):
            yield instance, (job, (ts, source, seq, values))

    def task(index: int, routed: Iterator[tuple[int, tuple[int, Item]]]) -> Iterator[tuple[int, int]]:
        state = load_state(plan, index)
        state, outputs = process(index, state, [entry for _, entry in routed], plans)
        write_part(plan.location, "state", plan.batch, index, list(state.items()))
        write_part(plan.location, "out", plan.batch, index, outputs)
        yield index, len(outputs)

    return list(entries.flatMap(fan_out).partitionBy(plan.partitions, _identity)
                .mapPartitionsWithIndex(task).collect())


def _identity(instance: int) -> int:
    return instance
