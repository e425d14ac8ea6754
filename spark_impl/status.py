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
* ``late``: tuples the front end found late (O+: below the watermark), dropped or sent to a late
  sink alike (0 where a front end counts none), ``state_bytes``: bytes of the committed state files;
* ``backlog``: DGS: the events held in the committed mailboxes, waiting for a heartbeat, the
  watermark or a dependency (the same value as the last batch's log line and the
  ``streamproof_backlog`` metric); None on Fries and O+.

The run handles' ``status()`` (Fries, DGS) and ``run_status()`` (all three) add what only the
running driver knows: requests accepted but not yet committed (``pending``), refusals of this
process.
"""

from __future__ import annotations

from spec.errors import InputError

from spark_impl.dgs.status import dgs_status
from spark_impl.oplus.status import oplus_status
from spark_impl.reconfig.status import fries_status
from spark_impl.run_status import (FRONT_ENDS, REQUEST_STATES, RequestStatus, Status, checkpoint_root, late_total,
                                   location_exists, tree_bytes)
from spark_impl.store import display, join

__all__ = ["FRONT_ENDS", "REQUEST_STATES", "RequestStatus", "Status", "dgs_status", "fries_status",
           "late_total", "oplus_status", "read_status", "tree_bytes"]


def read_status(checkpoint_dir: str, query_checkpoint: str | None = None) -> Status:
    """The status of whichever front end wrote ``checkpoint_dir`` (Fries: ``executor/``, O+:
    ``oplus/``, DGS: ``dgs/``); InputError when it holds none of them."""
    root = checkpoint_root(checkpoint_dir)
    if location_exists(join(root, "executor")):
        return fries_status(root, query_checkpoint=query_checkpoint)
    if location_exists(join(root, "oplus")):
        return oplus_status(root, query_checkpoint=query_checkpoint)
    if location_exists(join(root, "dgs")):
        return dgs_status(root, query_checkpoint=query_checkpoint)
    raise InputError(f"no live query checkpoint at {display(root)} (expected executor/, oplus/ or dgs/ in it)",
                     "checkpoint_dir")
