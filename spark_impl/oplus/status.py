"""The status of an O+ live query read from its checkpoint (:func:`oplus_status`;
:mod:`spark_impl.status` says what each field means)."""

from __future__ import annotations

import os
from typing import Iterable

from spec.errors import InputError

from spark_impl.oplus.streaming_log import Commit as OplusCommit
from spark_impl.oplus.streaming_log import Log as OplusLog
from spark_impl.oplus.streaming_log import state_location
from spark_impl.run_status import RequestStatus, Status, checkpoint_root, location_exists, stream_batch, tree_bytes
from spark_impl.store import display, is_uri, join


def oplus_status(checkpoint_dir: str, *, refused: Iterable[str] = (), query_checkpoint: str | None = None) -> Status:
    """The status of an O+ query (``start_oplus_query``'s ``checkpoint_dir``); ``refused``: the
    running driver's refused rescale requests (reasons)."""
    location = state_location(checkpoint_dir)
    if not location_exists(location):
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
    root = checkpoint_root(checkpoint_dir)
    return Status("oplus", last.batch if last is not None else -1, versions, tuple(requests), late, state_bytes,
                  stream_batch(query_checkpoint or (None if is_uri(root) else os.path.join(root, "query"))))


def _oplus_versions(last: OplusCommit) -> dict[str, str]:
    setter: dict[int, int] = {}
    for rescale in last.rescales:
        setter[int(rescale["job"])] = int(rescale["request"])
    return {f"job {j}": f"R{setter.get(j, 0)}:p{p}" for j, p in sorted(last.parallelism.items())}
