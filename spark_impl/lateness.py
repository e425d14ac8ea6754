"""Bounded out-of-orderness for the live front ends with event time, O+
(:mod:`spark_impl.oplus.streaming`) and DGS (:mod:`spark_impl.dgs.streaming`): the two arguments
``allowed_lateness`` and ``late_policy``, and what happens to a late item. One module for both
front ends, so they take the same values, have the same default and say the same things.

``allowed_lateness`` (event-time units, an int >= 0) is the bounded out-of-orderness, as Flink's
``forBoundedOutOfOrderness`` and Structured Streaming's ``withWatermark(column, delay)``: an item
up to that far behind the newest one its source showed is still on time, so input whose disorder
stays within the bound gives exactly the results of the event-time-sorted input. Each front end
keeps its own watermark rule (O+: a tuple below its job's watermark of the previous micro-batch,
the watermark being the minimum over the job's sources of ``largest ts - allowed_lateness``,
docs/production/oplus.md; DGS: an event at or before its stream's watermark as the micro-batch
starts, :mod:`spark_impl.dgs.streaming_input`, docs/production/dgs.md). An item behind it is
*late*: what it belongs to may already be emitted or processed. ``late_policy`` says what
happens to it, the same on both front ends:

* ``"fail"`` (:data:`DEFAULT_LATE_POLICY`, the default of both front ends: nothing is dropped
  unless the user asked for it): the micro-batch fails before anything of it is committed, with
  an error naming the first late item (:class:`LateTupleError` on O+, :class:`LateEventError`
  on DGS: the item, its key or tag, its event time and the watermark it was behind); the query
  stops and the run's waits raise it; a restart replays the same micro-batch and fails the same
  way until the input or the policy changes;
* ``"drop"``: the late items are left out and counted (in the commit record, so exactly once
  across restarts; ``run.late()`` per job on O+ and DGS, ``status().late``, DGS also
  ``run.late_count()``); every micro-batch that drops logs ONE WARNING on the front end's
  logger (``streamproof.oplus``, ``streamproof.dgs``) with the count and the first late item
  (:func:`log_late`);
* a sink, which receives the late rows of every micro-batch that has some, under the batch id,
  *before* the batch commits (a crash in between delivers them again under the same id, so the
  sink must be idempotent by batch id, as Structured Streaming's ``foreachBatch``): a
  ``function(df, batch_id)``, an object with ``deliver(df, batch_id)`` (e.g. a ``CallbackSink``;
  a ``ParquetSink`` expects result columns, give a path instead), or a path (an ``os.PathLike``,
  or a string with a path separator or a scheme, :func:`looks_like_path`: ``"./late"``,
  ``"/data/late"``, ``"s3a://bucket/late"``; a bare word such as ``"dorp"`` is refused as a
  misspelt policy; Parquet, one ``batch=<id>`` directory per batch, replaced when delivered
  again, :class:`LateParquet`). ``df`` has the stream's own columns (O+) or the item column as received
  (DGS: the row's JSON text), plus ``late_watermark`` (long), the watermark each row was behind.
  The late items are counted as with ``"drop"`` and logged at INFO (nothing is lost).

"First" late item: the smallest in a fixed order of the batch (O+: the tuple buffer's ``(event
time, source, seq)``; DGS: ``(event time, job, stream)``), so the same input always names the same
item whatever the partitioning.
"""

from __future__ import annotations

import logging
import os
import re
from dataclasses import dataclass
from typing import Any, Callable, Protocol, Sequence

from spec.errors import InputError

__all__ = ["DEFAULT_LATE_POLICY", "LateEvent", "LateEventError", "LateParquet", "LatePolicy", "LateTuple",
           "LateTupleError", "POLICIES", "apply_late_policy", "check_allowed_lateness", "first_event",
           "late_event_frame", "late_policy", "log_late", "looks_like_path"]

POLICIES = ("drop", "fail")
"""The named policies (a sink is the third kind)."""

DEFAULT_LATE_POLICY = "fail"
"""``late_policy`` when none is given, on every front end: a late item stops the query with an
error naming it, so nothing is dropped unless the user chose ``"drop"`` or a sink."""

_NOT_PATHS = ("drop", "fail", "sink", "ignore", "error", "raise")
"""Strings that look like a misspelt policy (any case), refused rather than taken as a path."""


class Described(Protocol):
    """A late item that can name itself in one line."""

    def describe(self) -> str: ...


@dataclass(frozen=True, order=True)
class LateTuple:
    """One late O+ tuple as the error and the log name it (ordered by the tuple-buffer order)."""

    ts: int
    source: int
    seq: int
    job: int
    key: str  # the tuple's ``key`` field (its repr), or every field when it has none
    watermark: float  # the watermark it was behind (an int event time)

    def describe(self) -> str:
        """``job 0, source 1: key 'ann' at event time 3 (seq 4), behind the watermark 12``."""
        return (f"job {self.job}, source {self.source}: key {self.key} at event time {self.ts} (seq {self.seq}), "
                f"behind the watermark {self.watermark}")


def late_tuple(job: int, source: int, ts: int, seq: int, fields: dict[str, Any], watermark: float) -> LateTuple:
    """The :class:`LateTuple` of an O+ stream row (``fields``: its tuple fields)."""
    key = repr(fields["key"]) if "key" in fields else repr(dict(sorted(fields.items())))
    return LateTuple(ts, source, seq, job, key[:200], int(watermark) if abs(watermark) != float("inf") else watermark)


class LateTupleError(RuntimeError):
    """A late O+ tuple under ``late_policy="fail"`` (module docstring); ``first`` is the tuple,
    ``count`` the late tuples of the micro-batch."""

    def __init__(self, batch: int, first: LateTuple, count: int, allowed_lateness: int) -> None:
        super().__init__(f"late tuple in batch {batch} ({count} late in all; allowed_lateness {allowed_lateness}): "
                         f"{first.describe()}")
        self.batch = batch
        self.first = first
        self.count = count


@dataclass(frozen=True)
class LateEvent:
    """One late DGS event: its job, stream, event time, the row's text as received, the
    watermark it was at or before, and its event and tag (for the message)."""

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


def first_event(late: Sequence[LateEvent]) -> LateEvent:
    """The first of a micro-batch's late events: the smallest by ``(event time, job, stream)``."""
    return min(late, key=lambda e: (e.ts, e.job, e.stream))


class LateEventError(InputError):
    """A late DGS event under ``late_policy="fail"`` (module docstring); ``first`` is the event,
    ``count`` the late events of the micro-batch."""

    def __init__(self, batch: int, first: LateEvent, count: int, allowed_lateness: int) -> None:
        super().__init__(f"late event ({count} in the micro-batch; allowed_lateness {allowed_lateness}; "
                         f"late_policy 'fail'): {first.describe()}", f"batch {batch}")
        self.batch = batch
        self.first = first
        self.count = count


def late_event_frame(spark: Any, column: str, late: Sequence[LateEvent]) -> Any:
    """The DataFrame a DGS late sink receives: ``column`` (the row's text as received) and
    ``late_watermark`` (long)."""
    rows = spark.sparkContext.parallelize([(e.row, e.watermark) for e in late], 1)
    return spark.createDataFrame(rows, f"`{column}` string, late_watermark long")


@dataclass(frozen=True)
class LatePolicy:
    """A parsed ``late_policy``: ``kind`` is ``drop``, ``fail`` or ``sink`` (then ``deliver``)."""

    kind: str
    deliver: Callable[[Any, int], None] | None = None


@dataclass(frozen=True)
class LateParquet:
    """The late sink of a path: a batch's late rows as Parquet at ``<path>/batch=<id>``,
    overwritten when delivered again (idempotent by batch id)."""

    path: str

    def deliver(self, df: Any, batch_id: int) -> None:
        """Write the batch's late rows (idempotent by batch id)."""
        df.write.mode("overwrite").parquet(f"{self.path.rstrip('/')}/batch={batch_id}")


def looks_like_path(value: str) -> bool:
    """A ``late_policy`` string is taken as a path only if it contains a path separator (``/``,
    or the platform's own) or a scheme (``s3a://...``, ``file:...``): a bare word such as
    ``"dorp"`` is far likelier a misspelt policy than a relative directory, and taking it as one
    would quietly write late rows where nobody looks (write ``"./dorp"`` to mean the directory)."""
    seps = {"/", os.sep} | ({os.altsep} if os.altsep else set())
    return any(sep in value for sep in seps) or re.match(r"[A-Za-z][A-Za-z0-9+.-]*:", value) is not None


def late_policy(value: Any) -> LatePolicy:
    """Parse a ``late_policy`` argument (module docstring); InputError on anything else."""
    if isinstance(value, str):
        if value in POLICIES:
            return LatePolicy(value)
        if not value or value.lower() in _NOT_PATHS or not looks_like_path(value):
            raise InputError(f"unknown late policy {value!r} (expected 'drop', 'fail', a sink, or a path with a "
                             f"separator or scheme such as './late', '/data/late', 's3a://bucket/late')",
                             "late_policy")
        return LatePolicy("sink", LateParquet(value).deliver)
    if isinstance(value, os.PathLike):
        return LatePolicy("sink", LateParquet(os.fspath(value)).deliver)
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


def apply_late_policy(policy: LatePolicy, batch: int, failure: Exception, rows: Callable[[], Any]) -> None:
    """Before anything of micro-batch ``batch`` (which has late items) commits: raise ``failure``
    under ``"fail"``; hand ``rows()`` (the late rows' DataFrame) to a sink under ``batch``;
    nothing under ``"drop"`` (the caller counts them either way)."""
    if policy.kind == "fail":
        raise failure
    if policy.deliver is not None:
        policy.deliver(rows(), batch)


def log_late(logger: logging.Logger, batch: int, count: int, first: Described, policy: LatePolicy,
             allowed_lateness: int, noun: str = "tuple") -> None:
    """The one log line of a micro-batch with ``count`` late items (``noun``: ``tuple`` on O+,
    ``event`` on DGS): WARNING when they were dropped, INFO when a sink received them."""
    fields = {"fields": {"kind": "late", "batch": batch, "late": count}}
    if policy.kind == "drop":
        logger.warning("batch %d: dropped %d late %s(s) (allowed_lateness %d); first: %s", batch, count, noun,
                       allowed_lateness, first.describe(), extra=fields)
    else:
        logger.info("batch %d: %d late %s(s) sent to the late sink (allowed_lateness %d); first: %s", batch, count,
                    noun, allowed_lateness, first.describe(), extra=fields)
