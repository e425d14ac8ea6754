"""Reading a job's committed history: sink outputs, schedule (per-object logs), final states.

The visible sink of job ``s`` is the outputs written by the batches *committed* for ``s``
(``Progress.history``), in batch order: a batch that ran but was rolled back by a restart is
not part of it, and a replayed batch appears once (idempotent by batch id). The fault
``duplicate-after-restart`` reads every batch that ran instead (an appending sink).
"""

from __future__ import annotations

from typing import Any, Iterable

from spec.fries.schedule import Operation, Schedule
from spec.fries.scenario import operator_of
from spark_impl.reconfig.layout import JobLayout, partition_of
from spark_impl.reconfig.model import Job
from spark_impl.reconfig.storage import TaskFile, batches_on, read_task_file, task_path
from spark_impl.store import open_store


class FileCache:
    """Reads each task file once."""

    def __init__(self, directory: str, depth: int, partitions: int) -> None:
        self.directory, self.depth, self.partitions = directory, depth, partitions
        self._files: dict[tuple[int, int, int], TaskFile | None] = {}

    def get(self, g: int, level: int, part: int) -> TaskFile | None:
        """Task file (g, level, part), or None."""
        key = (g, level, part)
        if key not in self._files:
            self._files[key] = read_task_file(task_path(self.directory, g, level, part))
        return self._files[key]

    def batch(self, g: int) -> Iterable[TaskFile]:
        """Every task file of batch ``g``."""
        for level in range(1, self.depth + 1):
            for part in range(self.partitions):
                found = self.get(g, level, part)
                if found is not None:
                    yield found


def outputs_of(cache: FileCache, s: int, batches: Iterable[int]) -> list[tuple[str, str, Any, Any]]:
    """Sink outputs (sink, txn, key, value) of job ``s`` in ``batches``."""
    found: list[tuple[str, str, Any, Any]] = []
    for g in batches:
        for content in cache.batch(g):
            found.extend((sink, txn, key, value) for js, sink, txn, key, value in content.outputs if js == s)
    return found


def traced_logs(cache: FileCache, s: int, job: Job, batches: Iterable[int]) -> dict[str, list[tuple[Any, ...]]]:
    """Per-object trace entries ``(txn, is_update[, sender])`` of job ``s`` over ``batches``
    (objects in dataflow order)."""
    logs: dict[str, list[tuple[Any, ...]]] = {}
    for name in job.dataflow.names:
        if name in job.logic:
            for obj in job.objects(name):
                logs[obj] = []
    for g in batches:
        for content in cache.batch(g):
            for (js, obj), ops in content.logs.items():
                if js == s:
                    logs[obj].extend(ops)
    return logs


def schedule_of(cache: FileCache, s: int, job: Job, batches: Iterable[int]) -> Schedule:
    """Per-object logs of job ``s`` over ``batches`` (objects in dataflow order)."""
    logs = traced_logs(cache, s, job, batches)
    return Schedule({obj: tuple(Operation(op[0], op[1]) for op in ops) for obj, ops in logs.items()})


def senders_of(cache: FileCache, s: int, job: Job, batches: Iterable[int]) -> dict[str, tuple[str | None, ...]]:
    """Parallel to :func:`schedule_of`: the sender of each data operation (None for updates;
    a source's tuples name the source operator)."""
    logs = traced_logs(cache, s, job, batches)
    return {obj: tuple(op[2] if len(op) > 2 else None for op in ops) for obj, ops in logs.items()}


def states_of(cache: FileCache, s: int, last: int | None) -> dict[tuple[str, Any], Any]:
    """Final state of every (operator, key) of job ``s`` after committed batch ``last``."""
    states: dict[tuple[str, Any], Any] = {}
    if last is None:
        return states
    for content in cache.batch(last):
        for (js, obj), st in content.objects.items():
            if js == s:
                for key, value in st.states.items():
                    states[(operator_of(obj), key)] = value
    return states


def read_states_for(directory: str, g: int, s: int, lay: JobLayout, partitions: int,
                    operators: set[str], job: Job) -> dict[tuple[str, Any], Any]:
    """Committed states of the given operators of job ``s`` (for request validation)."""
    states: dict[tuple[str, Any], Any] = {}
    for op in operators:
        if op not in lay.level or op not in job.logic:
            continue
        for obj in job.objects(op):
            content = read_task_file(task_path(directory, g, lay.level[op], partition_of(s, obj, partitions)))
            if content is None or (s, obj) not in content.objects:
                continue
            for key, value in content.objects[(s, obj)].states.items():
                states[(op, key)] = value
    return states


def ran_batches(directory: str) -> list[int]:
    """Every batch that ran (for the appending-sink fault)."""
    return batches_on(open_store(directory))
