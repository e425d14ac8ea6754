"""The Fries suite's storage oracle: after a batch of runs, the executor's record logs are pruned.

``spark_impl.records.RecordLog`` keeps a checkpoint's commit records (``progress/``) and its
control messages (``control/``) as write-once records ``<seq:020d>.rec`` and deletes all but
the newest :data:`KEEP` after every append (:func:`spark_impl.reconfig.progress.write_progress`,
:func:`spark_impl.reconfig.control.write_control`). Every oracle of a run reads only the newest
record, so a pruning bug (an off-by-one in the incremental prune that leaks one record per
commit, a ``keep`` never passed) loses nothing visible: the run is right, only its storage
grows without bound - what a month-long stream cannot afford (docs/spark.md, "Bounded
storage"). Set C of the independent bugs (session 5, bug 18) survived the whole default suite
that way.

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
