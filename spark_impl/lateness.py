"""Bounded out-of-orderness for the live front ends with event time: ``allowed_lateness`` and
what happens to a tuple behind the watermark (``late_policy``).

A live front end's watermark is ``(largest event time seen) - allowed_lateness`` (per source;
a job's watermark is the minimum over its sources), as Flink's bounded out-of-orderness
and Structured Streaming's ``withWatermark(column, delay)``: a tuple up to ``allowed_lateness``
event-time units older than the newest one seen is still on time, so input whose disorder
(how far a tuple can come after a newer one) stays within the bound gives exactly the results
of the event-time-sorted input. A tuple behind the watermark of the previous micro-batch is
*late*: the windows it belongs to may already be emitted. The policy says what happens to it:

* ``"drop"``: dropped and counted; every micro-batch that drops logs one WARNING (the
  front end's logger, e.g. ``streamproof.oplus``) with the count and the first late tuple;
  the running count is in the run handle's status;
* ``"fail"``: the micro-batch fails before anything of it is run or committed, with a
  :class:`LateTupleError` naming the first late tuple (its key, event time and the watermark
  it was behind); the query stops, and a restart replays the same batch and fails the same way
  until the input or the policy changes;
* a sink, which receives the late rows (the stream's own columns, plus ``late_watermark``,
  the watermark each one was behind) of every micro-batch that has some, under the batch id,
  *before* the batch commits (a crash in between delivers them again under the same id, so the
  sink must be idempotent by batch id, as Structured Streaming's ``foreachBatch``): a
  ``function(df, batch_id)``, an object with ``deliver(df, batch_id)`` (e.g. a
  ``CallbackSink``; a ``ParquetSink`` expects result columns, give a path instead), or a path (a string: a Parquet directory, one
  ``batch=<id>`` partition per batch, replaced when delivered again). The late tuples are
  counted as with ``"drop"`` (no WARNING: nothing is lost).

"First" late tuple: the smallest in the tuple-buffer order ``(event time, source, seq)`` of
the batch, so the same input always names the same tuple whatever the partitioning.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Any, Callable

from spec.errors import InputError

__all__ = ["LateParquet", "LatePolicy", "LateTuple", "LateTupleError", "check_allowed_lateness", "late_policy",
           "log_late"]

POLICIES = ("drop", "fail")
"""The named policies (a sink is the third kind)."""


@dataclass(frozen=True, order=True)
class LateTuple:
    """One late tuple as the error and the log name it (ordered by the tuple-buffer order)."""

    ts: int
    source: int
    seq: int
    job: int
    key: str  # the tuple's ``key`` field (its repr), or every field when it has none
    watermark: float  # the watermark it was behind (an int event time)

    def describe(self) -> str:
        """``job 0, source 1: key 'ann' at event time 3, behind the watermark 12``."""
        return (f"job {self.job}, source {self.source}: key {self.key} at event time {self.ts} (seq {self.seq}), "
                f"behind the watermark {self.watermark}")


def late_tuple(job: int, source: int, ts: int, seq: int, fields: dict[str, Any], watermark: float) -> LateTuple:
    """The :class:`LateTuple` of a stream row (``fields``: its tuple fields)."""
    key = repr(fields["key"]) if "key" in fields else repr(dict(sorted(fields.items())))
    return LateTuple(ts, source, seq, job, key[:200], int(watermark) if abs(watermark) != float("inf") else watermark)


class LateTupleError(RuntimeError):
    """A tuple behind the watermark under ``late_policy="fail"`` (module docstring)."""

    def __init__(self, batch: int, first: LateTuple, count: int, allowed_lateness: int) -> None:
        super().__init__(f"late tuple in batch {batch} ({count} late in all; allowed_lateness {allowed_lateness}): "
                         f"{first.describe()}")
        self.batch = batch
        self.first = first
        self.count = count


@dataclass(frozen=True)
class LateParquet:
    """The late-tuple sink of a path: ``<path>/batch=<id>`` as Parquet, replaced on a repeat."""

    path: str

    def deliver(self, df: Any, batch_id: int) -> None:
        """Write the batch's late rows (idempotent by batch id)."""
        df.write.mode("overwrite").parquet(f"{self.path.rstrip('/')}/batch={batch_id}")


@dataclass(frozen=True)
class LatePolicy:
    """A parsed ``late_policy``: ``kind`` is ``drop``, ``fail`` or ``sink`` (then ``deliver``)."""

    kind: str
    deliver: Callable[[Any, int], None] | None = None


def late_policy(value: Any) -> LatePolicy:
    """Parse a ``late_policy`` argument (module docstring); InputError on anything else."""
    if isinstance(value, str):
        if value in POLICIES:
            return LatePolicy(value)
        if not value or value.lower() in ("drop", "fail", "sink", "ignore", "error"):
            raise InputError(f"unknown late policy {value!r} (expected 'drop', 'fail', a sink or a path)",
                             "late_policy")
        return LatePolicy("sink", LateParquet(value).deliver)
    method = getattr(value, "deliver", None)
    if callable(method):
        return LatePolicy("sink", method)
    if callable(value):
        return LatePolicy("sink", value)
    raise InputError(f"expected 'drop', 'fail', a function(df, batch_id), an object with deliver(df, batch_id) or a "
                     f"path, got {type(value).__name__}", "late_policy")


def check_allowed_lateness(value: Any) -> int:
    """``allowed_lateness`` as an int >= 0 (event-time units); InputError otherwise."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InputError(f"must be an integer >= 0 (event-time units), got {value!r}", "allowed_lateness")
    return value


def log_late(logger: logging.Logger, batch: int, count: int, first: LateTuple, policy: LatePolicy,
             allowed_lateness: int) -> None:
    """The one log line of a micro-batch with late tuples: WARNING when they are dropped,
    INFO when a sink received them."""
    if policy.kind == "drop":
        logger.warning("batch %d: dropped %d late tuple(s) (allowed_lateness %d); first: %s", batch, count,
                       allowed_lateness, first.describe(),
                       extra={"fields": {"kind": "late", "batch": batch, "late": count}})
    else:
        logger.info("batch %d: %d late tuple(s) sent to the late sink (allowed_lateness %d); first: %s", batch,
                    count, allowed_lateness, first.describe(),
                    extra={"fields": {"kind": "late", "batch": batch, "late": count}})
