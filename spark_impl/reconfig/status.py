"""The status of a Fries live query read from its checkpoint (:func:`fries_status`;
:mod:`spark_impl.status` says what each field means)."""

from __future__ import annotations

import os
import pickle
import re
from typing import Any

from spec.errors import InputError
from spec.fries.dataflow import OperatorKind

from spark_impl.reconfig.control import CONTROL
from spark_impl.reconfig.layout import load_request
from spark_impl.reconfig.progress import PROGRESS, Progress
from spark_impl.reconfig.retention import CURRENT
from spark_impl.reconfig.storage import batch_name
from spark_impl.records import RecordLog, read_json_record
from spark_impl.run_status import RequestStatus, Status, checkpoint_root, location_exists, stream_batch, tree_bytes
from spark_impl.store import display, is_uri, join, open_store

_REJECTED = re.compile(r"^R(\d+) rejected")


def fries_status(checkpoint_dir: str, *, committed: Progress | None = None, live: Progress | None = None,
                 queued: bool = False, query_checkpoint: str | None = None) -> Status:
    """The status of a Fries query (``start_query``'s ``checkpoint_dir``). ``committed`` (the
    running executor's committed view; default: the checkpoint's last commit record), ``live``
    (its live view) and ``queued`` (a request accepted, not yet made) come from a running
    driver: its uncommitted requests are then ``pending``, not ``lost``."""
    root = checkpoint_root(checkpoint_dir)
    executor = join(root, "executor")
    if not location_exists(executor):
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
                  stream_batch(query_checkpoint or (None if is_uri(root) else os.path.join(root, "query"))),
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
    """Every request number of job 0 the checkpoint shows was made: a saved request file, or
    an entry of the control log (the driver writes it when it makes a request, before the
    request file may exist: a driver killed in between leaves only the control record)."""
    numbers = set()
    for name in store.list("requests"):
        if name.startswith("s0-r") and name.endswith(".pkl") and name[4:-4].isdigit():
            numbers.add(int(name[4:-4]))
    log = RecordLog(store, CONTROL)
    for seq in log.sequences():
        try:
            record = log.read(seq)
        except Exception:  # noqa: BLE001 - a torn control record names no request we can trust
            continue
        for entry in (record or {}).get("requests", []):
            if int(entry.get("s", -1)) == 0:
                numbers.add(int(entry["j"]))
    return sorted(numbers)


def _fries_state_bytes(executor: str, committed: Progress) -> int | None:
    if not committed.history:
        return 0
    return tree_bytes(join(executor, batch_name(committed.history[-1])))
