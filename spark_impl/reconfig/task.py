"""What a Spark task of one stage does: run its objects for one micro-batch.

Records are tuples ``(level, s, obj, kind, tag, src, txn, key, value)``: kind ``DATA`` a tuple
for object ``obj`` of job ``s`` at ``level``, tagged with the sending object's version (the
last request it switched for); kind ``MARKER`` a Fries epoch marker from ``src`` (in-component
edges only); kind ``STATS`` a small report for the driver (switch times), passed to the end.

Per object and batch (Fries Alg. 2-4 in micro-batch form):

* **fries, component head** (and **naive**, every reconfigured object): before every tuple
  (and when the object starts and ends) the task polls the control store; once the FCM is
  visible it switches: new logic, state transformation applied once to every key's state,
  update operation logged, and (fries) a marker sent to every in-component child object.
  Tuples processed before the switch leave tagged old, after it tagged new.
* **fries, other component member**: *alignment*. It processes the batch's old-version input
  (and input from outside the component) first; when every in-component parent object's
  marker has arrived it switches, then processes the held-back new-version input; until
  then new-version input is buffered in its checkpointed state.
* **epoch**: every reconfigured object switches when it starts the first batch after the one
  that was running when the request was made (the batch boundary is the epoch marker).
* objects outside the MCS (fries) or not reconfigured: process in arrival order.
"""

from __future__ import annotations

import itertools
import os
import pickle
import time
from dataclasses import dataclass, field
from typing import Any, Iterable, Iterator

from spec.fries.dataflow import OperatorKind
from spec.fries.scenario import operator_of
from spark_impl.keys import key_order, route
from spark_impl.lru import LRU
from spark_impl.reconfig.control import ControlEntry, ControlReader
from spark_impl.reconfig.layout import (
    STATS_LEVEL, JobLayout, load_jobs, load_request, partition_of, roles,
)
from spark_impl.reconfig.mcs import ObjectRole
from spark_impl.reconfig.model import Job, OperatorLogic
from spark_impl.reconfig.storage import ObjState, TaskFile, batch_name, read_task_file, task_path, write_task_file
from spark_impl.records import frame, unframe
from spark_impl.store import display, join, open_store

DATA, MARKER, STATS = 0, 1, 2
Record = tuple[int, int, str, int, int, str, str, Any, Any]


@dataclass(frozen=True)
class BatchPlan:
    """What the driver tells every task of global batch ``g`` (small: no data; in the batch's
    ``plan.pkl``, :func:`write_plan`)."""

    g: int
    directory: str
    jobs_path: str
    jobs_stamp: float
    partitions: int
    scheduler: str
    faults: frozenset[str]
    ranges: dict[int, tuple[int, int]]          # job -> source tuples [lo, hi) ingested now
    active: frozenset[int]                      # jobs whose objects run in this batch
    flush: frozenset[int]                       # jobs whose blocking operators flush now
    base: dict[int, int] = field(default_factory=dict)  # job -> batch to load state from (restart)
    fused: bool = False      # no source stage: level-1 tasks read the source (see source_stage)
    announce: bool = True    # level-1 tasks create their start markers (the driver waits for one)
    control: int = 0         # the newest control record when the batch was planned (control.py)


_READERS: dict[str, ControlReader] = {}


def _reader(directory: str) -> ControlReader:
    reader = _READERS.get(directory)
    if reader is None:
        reader = _READERS[directory] = ControlReader(directory)
    return reader


def source_stage(plan: BatchPlan, part: int) -> Iterator[tuple[int, Record]]:
    """Stage 0: read this batch's source tuples of the jobs owned by partition ``part``.

    Fused (``plan.fused``, the driver's choice for few partitions): there is no stage 0 and
    no shuffle after it; every level-1 task reads every job's tuples of the batch and keeps
    those routed to its own partition - the same records, in the same order, reach the same
    partition as through the shuffle, for one Spark stage less per micro-batch (sources are
    replayable, so reading a tuple twice gives the same tuple)."""
    jobs, layouts = load_jobs(plan.jobs_path, plan.jobs_stamp)
    for s, (lo, hi) in sorted(plan.ranges.items()):
        if not plan.fused and partition_of(s, "", plan.partitions) != part:
            continue
        job, lay = jobs[s], layouts[s]
        for index in range(lo, hi):
            source, txn, key, value = job.source.get(index)
            children = job.dataflow.children(source)
            if not children:
                continue
            child = children[route(key, len(children))]
            obj = job.object_of(child, key)
            dest = partition_of(s, obj, plan.partitions)
            if plan.fused and dest != part:
                continue
            yield dest, (lay.level[child], s, obj, DATA, 0, source, txn, key, value)


class _Stage:
    """One task of stage ``level`` (see the module docstring)."""

    def __init__(self, plan: BatchPlan, level: int, part: int) -> None:
        self.plan, self.level, self.part = plan, level, part
        self.jobs, self.layouts = load_jobs(plan.jobs_path, plan.jobs_stamp)
        self.reader = _reader(plan.directory)
        self.reader.start(plan.control)
        self.out: list[tuple[int, Record]] = []
        self.file = TaskFile()
        self.fries = plan.scheduler == "fries" and "naive" not in plan.faults
        self._roles: dict[tuple[int, int, int], dict[str, ObjectRole]] = {}
        self._failed: set[tuple[int, int, int]] = set()

    def run(self, records: Iterable[tuple[int, Record]]) -> Iterator[tuple[int, Record]]:
        if self.plan.announce:
            mark_started(self.plan, self.level, self.part)
        inbox: dict[tuple[int, str], list[Record]] = {}
        for pkey, rec in records:
            if rec[0] == self.level:
                inbox.setdefault((rec[1], rec[2]), []).append(rec)
            else:
                yield pkey, rec
        plan = self.plan
        # after a driver restart every job loads its last committed batch (plan.base): batch
        # g-1 may be one no commit record names (its record was torn), so it is not read at all
        restarted = all(s in plan.base for s in range(len(self.jobs)))
        prev = None if restarted else read_task_file(task_path(plan.directory, plan.g - 1, self.level, self.part))
        objects = dict(prev.objects) if prev else {}
        for s, g0 in plan.base.items():  # restarted jobs: back to their last committed batch
            for key in [k for k in objects if k[0] == s]:
                del objects[key]
            if g0 >= 0:
                base = read_task_file(task_path(plan.directory, g0, self.level, self.part))
                if base:
                    objects.update({k: v for k, v in base.objects.items() if k[0] == s})
        self.file.objects = objects
        for s in sorted(plan.active):
            job, lay = self.jobs[s], self.layouts[s]
            for op, obj in lay.objects_at.get(self.level, ()):
                if partition_of(s, obj, plan.partitions) != self.part:
                    continue
                st = objects.setdefault((s, obj), ObjState())
                self._object(s, job, lay, op, obj, st, inbox.get((s, obj), []))
        write_task_file(task_path(plan.directory, plan.g, self.level, self.part), self.file)
        yield from self.out

    # --- one object ------------------------------------------------------------------------

    def _object(self, s: int, job: Job, lay: JobLayout, op: str, obj: str, st: ObjState,
                inbox: list[Record]) -> None:
        plan = self.plan
        if any(r[4] > st.switched for r in inbox):
            self.reader.poll(force=True)
        else:
            self.reader.poll()
        entry = self.reader.entry(s)
        role = self._role(s, job, obj, st, entry)
        cost = job.timing.operator_cost.get(op, 0.0) * job.timing.stragglers.get(obj, 1.0) / 1000.0
        logic = self._logic(s, job, op, st)
        log = self.file.logs.setdefault((s, obj), []) if job.trace else None
        data = [r for r in inbox if r[3] == DATA]

        def process(rec: Record) -> None:
            nonlocal logic
            txn, key, value = rec[6], rec[7], rec[8]
            if cost:
                time.sleep(cost)
            new_state, emitted = logic.process(st.states.get(key), key, value)
            st.states[key] = new_state
            if log is not None:
                log.append((txn, False, rec[5]))  # rec[5]: the sender, spec.fries.consistency (C2)
            self._emit(s, job, lay, op, obj, st, txn, emitted)

        def switch(e: ControlEntry, r: ObjectRole) -> None:
            nonlocal logic
            if (s, e.j, e.attempt) in self._failed:
                return
            if r.reconfigured:
                update = load_request(plan.directory, s, e.j).updates[op]
                times = 2 if "double-transform" in plan.faults else 1
                states = st.states
                try:
                    for _ in range(times):
                        states = {k: update.transform(v) for k, v in states.items()}
                except Exception as error:  # noqa: BLE001 - user code: the request is rolled back
                    # The object does not switch; the driver rolls the job back to its last
                    # commit (made before this request) and rejects the request.
                    self._failed.add((s, e.j, e.attempt))
                    message = f"the state transformation of {op!r} raised {type(error).__name__}: {error} on {obj}"
                    self.out.append((0, (STATS_LEVEL, s, obj, STATS, e.j, str(e.attempt), "fail", 0, message)))
                    return
                st.states = states
                st.fn_req = e.j
                logic = update.logic
                if log is not None:
                    log.append((f"R{e.j}", True))
            st.switched = e.j
            st.markers = set()
            self.out.append((0, (STATS_LEVEL, s, obj, STATS, e.j, str(e.attempt), "switch", int(r.reconfigured), time.time())))
            if self.fries:
                for child in sorted(r.children):
                    child_level = lay.level[operator_of(child)]
                    self.out.append((partition_of(s, child, plan.partitions),
                                     (child_level, s, child, MARKER, e.j, obj, "", 0, None)))

        if entry is not None and role is not None and plan.scheduler == "epoch":
            if plan.g >= entry.epoch_batch:
                switch(entry, role)
            for rec in data:
                process(rec)
        elif entry is not None and role is not None and self.fries and not role.head:
            self._align(entry, role, st, inbox, data, process, switch)
        else:
            # FCM receivers (fries heads, naive targets) and everyone else: between two tuples
            # poll the control store; a request that arrives mid-partition reaches this task now.
            def maybe_switch(force: bool) -> None:
                if plan.scheduler == "epoch":
                    return
                self.reader.poll(force)
                current = self.reader.entry(s)
                if current is None or current.j <= st.switched:
                    return
                r = self._role(s, job, obj, st, current)
                if r is not None and (r.head or not self.fries) and current.visible_to(obj, time.time()):
                    switch(current, r)

            for rec in data:
                maybe_switch(False)
                process(rec)
            maybe_switch(True)
        if s in plan.flush and job.dataflow.kind(op) is OperatorKind.BLOCKING:
            for key in sorted(st.states, key=key_order):  # keys of mixed types
                self._emit(s, job, lay, op, obj, st, f"{op}:final", logic.flush(st.states[key], key))

    def _align(self, entry: ControlEntry, role: ObjectRole, st: ObjState, inbox: list[Record],
               data: list[Record], process: Any, switch: Any) -> None:
        """Fries alignment of a non-head component member (see the module docstring)."""
        st.markers |= {r[5] for r in inbox if r[3] == MARKER and r[4] == entry.j and r[5] in role.parents}
        aligned = st.markers >= role.parents
        if "missing-alignment" in self.plan.faults and st.markers:
            # the seeded bug: no alignment - switch on the first marker, before the batch's
            # old-version input and before the other parents' markers
            switch(entry, role)
            for rec in [*st.buffer, *data]:
                process(rec)
            st.buffer = []
            return
        is_new = [r[5] in role.parents and r[4] == entry.j for r in data]
        for rec, new in zip(data, is_new):
            if not new:
                process(rec)
        held = [rec for rec, new in zip(data, is_new) if new]
        if aligned:
            switch(entry, role)
            for rec in [*st.buffer, *held]:
                process(rec)
            st.buffer = []
        else:
            st.buffer.extend(held)

    def _role(self, s: int, job: Job, obj: str, st: ObjState, entry: ControlEntry | None) -> ObjectRole | None:
        """This object's role for the entry's request (None: not involved / already switched)."""
        if entry is None or entry.j <= st.switched:
            return None
        key = (s, entry.j, entry.attempt)
        found = self._roles.get(key)
        if found is None:
            found = self._roles[key] = roles(job, s, load_request(self.plan.directory, s, entry.j), self.fries)
        return found.get(obj)

    def _logic(self, s: int, job: Job, op: str, st: ObjState) -> OperatorLogic:
        if st.fn_req == 0:
            return job.logic[op]
        return load_request(self.plan.directory, s, st.fn_req).updates[op].logic

    def _emit(self, s: int, job: Job, lay: JobLayout, op: str, obj: str, st: ObjState, txn: str,
              emitted: list[tuple[str, int, Any]]) -> None:
        for receiver, key, value in emitted:
            if not receiver:
                self.file.outputs.append((s, op, txn, key, value))
                continue
            dest = job.object_of(receiver, key)
            self.out.append((partition_of(s, dest, self.plan.partitions),
                             (lay.level[receiver], s, dest, DATA, st.switched, obj, txn, key, value)))


def plan_name(g: int) -> str:
    """Batch ``g``'s plan inside the checkpoint store."""
    return f"{batch_name(g)}/plan.pkl"


def plan_path(directory: str, g: int) -> str:
    """Where the driver puts batch ``g``'s plan for its tasks."""
    return join(directory, plan_name(g))


def write_plan(plan: BatchPlan) -> None:
    """Driver side: persist the plan (framed, whole or not at all) before the batch's Spark
    job starts."""
    open_store(plan.directory).write_once(plan_name(plan.g), frame(pickle.dumps(plan, protocol=pickle.HIGHEST_PROTOCOL)))


_PLANS: LRU[tuple[object, ...], BatchPlan] = LRU(4)


def load_plan(directory: str, g: int) -> BatchPlan:
    """Task side: batch ``g``'s plan (read once per Python worker and file version: a batch
    planned again after a failed attempt, or a checkpoint directory used afresh, rewrites
    the file; :meth:`spark_impl.store.Store.load`)."""
    path = plan_path(directory, g)

    def decode(data: bytes) -> BatchPlan:
        plan: BatchPlan = pickle.loads(unframe(path, data))
        return plan

    plan = open_store(directory).load(plan_name(g), decode, _PLANS)
    if plan is None:
        raise FileNotFoundError(f"no plan for batch {g} in {display(path)}")
    return plan


def stage_function(directory: str, g: int, level: int) -> Any:
    """The ``mapPartitionsWithIndex`` function of stage ``level`` of batch ``g``. The plan is
    read from the batch's ``plan.pkl``, not captured, so the driver can build a batch's Spark
    job before the batch is planned (while the previous batch runs)."""

    def run(part: int, records: Iterable[tuple[int, Record]]) -> Iterator[tuple[int, Record]]:
        plan = load_plan(directory, g)
        if level == 0:
            for _ in records:  # the (empty) input, consumed so the Python worker is reused
                pass
            yield from source_stage(plan, part)
            return
        if level == 1 and plan.fused:
            records = itertools.chain(records, source_stage(plan, part))
        yield from _Stage(plan, level, part).run(records)

    return run


def started_name(g: int, level: int, part: int) -> str:
    """Marker a task of stage ``level`` creates when it starts (the driver waits for the first
    one before making the batch's scenario requests, so they land while tasks work)."""
    return f"{batch_name(g)}/started-L{level}-p{part}"


def mark_started(plan: BatchPlan, level: int, part: int) -> None:
    """Create the start marker (idempotent for task retries)."""
    open_store(plan.directory).write_once(started_name(plan.g, level, part), b"")


def ensure_dirs(plan: BatchPlan) -> None:
    """Driver side: create the batch directory before the job runs (local disks only: an
    object store has no directories)."""
    store = open_store(plan.directory)
    if store.local:
        os.makedirs(store.path(batch_name(plan.g)), exist_ok=True)
