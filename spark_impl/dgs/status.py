"""The status of a DGS live query read from its checkpoint (:func:`dgs_status`;
:mod:`spark_impl.status` says what each field means)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Iterable, Mapping

from spec.errors import InputError

from spark_impl.dgs.streaming_input import backlog
from spark_impl.dgs.streaming_store import Store as DgsStore
from spark_impl.run_status import RequestStatus, Status, checkpoint_root, location_exists, stream_batch, tree_bytes
from spark_impl.store import display, is_uri, join


def dgs_status(checkpoint_dir: str, *, pending: Mapping[int, Any] | None = None,
               applied: Iterable[tuple[int, int]] = (), refused: Iterable[str] = (),
               query_checkpoint: str | None = None) -> Status:
    """The status of a DGS query (``start_dgs_query``'s ``checkpoint_dir``). A re-plan is
    durable only once applied (its commit names the new plan): from the checkpoint alone the
    versions say which plan runs; ``pending`` (job -> plan not yet applied), ``applied``
    (``(batch, job)`` this driver applied) and ``refused`` come from a running driver."""
    root = checkpoint_root(checkpoint_dir)
    location = join(root, "dgs")
    if not location_exists(location):
        raise InputError(f"no DGS checkpoint at {display(root)} (no dgs/ in it)", "checkpoint_dir")
    commit = DgsStore(location).read()
    versions: dict[str, str] = {}
    late = 0
    state_bytes = 0
    batch = -1
    waiting = 0
    if commit is not None:
        waiting = backlog(commit.mailboxes)
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
                  stream_batch(query_checkpoint or (None if is_uri(root) else os.path.join(root, "query"))),
                  backlog=waiting)
