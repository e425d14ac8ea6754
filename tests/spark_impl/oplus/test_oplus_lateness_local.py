"""The live O+ front end's per-batch logic on the pure-Python Spark stand-in
(``conformance.standin.spark``), no JVM: the promises of ``spark_impl.lateness`` and
``spark_impl.oplus.user_operator`` (docs/production/oplus.md, "Choosing allowed_lateness" and
"Your own operators"):

* "Input whose disorder stays within ``allowed_lateness`` has no late tuple, whatever order the
  source hands it over in", and the results equal the reference fed the event-time-sorted
  input - a seeded property over random bounded-disorder interleavings, random cuts into
  micro-batches, a rescale mid-stream and a driver crash (at a random crash point, the batch
  replayed), for catalogue sliding-sum (WT multi and single) and
  user operators (a per-key max over tumbling windows, a sliding distinct count, an
  order-sensitive first value per window);
* the watermark in every commit record is ``(largest event time seen) - allowed_lateness``;
* a late tuple under ``"drop"`` is counted and logged (WARNING on ``streamproof.oplus``),
  under ``"fail"`` raises ``LateTupleError`` naming it and commits nothing, and a user operator
  whose tuples arrive out of order still sees them sorted.
"""

from __future__ import annotations

import json
import logging
import math
import os
import random
import sys
from collections import Counter
from typing import Any, Iterator, Sequence

import pytest

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.oplus_sorted_reference import plain, sum_reference, user_reference  # noqa: E402 - a helper module beside

from conformance.standin.spark import LocalSpark
from spark_impl.lateness import LateTupleError
from spark_impl.oplus.streaming import CRASH_POINTS, SimulatedCrash, start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.user_operator import load_operator
from spark_impl.reconfig.sinks import CallbackSink
from pyspark.sql import Row
from reference.oplus.executors import run_sequential
from spark_impl.oplus.streaming_log import Commit
from spec.errors import InputError
from spec.oplus.model import StreamTuple

COLUMNS = ("job", "source", "seq", "ts", "watermark", "end", "key", "value")
OPERATORS = os.path.join(str(TESTS), "support", "oplus_user_operators.py")
USER = ("KEY_MAX", "DISTINCT", "FIRST")
KEYS = ("ann", "bob", "cy")


class _Batch:
    """A micro-batch DataFrame of the stand-in: ``columns`` and ``rdd`` over ``Row`` s."""

    columns = list(COLUMNS)

    def __init__(self, spark: LocalSpark, items: Sequence[dict[str, Any]]) -> None:
        row = Row(*COLUMNS)
        self.rdd = spark.sparkContext.parallelize([row(*(i.get(c) for c in COLUMNS)) for i in items], 2)


class _Query:
    def stop(self) -> None:
        pass


class _Writer:
    def __init__(self) -> None:
        self.handler: Any = None

    def foreachBatch(self, handler: Any) -> "_Writer":  # noqa: N802 - Spark's name
        self.handler = handler
        return self

    def option(self, name: str, value: Any) -> "_Writer":
        return self

    def start(self) -> _Query:
        return _Query()


class _Stream:
    isStreaming = True  # noqa: N815 - Spark's name
    columns = list(COLUMNS)

    def __init__(self) -> None:
        self.writeStream = _Writer()


class Live:
    """A live query on the stand-in: ``feed(items)`` runs one micro-batch; ``rows`` are the
    delivered ``(job, ts, key, value)`` (values read back from the sink's JSON text)."""

    def __init__(self, directory: str, jobs: list[Any], **options: Any) -> None:
        self.spark = LocalSpark()
        self.delivered: dict[int, list[tuple[Any, ...]]] = {}
        sink = CallbackSink(lambda df, b: self.delivered.__setitem__(b, df.collect()))
        self.stream = _Stream()
        self.run = start_oplus_query(self.spark, self.stream, jobs, checkpoint_dir=directory, sink=sink, **options)
        self.batch = 0
        self.user = [job.user is not None for job in jobs]

    def feed(self, items: Sequence[dict[str, Any]], crash: str | None = None) -> None:
        """One micro-batch; with ``crash`` (a crash point) the driver "dies" there and Structured
        Streaming replays the same batch id with the same rows."""
        if crash is not None:
            self.run.crash_at(crash)
            with pytest.raises(SimulatedCrash):
                self.stream.writeStream.handler(_Batch(self.spark, items), self.batch)
        self.stream.writeStream.handler(_Batch(self.spark, items), self.batch)
        self.batch += 1

    def rows(self, job: int) -> Counter[tuple[int, Any]]:
        """``(ts, value)`` of every row delivered for ``job`` (a user job: the value parsed from
        JSON, the payload; a catalogue job: ``(key, value)``)."""
        return Counter((ts, plain(json.loads(value)) if self.user[job] else (key, json.loads(value)))
                       for rows in self.delivered.values() for j, _, _, ts, key, value in rows if j == job)








def _bounded_disorder(rng: random.Random, count: int, lateness: int) -> list[dict[str, Any]]:
    """``count`` tuples in an arrival order whose disorder is at most ``lateness``: each comes
    no more than ``lateness`` event-time units after the newest one before it (sorted by
    ``ts + jitter``, jitter in ``[0, lateness]``)."""
    tuples = []
    ts = 0
    for seq in range(count):
        ts += rng.choice((0, 0, 1, 1, 2, 3))
        tuples.append({"ts": ts, "seq": seq, "key": rng.choice(KEYS), "value": rng.randint(-5, 20)})
    jitter = {t["seq"]: rng.randint(0, lateness) for t in tuples}
    return sorted(tuples, key=lambda t: (t["ts"] + jitter[t["seq"]], rng.random()))


def _cut(rng: random.Random, items: list[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    at = 0
    while at < len(items):
        step = rng.randint(1, 9)
        yield items[at:at + step]
        at += step


JOBS = 2 + len(USER)  # sliding-sum multi, single, then the user operators


def _jobs(parallelism: int) -> list[Any]:
    return [oplus_job("sliding-sum", 5, 10, WT="multi", parallelism=parallelism),
            oplus_job("sliding-sum", 5, 10, WT="single", parallelism=parallelism),
            *[oplus_job(f"{OPERATORS}:{name}", parallelism=parallelism, fields=("key", "value")) for name in USER]]


@pytest.mark.parametrize("seed", range(12))
def test_bounded_disorder_within_allowed_lateness_equals_the_reference_on_sorted_input(tmp_path: Any,
                                                                                       seed: int) -> None:
    """docs/production/oplus.md "Choosing allowed_lateness": disorder <= allowed_lateness loses
    nothing and gives the sorted input's results (catalogue and user operators, a rescale)."""
    rng = random.Random(seed)
    lateness = rng.choice((0, 1, 3, 8))
    tuples = _bounded_disorder(rng, rng.randint(20, 60), lateness)
    live = Live(str(tmp_path), _jobs(rng.randint(1, 3)), allowed_lateness=lateness, late_policy="fail")
    newest = -math.inf
    crash_at = rng.randint(0, 4)
    for index, chunk in enumerate(_cut(rng, tuples)):
        if index == 2:
            live.run.rescale(rng.randint(1, 4), job=rng.randrange(JOBS))
        live.feed([{"job": j, **t} for t in chunk for j in range(JOBS)],
                  rng.choice(CRASH_POINTS) if index == crash_at else None)
        newest = max([newest, *(t["ts"] for t in chunk)])
        assert live.run.status().watermark == {j: newest - lateness for j in range(JOBS)}  # type: ignore[union-attr]
    live.feed([{"job": j, "end": True} for j in range(JOBS)])
    assert live.run.late() == {j: 0 for j in range(JOBS)}
    assert live.rows(0) == sum_reference("multi", tuples)
    assert live.rows(1) == sum_reference("single", tuples)
    for j, name in enumerate(USER, start=2):
        assert live.rows(j) == user_reference(load_operator(f"{OPERATORS}:{name}"), tuples), name


@pytest.mark.parametrize("seed", range(4))
def test_a_two_input_user_operator_with_disorder_per_source_equals_the_reference(tmp_path: Any, seed: int) -> None:
    """A user operator with inputs = 2 (a job of 2 sources, ``t.input`` = the source): each
    source's disorder within allowed_lateness, the sources interleaved any way; the watermark is
    the minimum over the sources; the outputs equal the reference's on the sorted sources."""
    rng = random.Random(seed)
    lateness = rng.choice((0, 2, 5))
    per_source = [_bounded_disorder(rng, rng.randint(10, 30), lateness) for _ in range(2)]
    arrivals = [dict(t, source=s) for s, items in enumerate(per_source) for t in items]
    order = sorted(range(len(arrivals)), key=lambda i: (rng.random(), i))  # interleave the sources at random,
    heads = {0: iter(per_source[0]), 1: iter(per_source[1])}                  # each keeping its own order
    merged = [dict(next(heads[arrivals[i]["source"]]), source=arrivals[i]["source"]) for i in order]
    live = Live(str(tmp_path), [oplus_job(f"{OPERATORS}:PAIRS", parallelism=2, fields=("key", "value"))],
                allowed_lateness=lateness, late_policy="fail")
    for chunk in _cut(rng, merged):
        live.feed(chunk)
    live.feed([{"source": s, "end": True} for s in (0, 1)])
    op = load_operator(f"{OPERATORS}:PAIRS")
    sources = [[StreamTuple(t["ts"], s, t["seq"], (t["key"], t["value"]), s)
                for t in sorted(items, key=lambda t: (t["ts"], t["seq"]))] for s, items in enumerate(per_source)]
    assert live.run.late() == {0: 0}
    assert live.rows(0) == Counter((o.ts, plain(o.payload)) for o in run_sequential(op, sources).outputs)


def test_a_late_tuple_under_drop_is_counted_and_logged_once_per_batch(tmp_path: Any,
                                                                      caplog: pytest.LogCaptureFixture) -> None:
    """spark_impl.lateness: "drop" counts, one WARNING per batch that drops (logger
    streamproof.oplus), the count in ``late()`` / ``status().late``; the result is the
    reference of the tuples that were on time."""
    live = Live(str(tmp_path), [oplus_job(f"{OPERATORS}:FIRST", fields=("key", "value"))], late_policy="drop")
    first = [{"ts": 20, "seq": 0, "key": "ann", "value": 1}]
    late = [{"ts": 3, "seq": 1, "key": "bob", "value": 2}, {"ts": 2, "seq": 2, "key": "ann", "value": 3}]
    with caplog.at_level(logging.WARNING, logger="streamproof.oplus"):
        live.feed(first)
        live.feed(late)
        live.feed([{"ts": 21, "seq": 3, "key": "ann", "value": 4}])
        live.feed([{"end": True}])
    warnings = [r for r in caplog.records if r.name == "streamproof.oplus" and r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "batch 1: dropped 2 late tuple(s)" in warnings[0].getMessage()
    assert "key 'ann' at event time 2" in warnings[0].getMessage()
    assert live.run.late() == {0: 2} and live.run.status().late == {0: 2}  # type: ignore[union-attr]
    assert live.rows(0) == user_reference(load_operator(f"{OPERATORS}:FIRST"),
                                      first + [{"ts": 21, "seq": 3, "key": "ann", "value": 4}])


def test_a_late_tuple_under_fail_raises_naming_it_and_commits_nothing(tmp_path: Any) -> None:
    """spark_impl.lateness: "fail" raises LateTupleError naming the first late tuple (key,
    event time, watermark) before anything of the batch runs or commits."""
    live = Live(str(tmp_path), [oplus_job("sliding-sum", 5, 10)], allowed_lateness=4, late_policy="fail")
    live.feed([{"ts": 30, "key": "ann", "value": 1}])
    with pytest.raises(LateTupleError) as caught:
        live.feed([{"ts": 27, "key": "cy", "value": 1}, {"ts": 25, "seq": 9, "key": "bob", "value": 1}])
    message = str(caught.value)
    assert "key 'bob' at event time 25" in message and "behind the watermark 26" in message, message
    assert caught.value.count == 1 and live.run.batch_error is caught.value
    assert live.run.log.committed() == [0]


def test_user_operator_sees_each_key_in_event_time_order_across_batches(tmp_path: Any) -> None:
    """spark_impl.oplus.user_operator: tuples wait until the watermark passes them, so an
    order-sensitive f_U (the first value per window) gets the sorted input's answer even when
    a later batch brings an earlier tuple (within the allowed lateness)."""
    live = Live(str(tmp_path), [oplus_job(f"{OPERATORS}:FIRST", fields=("key", "value"))], allowed_lateness=5)
    tuples = [{"ts": 4, "seq": 0, "key": "ann", "value": 40}, {"ts": 1, "seq": 1, "key": "ann", "value": 10}]
    live.feed(tuples[:1])
    live.feed(tuples[1:])
    live.feed([{"end": True}])
    assert live.run.late() == {0: 0}
    assert live.rows(0) == user_reference(load_operator(f"{OPERATORS}:FIRST"), tuples) == Counter({(5, ("ann", 10)): 1,
                                                                                                (10, ("ann", 10)): 1})


def test_a_layout_1_commit_record_is_read_and_a_newer_one_refused() -> None:
    """spark_impl.oplus.streaming_log.Commit: a record without "layout" is layout 1 (lateness
    0); a newer layout is refused with a message naming it."""
    record = Commit(3, {0: 1}, {0: 1}, 1, {(0, 0): 7}, {0: 7}, lateness={0: 2})
    raw = record.to_json()
    assert raw["layout"] == 2 and Commit.from_json(raw) == record
    old = {k: v for k, v in raw.items() if k not in ("layout", "lateness")}
    assert Commit.from_json(old).lateness == {}
    with pytest.raises(InputError, match="layout 3: written by a newer streamproof"):
        Commit.from_json({**raw, "layout": 3})


def test_late_policy_and_allowed_lateness_are_validated(tmp_path: Any) -> None:
    """start_oplus_query refuses a negative or non-integer allowed_lateness and an unknown
    policy name, naming the argument."""
    for options, where in (({"allowed_lateness": -1}, "allowed_lateness"), ({"allowed_lateness": 1.5}, "allowed_lateness"),
                           ({"late_policy": "Drop"}, "late_policy"), ({"late_policy": 3}, "late_policy")):
        with pytest.raises(InputError) as caught:
            Live(str(tmp_path), [oplus_job("sliding-sum", 5, 10)], **options)
        assert where in str(caught.value), caught.value
