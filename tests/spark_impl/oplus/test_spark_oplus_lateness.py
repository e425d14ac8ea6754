"""Bounded out-of-orderness and user-defined operators on the live O+ front end, on Spark's
real file source (docs/production/oplus.md; spark_impl.lateness; spark_impl.oplus.user_operator).

* "Never rely on file order": two files whose tuples interleave in event time, landed with the
  *same* modification time (Spark orders files by mtime in milliseconds, ties in any order), in
  both orders: with ``allowed_lateness`` at least the disorder, every job (catalogue
  sliding-sum WT multi and single, user operators from ``file.py:NAME`` and from an ``OPlus``
  object) equals the reference fed the sorted input - with a rescale while it runs and a stop
  and restart that keeps the lateness watermark (a tuple behind it after the restart is late);
* ``late_policy="drop"`` with ``allowed_lateness=0``: one WARNING with the count per batch
  that drops, the count on the handle;
* ``late_policy="fail"``: the query stops; the error and the handle's wait name the tuple;
* a sink policy receives exactly the late tuples.
"""

from __future__ import annotations

import json
import logging
import os
import sys
import time
from collections import Counter
from typing import Any

import pytest

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support.oplus_sorted_reference import plain, sum_reference, user_reference  # noqa: E402 - a helper module beside

from spec.oplus.model import OPlus, StreamTuple, WindowSet, WindowType
from spec.oplus.windows import WindowSpec
from spark_impl.lateness import LateTupleError
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.user_operator import load_operator
from spark_impl.reconfig.sinks import CallbackSink

SCHEMA = "job int, source int, seq long, ts long, watermark long, end boolean, key string, value long"
OPERATORS = os.path.join(str(TESTS), "support", "oplus_user_operators.py")


def _span_update(ws: WindowSet, t: StreamTuple) -> tuple[tuple[Any, ...], tuple[Any, ...]]:
    low, high = ws.states[0] if ws.states[0] is not None else (t.payload[1], t.payload[1])
    return ((min(low, t.payload[1]), max(high, t.payload[1])),), ()


def _span_output(ws: WindowSet) -> tuple[Any, ...]:
    return ((ws.key, ws.states[0][1] - ws.states[0][0]),)


SPAN = OPlus(name="span", windows=WindowSpec(4, 8), inputs=1, keys=lambda t: frozenset({t.payload[0]}),
             window_type=WindowType.MULTI, update=_span_update, output=_span_output, empty=lambda: None,
             is_empty=lambda s: s is None)
"""A user operator given as an object (shipped to the workers by value): max - min per key
over sliding windows [4l, 4l + 8)."""


def _land(directory: str, name: str, rows: list[dict[str, Any]], mtime_ns: int | None = None) -> None:
    """Write ``name`` atomically into ``directory`` (its mtime forced to ``mtime_ns``)."""
    staging = os.path.join(os.path.dirname(directory), "staging")
    os.makedirs(staging, exist_ok=True)
    path = os.path.join(staging, name)
    with open(path, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    if mtime_ns is not None:
        os.utime(path, ns=(mtime_ns, mtime_ns))
    os.replace(path, os.path.join(directory, name))


def _land_pair(directory: str, names: tuple[str, str], files: tuple[list[dict[str, Any]], list[dict[str, Any]]]) -> None:
    """Two files with the same modification time (in the same millisecond: Spark may take them
    in either order)."""
    same = (time.time_ns() // 1_000_000) * 1_000_000
    for name, rows in zip(names, files):
        _land(directory, name, rows, same)


class Query:
    """A live query over a JSON file source collecting its deliveries (``CallbackSink``)."""

    def __init__(self, spark: Any, base: str, jobs: list[Any], **options: Any) -> None:
        self.spark, self.jobs, self.options = spark, jobs, options
        self.source, self.checkpoint = os.path.join(base, "in"), os.path.join(base, "ckpt")
        os.makedirs(self.source, exist_ok=True)
        self.delivered: dict[int, list[tuple[Any, ...]]] = {}
        self.run: Any = None

    def start(self) -> Any:
        stream = self.spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(self.source)
        sink = CallbackSink(lambda df, b: self.delivered.__setitem__(b, df.collect()), key_type="string",
                            value_type="string")
        self.run = start_oplus_query(self.spark, stream, self.jobs, checkpoint_dir=self.checkpoint, sink=sink,
                                     **self.options)
        return self.run

    def rows(self, job: int, user: bool) -> Counter[tuple[int, Any]]:
        return Counter((ts, plain(json.loads(value)) if user else (key, json.loads(value)))
                       for rows in self.delivered.values() for j, _, _, ts, key, value in rows if j == job)








def _interleaved(first_ts: int, count: int, seq0: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Two files of one stretch of event time, tuples alternating between them (so whichever
    file runs second brings tuples older than the newest of the first: disorder 1..3)."""
    keys = ("ann", "bob", "cy")
    a: list[dict[str, Any]] = []
    b: list[dict[str, Any]] = []
    for i in range(count):
        ts = first_ts + i + (i // 3)
        (a if i % 2 == 0 else b).append({"ts": ts, "seq": seq0 + i, "key": keys[(i * 7) % 3], "value": (i * 5) % 11})
    return a, b


JOBS = 5  # sliding-sum multi, single; KEY_MAX and DISTINCT from the file; SPAN as an object
LATENESS = 10


def _all_jobs(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"job": j, **r} for r in rows for j in range(JOBS)]


def test_same_millisecond_files_in_both_orders_equal_the_reference_with_rescale_and_restart(
        spark: Any, tmp_path: Any) -> None:
    """docs/production/oplus.md "What order each source guarantees" and "Restart": with
    allowed_lateness >= the disorder nothing is late whichever same-millisecond file runs
    first; the results equal the reference on the sorted input; a restart keeps the lateness
    watermark (exactly once: a tuple behind it is late after the restart)."""
    jobs = [oplus_job("sliding-sum", 5, 10, WT="multi", parallelism=2),
            oplus_job("sliding-sum", 5, 10, WT="single", parallelism=1),
            oplus_job(f"{OPERATORS}:KEY_MAX", parallelism=2, fields=("key", "value")),
            oplus_job(f"{OPERATORS}:DISTINCT", parallelism=1, fields=("key", "value")),
            oplus_job(SPAN, parallelism=2, fields=("key", "value"))]
    query = Query(spark, str(tmp_path), jobs, allowed_lateness=LATENESS, late_policy="drop")
    first_a, first_b = _interleaved(20, 8, 0)
    second_a, second_b = _interleaved(40, 8, 100)
    for x, y in ((first_a, first_b), (first_b, first_a), (second_a, second_b), (second_b, second_a)):
        # either order: the second file brings tuples older than the first's newest, within LATENESS
        assert 0 < max(t["ts"] for t in x) - min(t["ts"] for t in y) <= LATENESS
    run = query.start()
    # pair 1: the file named first ("a") holds the later-starting half; pair 2 the other way round
    _land_pair(query.source, ("p1-a.json", "p1-b.json"), (_all_jobs(first_b), _all_jobs(first_a)))
    run.process_all_available()
    run.rescale(3, job=2)
    run.rescale(2, job=3)
    run.stop()
    kept = run.status()
    assert kept.watermark == {j: max(t["ts"] for t in first_a + first_b) - LATENESS for j in range(JOBS)}
    assert kept.lateness == {j: LATENESS for j in range(JOBS)} and run.late() == {j: 0 for j in range(JOBS)}

    run = query.start()  # restart on the same checkpoint: the watermark is the committed one
    assert run.status().watermark == kept.watermark
    behind = int(kept.watermark[0]) - 1  # on time if the restart forgot the watermark, late if it kept it
    _land(query.source, "p1-c.json", _all_jobs([{"ts": behind, "seq": 99, "key": "ann", "value": 1000}]))
    run.process_all_available()
    assert run.late() == {j: 1 for j in range(JOBS)}
    _land_pair(query.source, ("p2-a.json", "p2-b.json"), (_all_jobs(second_a), _all_jobs(second_b)))
    _land(query.source, "p3-end.json", [{"job": j, "end": True} for j in range(JOBS)])
    run.process_all_available()
    status = run.status()
    assert status.late == {j: 1 for j in range(JOBS)} and status.rescaled == {2: 1, 3: 1}
    run.stop()
    tuples = first_a + first_b + second_a + second_b
    assert query.rows(0, False) == sum_reference("multi", tuples)
    assert query.rows(1, False) == sum_reference("single", tuples)
    assert query.rows(2, True) == user_reference(load_operator(f"{OPERATORS}:KEY_MAX"), tuples)
    assert query.rows(3, True) == user_reference(load_operator(f"{OPERATORS}:DISTINCT"), tuples)
    assert query.rows(4, True) == user_reference(SPAN, tuples)


def _late_input(query: Query) -> None:
    """Three batches: ts 20..23; two late tuples (ts 3 and 5) and one on time (ts 24); ts 25."""
    _land(query.source, "f0.json", [{"ts": t, "key": "ann", "value": 1} for t in range(20, 24)])
    query.run.process_all_available()
    _land(query.source, "f1.json", [{"ts": 5, "key": "bob", "value": 7}, {"ts": 24, "key": "ann", "value": 1},
                                    {"ts": 3, "seq": 4, "key": "cy", "value": 9}])
    query.run.process_all_available()
    _land(query.source, "f2.json", [{"ts": 25, "key": "ann", "value": 1}])
    query.run.process_all_available()


def test_drop_logs_one_warning_per_dropping_batch_with_the_count(spark: Any, tmp_path: Any,
                                                                 caplog: pytest.LogCaptureFixture) -> None:
    """spark_impl.lateness "drop": one WARNING on streamproof.oplus per batch that drops, with
    the count; the running count on the handle (late(), status().late)."""
    query = Query(spark, str(tmp_path), [oplus_job("sliding-sum", 5, 10)], allowed_lateness=0, late_policy="drop")
    query.start()
    with caplog.at_level(logging.INFO, logger="streamproof.oplus"):
        _late_input(query)
    query.run.stop()
    warnings = [r.getMessage() for r in caplog.records if r.name == "streamproof.oplus" and r.levelno == logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "batch 1: dropped 2 late tuple(s) (allowed_lateness 0); first: job 0, source 0: key 'cy' at event time 3" \
        in warnings[0] and "behind the watermark 23" in warnings[0]
    assert query.run.late() == {0: 2} and query.run.status().late == {0: 2}


def test_fail_stops_the_query_naming_the_first_late_tuple(spark: Any, tmp_path: Any) -> None:
    """spark_impl.lateness "fail": the query stops; its error and the handle's wait
    (process_all_available) name the first late tuple, its event time and the watermark."""
    query = Query(spark, str(tmp_path), [oplus_job("sliding-sum", 5, 10)], allowed_lateness=2, late_policy="fail")
    query.start()
    with pytest.raises(LateTupleError) as caught:
        _late_input(query)
    assert "key 'cy' at event time 3 (seq 4), behind the watermark 21" in str(caught.value)
    assert not query.run.query.isActive
    assert "key 'cy' at event time 3" in str(query.run.query.exception())
    with pytest.raises(LateTupleError):
        query.run.process_all_available()
    assert query.run.log.committed() == [0]
    query.run.stop()


def test_a_sink_policy_receives_exactly_the_late_tuples(spark: Any, tmp_path: Any) -> None:
    """spark_impl.lateness: a sink receives the late rows (with the watermark they were behind)
    under the batch id; they are counted; the rest runs as usual."""
    got: dict[int, list[Any]] = {}

    def late_sink(df: Any, batch_id: int) -> None:
        got[batch_id] = sorted((r["ts"], r["key"], r["value"], r["late_watermark"]) for r in df.collect())

    query = Query(spark, str(tmp_path), [oplus_job("sliding-sum", 5, 10)], allowed_lateness=1, late_policy=late_sink)
    query.start()
    _late_input(query)
    query.run.stop()
    assert got == {1: [(3, "cy", 9, 22), (5, "bob", 7, 22)]}
    assert query.run.late() == {0: 2}
