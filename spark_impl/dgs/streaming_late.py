"""What a live DGS query does with a late event (``late_policy``; docs/production/dgs.md).

An event is *late* when its timestamp is at or before its stream's watermark as the micro-batch
starts: more than ``allowed_lateness`` behind the largest timestamp its stream showed in an
earlier micro-batch (:mod:`spark_impl.dgs.streaming_input`). It cannot be taken any more (the
events after it may be processed already), so the policy decides:

* ``"drop"``: it is left out and counted (per job and stream, in the commit:
  :meth:`~spark_impl.dgs.streaming.DgsStreamingRun.late_count`, also after a restart); every
  micro-batch that drops logs one WARNING on the logger ``streamproof.dgs`` with the count and
  the first late event;
* ``"fail"`` (the default): the micro-batch fails before anything of it is committed with a
  :class:`LateEventError` naming the first late event (job, stream, event, its tag - the key
  DGS routes by -, event time and the watermark it was behind); the query stops, the run's
  waits raise it; a restart replays the same micro-batch and fails the same way until the
  policy changes: a larger ``allowed_lateness`` does not help it (its watermarks are committed
  and never move back), only items still to come;
* a sink, which receives the late rows of every micro-batch that has some, *before* the batch
  commits, under the batch id (a crash in between delivers them again under the same id: the
  sink must be idempotent by batch id, as ``foreachBatch``): ``function(df, batch_id)``, an
  object with ``deliver(df, batch_id)`` (``CallbackSink``, ``ParquetSink`` of
  :mod:`spark_impl.reconfig.sinks`) or a path (a string: Parquet, ``<path>/batch=<id>``
  replaced when delivered again). ``df`` has the stream's column (the row's JSON text, as
  received) and ``late_watermark`` (long). The events are counted as with ``"drop"`` and
  logged at INFO (nothing is lost).

"First": the smallest by ``(event time, job, stream)``. A heartbeat at or before its stream's
watermark says nothing new: it is ignored under every policy (neither counted nor delivered).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from spec.errors import InputError

LOG = logging.getLogger("streamproof.dgs")
"""The live DGS front end's logger."""

NAMED = ("drop", "fail")
"""The named policies; a sink is the third kind."""


@dataclass(frozen=True)
class LateEvent:
    """One late event: its job, stream, event time, the row's text as received, the watermark
    it was at or before, and its event and tag (for the message)."""

    ts: int
    job: int
    stream: str
    row: str
    watermark: int
    event: Any
    tag: Any

    def describe(self) -> str:
        """``job 0, stream 's0': event ('i', 'bob') (tag ('i', 'bob')) at event time 3, behind
        the stream's watermark 7``."""
        return (f"job {self.job}, stream {self.stream!r}: event {_short(self.event)} (tag {_short(self.tag)}) at event "
                f"time {self.ts}, behind the stream's watermark {self.watermark}")


def _short(value: Any) -> str:
    text = repr(value).replace("\n", "\\n")
    return text if len(text) <= 120 else text[:120] + "..."


class LateEventError(InputError):
    """A late event under ``late_policy="fail"`` (module docstring); ``first`` is the event,
    ``count`` the late events of the micro-batch."""

    def __init__(self, batch: int, first: LateEvent, count: int, allowed_lateness: int) -> None:
        super().__init__(f"late event ({count} in the micro-batch; allowed_lateness {allowed_lateness}; "
                         f"late_policy 'fail'): {first.describe()}", f"batch {batch}")
        self.batch = batch
        self.first = first
        self.count = count


@dataclass(frozen=True)
class LatePolicy:
    """A checked ``late_policy``: ``kind`` ``drop``, ``fail`` or ``sink`` (then ``deliver``)."""

    kind: str
    deliver: Callable[[Any, int], None] | None = None


@dataclass(frozen=True)
class LateParquetPath:
    """The late sink of a path: the batch's late rows as Parquet at ``<path>/batch=<id>``,
    overwritten when delivered again (idempotent by batch id)."""

    path: str

    def deliver(self, df: Any, batch_id: int) -> None:
        """Write ``df`` under ``batch_id``."""
        df.write.mode("overwrite").parquet(f"{self.path.rstrip('/')}/batch={batch_id}")


def parse_late_policy(value: Any) -> LatePolicy:
    """Check a ``late_policy`` argument (module docstring); InputError on anything else."""
    if isinstance(value, str):
        if value in NAMED:
            return LatePolicy(value)
        if not value or value.lower() in ("drop", "fail", "sink", "ignore", "error", "raise"):
            raise InputError(f"unknown policy {value!r} (expected 'drop', 'fail', a sink or a path)", "late_policy")
        return LatePolicy("sink", LateParquetPath(value).deliver)
    method = getattr(value, "deliver", None)
    if callable(method):
        return LatePolicy("sink", method)
    if callable(value):
        return LatePolicy("sink", value)
    raise InputError(f"expected 'drop', 'fail', a function(df, batch_id), an object with deliver(df, batch_id) or "
                     f"a path, got {type(value).__name__}", "late_policy")


def check_allowed_lateness(value: Any) -> int:
    """``allowed_lateness`` as an int >= 0 (event-time units); InputError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"must be an integer >= 0 (event-time units), got {value!r}", "allowed_lateness")
    return value


def apply_policy(spark: Any, policy: LatePolicy, column: str, late: Sequence[LateEvent], batch: int,
                 allowed_lateness: int) -> None:
    """Before the micro-batch commits: raise :class:`LateEventError` (``fail``) or deliver the
    late rows (a sink); nothing for ``drop`` or no late event."""
    if not late:
        return
    first = min(late, key=lambda e: (e.ts, e.job, e.stream))
    if policy.kind == "fail":
        raise LateEventError(batch, first, len(late), allowed_lateness)
    if policy.deliver is not None:
        rows = spark.sparkContext.parallelize([(e.row, e.watermark) for e in late], 1)
        policy.deliver(spark.createDataFrame(rows, f"`{column}` string, late_watermark long"), batch)


def log_late(policy: LatePolicy, late: Sequence[LateEvent], batch: int, allowed_lateness: int) -> None:
    """After the micro-batch commits: its one log line about late events (WARNING when they
    were dropped, INFO when a sink received them); nothing when it had none."""
    if not late:
        return
    first = min(late, key=lambda e: (e.ts, e.job, e.stream)).describe()
    if policy.kind == "drop":
        LOG.warning("batch %d: dropped %d late event(s) (allowed_lateness %d); first: %s", batch, len(late),
                    allowed_lateness, first, extra={"fields": {"kind": "late", "batch": batch, "late": len(late)}})
    else:
        LOG.info("batch %d: %d late event(s) sent to the late sink (allowed_lateness %d); first: %s", batch,
                 len(late), allowed_lateness, first, extra={"fields": {"kind": "late", "batch": batch, "late": len(late)}})
