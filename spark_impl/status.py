"""What a live query has committed, read from its checkpoint alone - also right after a
restart, from another process, with no Spark session (docs/production/operating.md, "Status").

:func:`read_status` (any front end: it finds which from the checkpoint's layout),
:func:`fries_status`, :func:`oplus_status` and :func:`dgs_status` return a :class:`Status`:

* ``committed_batch``: the front end's last commit (Fries: the executor batch of its last
  commit record; O+ and DGS: the Structured Streaming batch id), -1 before the first;
  ``stream_batch``: the last batch Structured Streaming itself recorded as committed (from a
  local query checkpoint; None when it is elsewhere);
* ``versions``: the active version of every operator (Fries: ``R<j>``, the request whose
  update it runs, ``R0`` as started; O+: ``R<id>:p<parallelism>`` per job, the rescale that set
  its parallelism; DGS: ``plan:<digest>`` per job, the first 12 hex digits of the SHA-256 of
  the plan JSON in force);
* ``requests``: every request the checkpoint knows, each :data:`REQUEST_STATES`: ``pending``
  (accepted, not yet in force), ``applied``, ``rejected`` (with the reason), ``lost`` (Fries: made
  but not committed before its driver stopped - a restart does not make it again, submit it
  again; from the checkpoint alone a request of a driver that still runs shows as ``lost`` until
  it commits: the run handle's status knows better);
* ``late``: tuples the front end dropped as late (O+: below the watermark; 0 where a front end
  counts none), ``state_bytes``: bytes of the committed state files.

The run handles' ``status()`` (Fries, DGS) and ``run_status()`` (all three) add what only the
running driver knows: requests accepted but not yet committed (``pending``), refusals of this
process.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import re
from dataclasses import asdict, dataclass, field
from typing import Any, Iterable, Mapping

from spec.errors import InputError
from spec.fries.dataflow import OperatorKind

from spark_impl.dgs.streaming_store import Store as DgsStore
from spark_impl.oplus.streaming_log import Commit as OplusCommit
from spark_impl.oplus.streaming_log import Log as OplusLog
from spark_impl.oplus.streaming_log import state_location
from spark_impl.reconfig.layout import load_request
from spark_impl.reconfig.progress import PROGRESS, Progress
from spark_impl.reconfig.retention import CURRENT
from spark_impl.reconfig.storage import batch_name
from spark_impl.records import RecordLog, read_json_record
from spark_impl.store import display, is_uri, join, open_store, resolve

__all__ = ["FRONT_ENDS", "REQUEST_STATES", "RequestStatus", "Status", "dgs_status", "fries_status",
           "late_total", "oplus_status", "read_status", "tree_bytes"]

FRONT_ENDS = ("fries", "oplus", "dgs")
REQUEST_STATES = ("pending", "applied", "rejected", "lost")
_REJECTED = re.compile(r"^R(\d+) rejected")


@dataclass(frozen=True)
class RequestStatus:
    """One request: ``request`` names it (Fries ``R<j>``, O+ ``R<id>``, DGS ``job <j>``; a
    refusal without a number ``refusal <n>``), ``state`` is one of :data:`REQUEST_STATES`,
    ``detail`` says more (the reason of a rejection, what a pending one waits for)."""

    request: str
    state: str
    detail: str = ""


@dataclass(frozen=True)
class Status:
    """A query's committed state (module docstring)."""

    front_end: str
    committed_batch: int
    versions: dict[str, str]
    requests: tuple[RequestStatus, ...] = ()
    late: int = 0
    state_bytes: int | None = None
    stream_batch: int | None = None
    notes: tuple[str, ...] = field(default=())

    def count(self, state: str) -> int:
        """How many requests are in ``state``."""
        return sum(1 for r in self.requests if r.state == state)

    def to_json(self) -> dict[str, Any]:
        """A JSON-able dict (for a status endpoint or a log line)."""
        raw = asdict(self)
        raw["requests"] = [asdict(r) for r in self.requests]
        raw["notes"] = list(self.notes)
        return raw


def tree_bytes(location: str) -> int:
    """Bytes of every file under ``location`` (a local path or a :mod:`spark_impl.store` URI;
    0 when absent)."""
    if not is_uri(location):
        total = 0
        for folder, _, files in os.walk(location):
            for name in files:
                try:
                    total += os.stat(os.path.join(folder, name)).st_size
                except FileNotFoundError:  # deleted by retention meanwhile
                    pass
        return total
    import pyarrow.fs as pafs

    fs, inner = resolve(location)
    infos = fs.get_file_info(pafs.FileSelector(inner, recursive=True, allow_not_found=True))
    return sum(int(i.size or 0) for i in infos if i.type == pafs.FileType.File)


def _root(checkpoint_dir: str) -> str:
    return checkpoint_dir if is_uri(checkpoint_dir) else os.path.abspath(checkpoint_dir)


def _stream_batch(query_checkpoint: str | None) -> int | None:
    """The last batch Structured Streaming committed (``commits/<id>`` of a local checkpoint)."""
    if query_checkpoint is None or is_uri(query_checkpoint):
        return None
    folder = os.path.join(query_checkpoint, "commits")
    if not os.path.isdir(folder):
        return None
    return max((int(n) for n in os.listdir(folder) if n.isdigit()), default=-1)


def _exists(location: str) -> bool:
    if not is_uri(location):
        return os.path.isdir(location)
    store = open_store(location)
    return bool(store.list(""))


# --- Fries -------------------------------------------------------------------------------


def fries_status(checkpoint_dir: str, *, committed: Progress | None = None, live: Progress | None = None,
                 queued: bool = False, query_checkpoint: str | None = None) -> Status:
    """The status of a Fries query (``start_query``'s ``checkpoint_dir``). ``committed`` (the
    running executor's committed view; default: the checkpoint's last commit record), ``live``
    (its live view) and ``queued`` (a request accepted, not yet made) come from a running
    driver: its uncommitted requests are then ``pending``, not ``lost``."""
    root = _root(checkpoint_dir)
    executor = join(root, "executor")
    if not _exists(executor):
        raise InputError(f"no Fries checkpoint at {display(root)} (no executor/ in it)", "checkpoint_dir")
    store = open_store(executor)
    if committed is None:
        # a log object of its own: the executor's cached one must not be touched from here
        found = RecordLog(store, PROGRESS).latest()
        committed = Progress.from_json(found[1]["jobs"][0]) if found is not None else Progress()
    batch = committed.history[-1] if committed.history else -1
    operators, notes = _fries_operators(store)
    versions = {op: "R0" for op in operators}
    current = read_json_record(store, CURRENT) or {"jobs": {}}
    folded = current["jobs"].get("0", {})
    for op, j in folded.items():
        if op:
            versions[op] = f"R{j}"
    active = committed.active.j if committed.active is not None else None
    requests: list[RequestStatus] = []
    for j in range(1, committed.made + 1):
        if j == active:
            requests.append(RequestStatus(f"R{j}", "pending", "made, not every operator switched yet"))
            continue
        requests.append(RequestStatus(f"R{j}", "applied"))
        if j > int(folded.get("", 0)):
            try:
                for op in sorted(load_request(executor, 0, j).operators):
                    versions[op] = f"R{j}"
            except Exception as error:  # noqa: BLE001 - a request file gone or not loadable here
                notes.append(f"R{j}'s operators unknown: {type(error).__name__}: {error}")
    rejected = live.rejected if live is not None else committed.rejected
    numbered = set()
    for n, message in enumerate(rejected, 1):
        match = _REJECTED.match(message)
        if match is not None:
            numbered.add(int(match.group(1)))
        requests.append(RequestStatus(f"R{match.group(1)}" if match else f"refusal {n}", "rejected", message))
    made = live.made if live is not None else committed.made
    for j in range(committed.made + 1, made + 1):
        requests.append(RequestStatus(f"R{j}", "pending", "made, not yet completed and committed"))
    if queued:
        requests.append(RequestStatus(f"R{made + 1}", "pending", "accepted, made with the next executor batch"))
    for j in _request_numbers(store):
        if j > made and j not in numbered:
            requests.append(RequestStatus(f"R{j}", "lost", "made but not committed before its driver stopped; "
                                                             "not made again after a restart: submit it again"))
    return Status("fries", batch, versions, tuple(requests), 0, _fries_state_bytes(executor, committed),
                  _stream_batch(query_checkpoint or (None if is_uri(root) else os.path.join(root, "query"))),
                  tuple(notes))


def _fries_operators(store: Any) -> tuple[list[str], list[str]]:
    """The job's non-source operators, from its jobs file (user functions are unpickled)."""
    names = [n for n in store.list("") if n.startswith("jobs") and n.endswith(".pkl")]
    if not names:
        return [], ["no jobs file: operators unknown"]
    try:
        data = store.read(names[-1])
        jobs = pickle.loads(data) if data is not None else []
        flow = jobs[0].dataflow
        return [n for n in flow.names if flow.kind(n) is not OperatorKind.SOURCE], []
    except Exception as error:  # noqa: BLE001 - a user module missing in this process
        return [], [f"operators unknown: the jobs file did not load here ({type(error).__name__}: {error})"]


def _request_numbers(store: Any) -> list[int]:
    numbers = []
    for name in store.list("requests"):
        if name.startswith("s0-r") and name.endswith(".pkl") and name[4:-4].isdigit():
            numbers.append(int(name[4:-4]))
    return sorted(numbers)


def _fries_state_bytes(executor: str, committed: Progress) -> int | None:
    if not committed.history:
        return 0
    return tree_bytes(join(executor, batch_name(committed.history[-1])))


# --- O+ ----------------------------------------------------------------------------------


def oplus_status(checkpoint_dir: str, *, refused: Iterable[str] = (), query_checkpoint: str | None = None) -> Status:
    """The status of an O+ query (``start_oplus_query``'s ``checkpoint_dir``); ``refused``: the
    running driver's refused rescale requests (reasons)."""
    location = state_location(checkpoint_dir)
    if not _exists(location):
        raise InputError(f"no O+ checkpoint at {display(checkpoint_dir)} (no oplus/ in it)", "checkpoint_dir")
    log = OplusLog(checkpoint_dir)
    last = log.latest()
    versions: dict[str, str] = {}
    requests: list[RequestStatus] = []
    late = 0
    state_bytes = 0
    if last is not None:
        versions = _oplus_versions(last)
        late = sum(last.late.values())
        state_bytes = tree_bytes(join(location, "state", f"b{last.batch:012d}"))
    applied = set(last.applied) if last is not None else set()
    for request in log.requests():
        ident = int(request["id"])
        if ident in applied:
            requests.append(RequestStatus(f"R{ident}", "applied",
                                          f"job {request['job']} at parallelism {request['parallelism']}"))
        else:
            at = request["watermark"]
            requests.append(RequestStatus(f"R{ident}", "pending", f"job {request['job']} to parallelism "
                                          f"{request['parallelism']} at watermark {at if at is not None else 'any'}"))
    for n, reason in enumerate(refused, 1):
        requests.append(RequestStatus(f"refusal {n}", "rejected", reason))
    root = _root(checkpoint_dir)
    return Status("oplus", last.batch if last is not None else -1, versions, tuple(requests), late, state_bytes,
                  _stream_batch(query_checkpoint or (None if is_uri(root) else os.path.join(root, "query"))))


def _oplus_versions(last: OplusCommit) -> dict[str, str]:
    setter: dict[int, int] = {}
    for rescale in last.rescales:
        setter[int(rescale["job"])] = int(rescale["request"])
    return {f"job {j}": f"R{setter.get(j, 0)}:p{p}" for j, p in sorted(last.parallelism.items())}


# --- DGS ---------------------------------------------------------------------------------


def dgs_status(checkpoint_dir: str, *, pending: Mapping[int, Any] | None = None,
               applied: Iterable[tuple[int, int]] = (), refused: Iterable[str] = (),
               query_checkpoint: str | None = None) -> Status:
    """The status of a DGS query (``start_dgs_query``'s ``checkpoint_dir``). A re-plan is
    durable only once applied (its commit names the new plan): from the checkpoint alone the
    versions say which plan runs; ``pending`` (job -> plan not yet applied), ``applied``
    (``(batch, job)`` this driver applied) and ``refused`` come from a running driver."""
    root = _root(checkpoint_dir)
    location = join(root, "dgs")
    if not _exists(location):
        raise InputError(f"no DGS checkpoint at {display(root)} (no dgs/ in it)", "checkpoint_dir")
    commit = DgsStore(location).read()
    versions: dict[str, str] = {}
    late = 0
    state_bytes = 0
    batch = -1
    if commit is not None:
        batch = commit.batch
        for j, (_, plan, _) in enumerate(commit.jobs):
            digest = hashlib.sha256(json.dumps(plan, sort_keys=True).encode()).hexdigest()[:12]
            versions[f"job {j}"] = f"plan:{digest}"
        late = sum(n for box in commit.mailboxes for n in box.late.values())  # late events, every job and stream
        state_bytes = tree_bytes(join(location, "states", commit.states))
    requests = [RequestStatus(f"job {job}", "applied", f"re-planned at batch {b}") for b, job in applied]
    requests += [RequestStatus(f"job {job}", "pending", "re-plan applied at the start of the next batch")
                 for job in sorted(pending or {})]
    requests += [RequestStatus(f"refusal {n}", "rejected", reason) for n, reason in enumerate(refused, 1)]
    return Status("dgs", batch, versions, tuple(requests), late, state_bytes,
                  _stream_batch(query_checkpoint or (None if is_uri(root) else os.path.join(root, "query"))))


def late_total(value: Any) -> int:
    """A late count given as an int or as a per-job mapping."""
    if isinstance(value, Mapping):
        return sum(int(v) for v in value.values())
    return int(value or 0)


def read_status(checkpoint_dir: str, query_checkpoint: str | None = None) -> Status:
    """The status of whichever front end wrote ``checkpoint_dir`` (Fries: ``executor/``, O+:
    ``oplus/``, DGS: ``dgs/``); InputError when it holds none of them."""
    root = _root(checkpoint_dir)
    if _exists(join(root, "executor")):
        return fries_status(root, query_checkpoint=query_checkpoint)
    if _exists(join(root, "oplus")):
        return oplus_status(root, query_checkpoint=query_checkpoint)
    if _exists(join(root, "dgs")):
        return dgs_status(root, query_checkpoint=query_checkpoint)
    raise InputError(f"no live query checkpoint at {display(root)} (expected executor/, oplus/ or dgs/ in it)",
                     "checkpoint_dir")
