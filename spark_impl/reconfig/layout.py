"""Where every object of every job runs: levels, Spark partitions, and request look-ups.

Computed identically on the driver and in every task from the pickled jobs, so the driver
never ships per-object assignments. An operator's *level* is 0 for a source and otherwise
1 + the largest level of its parents; stage ``L`` of a micro-batch runs every object of
level ``L`` (all jobs at once), so a tuple's whole scope is processed within its batch.
Worker ``i`` of operator ``o`` of job ``s`` runs in Spark partition ``(crc32("s/o") + i) mod P``
of its stage, so the workers of one operator run in parallel.
"""

from __future__ import annotations

import hashlib
import pickle
import zlib
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Callable, Sequence

from pyspark import cloudpickle  # noqa: TID253 - the executor pickles jobs with it; it runs on pyspark anyway

from spec.fries.dataflow import OperatorKind
from spark_impl.lru import LRU
from spark_impl.reconfig.mcs import ObjectRole, object_components
from spark_impl.reconfig.model import Job, Request
from spark_impl.records import frame, unframe
from spark_impl.store import display, join, open_store, read_bytes

STATS_LEVEL = 1 << 30

_dumps: Callable[[Any], bytes] = getattr(cloudpickle, "dumps")


def partition_of(s: int, obj: str, partitions: int) -> int:
    """The Spark partition of object ``obj`` of job ``s``: the workers ``O#0, O#1, ...`` of one
    operator go to consecutive partitions from a hashed start, so they run in parallel."""
    op, _, worker = obj.partition("#")
    return (zlib.crc32(f"{s}/{op}".encode()) + (int(worker) if worker else 0)) % partitions


def levels(job: Job) -> dict[str, int]:
    """Level of every operator (see the module docstring)."""
    flow = job.dataflow
    level: dict[str, int] = {}
    for name in flow.topological_order():
        if flow.kind(name) is OperatorKind.SOURCE:
            level[name] = 0
        else:
            level[name] = 1 + max((level[p] for p in flow.parents(name)), default=0)
    return level


@dataclass(frozen=True)
class JobLayout:
    """Levels and objects of one job."""

    level: dict[str, int]
    objects_at: dict[int, tuple[tuple[str, str], ...]]  # level -> ((operator, object), ...)
    depth: int


def layout(job: Job) -> JobLayout:
    """The :class:`JobLayout` of ``job``."""
    level = levels(job)
    objects_at: dict[int, list[tuple[str, str]]] = {}
    for name in job.dataflow.names:
        if job.dataflow.kind(name) is OperatorKind.SOURCE:
            continue
        for obj in job.objects(name):
            objects_at.setdefault(level[name], []).append((name, obj))
    return JobLayout(level, {k: tuple(v) for k, v in objects_at.items()}, max(level.values(), default=0))


def save_jobs(directory: str, jobs: Sequence[Job]) -> str:
    """Pickle the jobs (cloudpickle: user functions included) next to the checkpoint; returns
    the file's location. On an object store the name carries the content's digest, so a task
    never serves a stale cached copy (:func:`load_jobs` caches by location)."""
    store = open_store(directory)
    data = _dumps(list(jobs))
    name = "jobs.pkl" if store.local else f"jobs-{hashlib.blake2b(data, digest_size=8).hexdigest()}.pkl"
    store.write_once(name, data)
    return store.path(name)


@lru_cache(maxsize=8)
def load_jobs(path: str, stamp: float) -> tuple[tuple[Job, ...], tuple[JobLayout, ...]]:
    """Task side: the jobs and their layouts (cached per process; ``stamp`` = file mtime)."""
    data = read_bytes(path)
    if data is None:
        raise FileNotFoundError(f"no jobs file {display(path)}")
    jobs = tuple(pickle.loads(data))
    return jobs, tuple(layout(job) for job in jobs)


def request_name(s: int, j: int) -> str:
    """Request ``j`` of job ``s`` inside the checkpoint store."""
    return f"requests/s{s}-r{j}.pkl"


def request_path(directory: str, s: int, j: int) -> str:
    """File holding request ``j`` of job ``s`` (written by the driver when it is made)."""
    return join(directory, request_name(s, j))


def save_request(directory: str, s: int, j: int, request: Request) -> None:
    """Driver side: persist a request (framed: length + digest, :mod:`spark_impl.records`) so
    tasks (and restarts) can load its functions."""
    open_store(directory).write_once(request_name(s, j), frame(_dumps(request)))


_REQUESTS: LRU[tuple[Any, ...], Request] = LRU(64)  # bounded: a month-long stream


def load_request(directory: str, s: int, j: int) -> Request:
    """Task side: request ``j`` of job ``s`` (cached per process and file version); a damaged
    file is refused (:class:`~spark_impl.records.CorruptStateError`)."""
    path = request_path(directory, s, j)

    def decode(data: bytes) -> Request:
        request: Request = pickle.loads(unframe(path, data))
        return request

    found = open_store(directory).load(request_name(s, j), decode, _REQUESTS)
    if found is None:
        raise FileNotFoundError(f"no request file {display(path)}")
    return found


_ROLES: LRU[tuple[Any, ...], dict[str, ObjectRole]] = LRU(256)


def roles(job: Job, s: int, request: Request, fries: bool) -> dict[str, ObjectRole]:
    """Objects that act for ``request``: Fries roles (MCS components over objects), or for
    the naive and epoch schedulers every object of a reconfigured operator (each its own
    'head', no alignment).

    Cached under what the roles depend on - the dataflow, the workers of every operator, the
    reconfigured operators and the scheduler - never under ``id(job)``: CPython reuses the id
    of a freed job, so a later job could get an earlier job's roles."""
    counts = tuple((name, job.workers(name)) for name in job.dataflow.names)
    key = (s, request.operators, fries, job.dataflow, counts)
    found = _ROLES.get(key)
    if found is not None:
        return found
    if fries:
        workers = {name: job.objects(name) for name in job.dataflow.names}
        found = object_components(job.dataflow, workers, request.operators)
    else:
        found = {obj: ObjectRole(True, True, frozenset(), frozenset())
                 for op in request.operators for obj in job.objects(op)}
    _ROLES.put(key, found)
    return found


def passthrough(record: Any) -> Any:
    """Identity (named so Spark pickles it cheaply)."""
    return record
