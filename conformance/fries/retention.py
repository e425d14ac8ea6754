"""The Fries suite's storage oracle: after a batch of runs, the executor's record logs are pruned.

``spark_impl.records.RecordLog`` keeps a checkpoint's commit records (``progress/``) and its
control messages (``control/``) as write-once records ``<seq:020d>.rec`` and deletes all but
the newest :data:`KEEP` after every append (:func:`spark_impl.reconfig.progress.write_progress`,
:func:`spark_impl.reconfig.control.write_control`). Every oracle of a run reads only the newest
record, so a pruning bug (an off-by-one in the incremental prune that leaks one record per
commit, a ``keep`` never passed) loses nothing visible: the run is right, only its storage
grows without bound - what a month-long stream cannot afford (docs/spark.md, "Bounded
storage"), and no other oracle of the default suite sees it.

:func:`log_problem` walks a batch's checkpoint directory after the engine call (every entry
path: a local directory, the ``objstore`` path's ``file://`` tree, the streaming path's one
checkpoint per query) and names the first log holding more records than :data:`KEEP`. The
engine call is finished by then, so nothing is appending: a correct executor has pruned each
log down to its newest two records at its last append (a driver that crashed and resumed lists
the log at its first prune, so a crashed driver's records go too).
"""

from __future__ import annotations

import os
import re
from typing import Any

from spark_impl.reconfig.layout import load_request, request_name
from spark_impl.reconfig.sinks import read_delivered
from spark_impl.reconfig.storage import batches_on

KEEP = 2
"""Records each log keeps (``progress.KEEP``; ``write_control`` passes ``keep=2``)."""

LOGS = ("progress", "control")
"""The record logs of a reconfiguration executor's checkpoint."""

_RECORD = re.compile(r"^\d{20}\.rec$")


def log_problem(root: str) -> str | None:
    """The first record log under ``root`` that holds more than :data:`KEEP` records, in
    words (None: every log is pruned, or there is no checkpoint)."""
    for directory, subdirs, files in sorted(os.walk(root)):
        subdirs.sort()
        if os.path.basename(directory) not in LOGS:
            continue
        records = sorted(name for name in files if _RECORD.match(name))
        if len(records) > KEEP:
            where = os.path.relpath(directory, root)
            return (f"the checkpoint log {where}/ holds {len(records)} records ({records[0]} ... {records[-1]}) after "
                    f"the run; the executor keeps the newest {KEEP} (old records are not pruned: storage grows "
                    "with every commit)")
    return None


def retention_problem(ex: Any, keep: int) -> str | None:
    """After a run under ``Retention(keep)`` with a sink (the ``sink`` and ``objstore`` paths):
    the batches still on the checkpoint's store and in every job's history, in words, if any is
    one that nothing needs (None: none).

    What a batch is needed for (``spark_impl.reconfig.retention``'s docstring; docs/spark.md,
    "Bounded storage"): it is one of a job's last ``keep`` committed batches (the last is its
    restart base), one of its pending batches, a committed batch its sink has not received, or
    the batch that ran last. Everything else below the last batch that ran is deleted after
    every batch, and its history entries go with it. A retention that keeps more (every
    committed batch, an undelivered test that is always true) loses nothing a run can see - the
    outputs, states and restarts stay right - while the checkpoint grows with every batch;
    one that keeps less fails the output oracles."""
    state = ex
    last_ran = state.g - 1
    delivered = read_delivered(state.directory)
    need = {last_ran}
    for s, st in enumerate(state.state):
        after = delivered.get(s, -1)
        for prog in (st.committed, st.live):
            need |= set(prog.pending) | set(prog.history[-keep:]) | {g for g in prog.history if g > after}
    for s, st in enumerate(state.state):
        for view, prog in (("committed", st.committed), ("live", st.live)):
            extra = sorted(set(prog.history) - need)
            if extra:
                return (f"job {s}'s {view} history still lists batches {extra} after the run under Retention({keep}); "
                        f"only {sorted(need)} are needed (the last {keep} committed of each job, pending, undelivered, "
                        "the last that ran): the progress record grows with every commit")
    kept = sorted(g for g in batches_on(state.store) if g <= last_ran and g not in need)
    if kept:
        return (f"the checkpoint still holds batches {kept} after the run under Retention({keep}); only "
                f"{sorted(need)} are needed: storage grows with every batch")
    return _request_files_problem(state)


def _request_files_problem(ex: Any) -> str | None:
    """Request files after a run under a retention: a completed and committed request's file
    goes once a later completed request updated each of its operators (``retention``'s
    docstring: the latest request per operator stays, ``requests/current.json`` names it).
    Request ``j`` is ``job.planned[j - 1]`` for a job's planned requests; a submitted one is
    read from its file (a request whose file is gone is no operator's latest, or the retention
    lost what a restart needs: a failure of the runs' own oracles). Assumes every completed
    delay is still in ``committed.delays`` (fewer than ``Retention.delays``)."""
    for s, st in enumerate(ex.state):
        completed = sorted(st.committed.delays)
        if st.committed.earlier.count or not completed:
            continue
        latest: dict[str, int] = {}
        for j in completed:
            if j <= len(st.job.planned):
                request = st.job.planned[j - 1].request
            elif ex.store.exists(request_name(s, j)):
                request = load_request(ex.directory, s, j)
            else:
                continue
            for op in request.operators:
                latest[op] = j
        allowed = set(latest.values())
        stale = [j for j in range(1, completed[-1] + 1)
                 if j not in allowed and ex.store.exists(request_name(s, j))]
        if stale:
            return (f"job {s} still has the files of requests {stale} after the run under a retention; completed "
                    f"requests {completed}, the latest per operator {dict(sorted(latest.items()))}: every other "
                    "request file can never be loaded again (storage grows with every request)")
    return None
