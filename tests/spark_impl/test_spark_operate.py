"""docs/production/operating.md's promises on a live query of each front end (Fries, O+, DGS),
one Structured Streaming query per front end carrying many checks:

* "one log line per micro-batch" (INFO, logger ``streamproof.<front end>``, values in
  ``record.fields``) and a WARNING for refused requests, drops and replays;
* the metrics of the run's own registry, served on 127.0.0.1 and stopped with the run;
* ``status()`` / ``run_status()`` and ``read_status(checkpoint)``: committed batch, versions,
  request states (pending, applied, rejected, lost), late counts;
* ``read_result_rows`` (pyarrow, no Spark) reads what Spark reads;
* "no wait outlives a dead query": once a user function raised mid-stream, ``wait_for``,
  ``await_termination`` and ``in_progress`` raise ``QueryFailed`` naming the user's exception,
  within the bound; ``with start_...(...) as run:`` and SIGTERM through
  ``install_signal_handlers`` stop at a batch boundary, and the waits then end.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import time
import urllib.error
import urllib.request
from typing import Any

import pytest

from spark_impl.lifecycle import POLL_S, QueryFailed, QueryStopped, install_signal_handlers
from spark_impl.readers import read_result_rows
from spark_impl.status import read_status
from support.paths import TESTS
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.reconfig import ListSource, UserOperator, user_job, Request, user_update
from spark_impl.reconfig.sinks import ParquetSink
from spark_impl.reconfig.streaming import start_query
from spec.dgs.loader import load_program
from spec.errors import InputError
from spec.fries.dataflow import dataflow

pytestmark = pytest.mark.spark
WAIT_S = 300.0
DEAD_WITHIN_S = 30.0


class Landing:
    """Input files of one stream: written aside and renamed in, modification times 1 s apart
    in landing order (the file source takes them oldest first)."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self.count = 0
        self.t0 = int(time.time()) - 10_000
        os.makedirs(folder, exist_ok=True)

    def land(self, lines: list[Any]) -> None:
        tmp = os.path.join(os.path.dirname(self.folder), f".land-{os.path.basename(self.folder)}-{self.count}")
        with open(tmp, "w", encoding="utf-8") as handle:
            handle.writelines((line if isinstance(line, str) else json.dumps(line)) + "\n" for line in lines)
        os.utime(tmp, (self.t0 + self.count, self.t0 + self.count))
        os.replace(tmp, os.path.join(self.folder, f"part-{self.count:04d}.json"))
        self.count += 1


def batch_lines(caplog: Any, logger: str) -> dict[int, dict[str, Any]]:
    """The INFO batch lines of ``logger``: batch id -> fields."""
    return {r.fields["batch"]: r.fields for r in caplog.records
            if r.name == logger and r.levelno == logging.INFO and "rows_in" in getattr(r, "fields", {})}


def warnings_of(caplog: Any, logger: str, kind: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger and r.levelno == logging.WARNING
            and getattr(r, "fields", {}).get("kind") == kind]


def scrape(port: int) -> str:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as answer:
        text: str = answer.read().decode()
        return text


def sample(run: Any, name: str, **labels: str) -> float | None:
    value: float | None = run.observer.registry.get_sample_value(name, labels)
    return value


def assert_dies_with(run: Any, message: str) -> float:
    """Every wait raises QueryFailed naming ``message`` once the query died; returns how long
    the first wait took."""
    started = time.monotonic()
    with pytest.raises(QueryFailed, match=message) as failed:
        run.wait_for(lambda: False, timeout=WAIT_S, what="the query's death")
    took = time.monotonic() - started
    assert "\n" not in str(failed.value) and message in failed.value.error
    with pytest.raises(QueryFailed, match=message):
        run.await_termination(5.0)
    assert run.failure() is not None and message in str(run.failure())
    return took


def assert_signal_stops(run: Any) -> None:
    """SIGTERM to this process stops ``run`` at a batch boundary; the waits end with it."""
    installed = install_signal_handlers(run)
    try:
        os.kill(os.getpid(), signal.SIGTERM)
        assert run.await_termination(WAIT_S), "SIGTERM did not stop the query"
    finally:
        installed.restore()
    assert run.stopped_by == signal.SIGTERM and run.failure() is None
    with pytest.raises(QueryStopped, match="SIGTERM"):
        run.wait_for(lambda: False, timeout=5.0)


# --- Fries ---------------------------------------------------------------------------------


def fries_job(negative_raises: bool) -> Any:
    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])

    def count(state: Any, key: Any, value: Any) -> Any:
        if negative_raises and value < 0:
            raise ValueError(f"negative amount {value} for {key}")
        return (state or 0) + 1, [(key, value)]

    return flow, user_job(flow, {"M": UserOperator(flow.kind("M"), count)}, ListSource(()), parallelism={"M": 2})


def test_fries_query_logs_meters_reports_status_reads_and_never_hangs_on_death(spark: Any, tmp_path: Any,
                                                                               caplog: Any) -> None:
    caplog.set_level(logging.INFO, logger="streamproof")
    flow, job = fries_job(negative_raises=True)
    files = Landing(str(tmp_path / "in"))
    ckpt, results = str(tmp_path / "ckpt"), str(tmp_path / "results")
    stream = spark.readStream.schema("user string, amount long").option("maxFilesPerTrigger", 1).json(files.folder)
    run = start_query(spark, job, stream, scheduler="fries", checkpoint_dir=ckpt, key_column="user",
                      value_column="amount", sink=ParquetSink(results, key_type="string", value_type="long"))
    try:
        port = run.observer.start_metrics_server(0)
        files.land([{"user": "ann", "amount": 1}, {"user": "bob", "amount": 2}, {"user": "ann", "amount": 3}])
        run.wait_for(lambda: 0 in run.batch_ms, WAIT_S, "batch 0")
        line = batch_lines(caplog, "streamproof.fries")[0]
        assert (line["rows_in"], line["rows_out"], line["late"], line["backlog"]) == (3, 3, 0, 0)
        assert run.status().versions == {"M": "R0"}

        # a refused request: WARNING, status "rejected", metric; then one accepted and applied
        assert run.submit(Request({"X": user_update(flow, "M", lambda s, k, v: (s, []), lambda s: s)})) is not None
        assert len(warnings_of(caplog, "streamproof.fries", "refused")) == 1

        def double(state: Any, key: Any, value: Any) -> Any:
            if value < 0:
                raise ValueError(f"negative amount {value} for {key}")
            return (state or 0) + 1, [(key, 2 * value)]

        assert run.submit(Request({"M": user_update(flow, "M", double, lambda s: s)})) is None
        assert run.status().count("pending") == 1
        files.land([{"user": "cy", "amount": 5}])
        run.wait_for(lambda: not run.in_progress() and 1 in run.batch_ms, WAIT_S, "request R1 applied")
        # cy's tuple and R1 ran in the same micro-batch: under the Fries scheduler either order is
        # serializable (cy doubled or not); a tuple landed after R1 is applied runs the new version
        files.land([{"user": "dan", "amount": 7}])
        run.wait_for(lambda: 2 in run.batch_ms, WAIT_S, "batch 2")
        status = run.status()
        assert status.versions == {"M": "R1"}
        assert [(r.request, r.state) for r in status.requests] == [("R1", "applied"), ("refusal 1", "rejected")]
        assert status.committed_batch >= 1 and status.state_bytes and status.late == 0

        # metrics: the run's registry, and the same over HTTP on 127.0.0.1
        assert sample(run, "streamproof_input_rows_total") == 5.0
        assert sample(run, "streamproof_output_rows_total") == 5.0
        assert sample(run, "streamproof_operator_version", operator="M", version="R1") == 1.0
        assert sample(run, "streamproof_requests", state="rejected") == 1.0
        assert sample(run, "streamproof_warnings_total", kind="refused") == 1.0
        text = scrape(port)
        assert 'streamproof_requests{state="applied"} 1.0' in text and "streamproof_batch_duration_seconds_count" in text

        # the results without Spark equal what Spark reads
        fast = sorted((r["txn"], r["key"], r["value"]) for r in read_result_rows(results))
        slow = sorted((r["txn"], r["key"], r["value"]) for r in spark.read.parquet(results).collect())
        assert fast == slow and len(fast) == 5 and ("S:4", "dan", 14) in fast
        assert {("S:3", "cy", 5), ("S:3", "cy", 10)} & set(fast)

        # a request accepted, then the query dies (the user function raises mid-stream): every
        # wait raises at once with the user's error; the request is "lost" in the checkpoint
        assert run.submit(Request({"M": user_update(flow, "M", double, lambda s: s)})) is None
        files.land([{"user": "ann", "amount": -5}])
        took = assert_dies_with(run, "ValueError: negative amount -5 for ann")
        assert took < DEAD_WITHIN_S
        with pytest.raises(QueryFailed):
            run.in_progress()
    finally:
        run.stop()
    with pytest.raises(urllib.error.URLError):
        scrape(port)
    after = read_status(ckpt)  # from the checkpoint alone, as right after a restart
    assert after.versions == {"M": "R1"} and after.committed_batch == status.committed_batch
    assert [(r.request, r.state) for r in after.requests] == [("R1", "applied"), ("refusal 1", "rejected"),
                                                              ("R2", "lost")]


def test_fries_with_block_and_sigterm_stop_at_a_batch_boundary(spark: Any, tmp_path: Any, caplog: Any) -> None:
    caplog.set_level(logging.INFO, logger="streamproof")
    flow, job = fries_job(negative_raises=False)
    files = Landing(str(tmp_path / "in"))
    stream = spark.readStream.schema("user string, amount long").option("maxFilesPerTrigger", 1).json(files.folder)
    ckpt = str(tmp_path / "ckpt")

    driver = os.getpid()

    def broken(state: Any) -> Any:  # passes submit()'s check on the driver, raises on a worker
        if os.getpid() != driver:
            raise KeyError("no such field")
        return state

    with start_query(spark, job, stream, scheduler="fries", checkpoint_dir=ckpt, key_column="user",
                     value_column="amount") as run:
        files.land([{"user": "ann", "amount": 1}])
        run.wait_for(lambda: 0 in run.batch_ms, WAIT_S, "batch 0")
        # accepted, made, its state transformation raises on a worker: rolled back and rejected
        assert run.submit(Request({"M": user_update(flow, "M", lambda s, k, v: (s, []), broken)})) is None
        files.land([{"user": "ann", "amount": 2}])
        run.wait_for(lambda: 1 in run.batch_ms, WAIT_S, "batch 1")
        assert [m.split(":")[0] for m in warnings_of(caplog, "streamproof.fries", "refused")] == \
               ["request rejected"]
        assert [(r.request, r.state) for r in run.status().requests] == [("R1", "rejected")]
        assert run.status().versions == {"M": "R0"}
    assert not run.query.isActive and run.failure() is None
    assert read_status(ckpt).stream_batch == 1  # the batch running when the block ended committed
    with start_query(spark, job, stream, scheduler="fries", checkpoint_dir=ckpt, key_column="user",
                     value_column="amount") as run:
        files.land([{"user": "bob", "amount": 2}])
        run.wait_for(lambda: 2 in run.batch_ms, WAIT_S, "batch 2")
        assert_signal_stops(run)
        with pytest.raises(QueryStopped):
            run.in_progress()
    status = read_status(ckpt)
    assert status.stream_batch == 2 and run.executor.state[0].committed.offset == 3
    assert POLL_S <= 0.1


# --- O+ ------------------------------------------------------------------------------------


def test_oplus_query_logs_late_drops_meters_reports_status_reads_and_never_hangs_on_death(
        spark: Any, tmp_path: Any, caplog: Any) -> None:
    caplog.set_level(logging.INFO, logger="streamproof")
    files = Landing(str(tmp_path / "in"))
    ckpt, results = str(tmp_path / "ckpt"), str(tmp_path / "results")
    stream = (spark.readStream.schema("ts long, key string, value long, watermark long, end boolean")
              .option("maxFilesPerTrigger", 1).json(files.folder))
    run = start_oplus_query(spark, stream, [oplus_job("sliding-sum", 5, 10, WT="multi", parallelism=2)],
                            checkpoint_dir=ckpt, sink=ParquetSink(results, key_type="string", value_type="long"),
                            late_policy="drop")
    try:
        files.land([{"ts": t, "key": k, "value": t} for t, k in ((1, "ann"), (2, "bob"), (4, "ann"))])
        run.wait_for(lambda: 0 in run.batch_ms, WAIT_S, "batch 0")
        assert batch_lines(caplog, "streamproof.oplus")[0]["rows_in"] == 3
        with pytest.raises(InputError):
            run.rescale(0)
        assert len(warnings_of(caplog, "streamproof.oplus", "refused")) == 1
        assert run.rescale(4) == 1
        assert [(r.request, r.state) for r in run.run_status().requests] == [("R1", "pending"),
                                                                             ("refusal 1", "rejected")]
        files.land([{"ts": t, "key": "cy", "value": t} for t in (21, 22, 30)])
        run.wait_for(lambda: 1 in run.batch_ms, WAIT_S, "batch 1")
        files.land([{"ts": 3, "key": "ann", "value": 100}, {"ts": 31, "key": "ann", "value": 1}])  # ts 3: late
        run.wait_for(lambda: 2 in run.batch_ms, WAIT_S, "batch 2")
        lines = batch_lines(caplog, "streamproof.oplus")
        assert [lines[b]["late"] for b in (0, 1, 2)] == [0, 0, 1]
        late_lines = warnings_of(caplog, "streamproof.oplus", "late")
        assert len(late_lines) == 1 and late_lines[0].startswith("batch 2: dropped 1 late tuple(s)"), late_lines
        status = run.run_status()
        assert status.versions == {"job 0": "R1:p4"} and status.late == 1 and status.committed_batch == 2
        assert [(r.request, r.state) for r in status.requests] == [("R1", "applied"), ("refusal 1", "rejected")]
        assert sample(run, "streamproof_late_tuples") == 1.0
        assert sample(run, "streamproof_warnings_total", kind="late") == 1.0
        assert sample(run, "streamproof_operator_version", operator="job 0", version="R1:p4") == 1.0
        fast = sorted((r["batch"], r["ts"], r["key"], r["value"]) for r in read_result_rows(results))
        slow = sorted((r["batch"], r["ts"], r["key"], r["value"]) for r in spark.read.parquet(results).collect())
        assert fast == slow and fast and sum(lines[b]["rows_out"] for b in (0, 1, 2)) == len(fast)
        assert sample(run, "streamproof_output_rows_total") == len(fast)

        files.land([{"key": "ann", "value": 1}])  # no ts, watermark or end: bad input stops the query
        took = assert_dies_with(run, "has no ts, watermark or end")
        assert took < DEAD_WITHIN_S
    finally:
        run.stop()
    after = read_status(ckpt)
    assert (after.versions, after.late, after.committed_batch) == ({"job 0": "R1:p4"}, 1, 2)
    assert [(r.request, r.state) for r in after.requests] == [("R1", "applied")]
    other = Landing(str(tmp_path / "in2"))
    stream = (spark.readStream.schema("ts long, key string, value long, watermark long, end boolean")
              .option("maxFilesPerTrigger", 1).json(other.folder))
    with start_oplus_query(spark, stream, [oplus_job("sliding-sum", 5, 10, WT="multi", parallelism=2)],
                           checkpoint_dir=str(tmp_path / "ckpt2"), sink=ParquetSink(str(tmp_path / "r2"))) as again:
        other.land([{"ts": 40, "key": "ann", "value": 1}])
        again.wait_for(lambda: 0 in again.batch_ms, WAIT_S, "batch 0")
        other.land([{"end": True}, {"end": True}])  # operating.md: "rows in" is every row, markers included
        again.wait_for(lambda: 1 in again.batch_ms, WAIT_S, "batch 1")
        assert batch_lines(caplog, "streamproof.oplus")[1]["rows_in"] == 2
        assert_signal_stops(again)
    assert read_status(str(tmp_path / "ckpt2")).stream_batch == 1


# --- DGS -----------------------------------------------------------------------------------


def test_dgs_query_logs_meters_reports_status_reads_and_never_hangs_on_death(spark: Any, tmp_path: Any,
                                                                             caplog: Any) -> None:
    caplog.set_level(logging.INFO, logger="streamproof")
    target = os.path.join(str(TESTS), "support", "dgs_live_programs.py:FailingCounter")
    program = load_program(target)
    files = Landing(str(tmp_path / "in"))
    ckpt, results = str(tmp_path / "ckpt"), str(tmp_path / "results")
    stream = spark.readStream.option("maxFilesPerTrigger", 1).text(files.folder)
    run = start_dgs_query(spark, [LiveJob(target, keyed_plan(program, ["s0", "s1"], leaves=2))], stream,
                          checkpoint_dir=ckpt, sink=ParquetSink(results))
    try:
        before = run.status().versions["job 0"]
        files.land([{"stream": "s0", "ts": 1, "event": ["i", "alice"]}, {"stream": "s1", "ts": 2, "event": ["r", "alice"]},
                    {"stream": "s0", "ts": 3, "event": ["i", "bob"]}])  # bob waits for s1's heartbeat
        run.wait_for(lambda: 0 in run.batch_ms, WAIT_S, "batch 0")
        line = batch_lines(caplog, "streamproof.dgs")[0]
        assert (line["rows_in"], line["rows_out"], line["backlog"]) == (3, 1, 1)
        with pytest.raises(InputError):
            run.replan({"not": "a plan"})
        assert len(warnings_of(caplog, "streamproof.dgs", "refused")) == 1
        run.replan(keyed_plan(program, ["s0", "s1"], leaves=3))
        assert [(r.request, r.state) for r in run.status().requests][-2:] == [("job 0", "pending"),
                                                                              ("refusal 1", "rejected")]
        files.land([{"stream": "s1", "ts": 4, "heartbeat": True}, {"stream": "s0", "ts": 5, "event": ["r", "bob"]},
                    {"stream": "s1", "ts": 6, "heartbeat": True}])
        run.wait_for(lambda: 1 in run.batch_ms, WAIT_S, "batch 1")
        status = run.status()
        assert status.versions["job 0"] != before and status.committed_batch == 1 and status.late == 0
        assert [(r.request, r.state) for r in status.requests] == [("job 0", "applied"), ("refusal 1", "rejected")]
        assert batch_lines(caplog, "streamproof.dgs")[1]["backlog"] == 0
        assert sample(run, "streamproof_input_rows_total") == 6.0
        assert sample(run, "streamproof_output_rows_total") == 2.0
        fast = sorted((r["batch"], r["value"]) for r in read_result_rows(results))
        slow = sorted((r["batch"], r["value"]) for r in spark.read.parquet(results).collect())
        assert fast == slow == [(0, '["alice", 1]'), (1, '["bob", 1]')]

        files.land([{"stream": "s0", "ts": 7, "event": ["i", "eve"]}, {"stream": "s1", "ts": 8, "heartbeat": True}])
        took = assert_dies_with(run, "ZeroDivisionError: eve cannot be counted")
        assert took < DEAD_WITHIN_S
    finally:
        run.stop()
    after = read_status(ckpt)  # a re-plan is durable once applied: the version survives
    assert (after.versions, after.committed_batch, after.requests) == (status.versions, 1, ())
    other = Landing(str(tmp_path / "in2"))
    stream = spark.readStream.option("maxFilesPerTrigger", 1).text(other.folder)
    with start_dgs_query(spark, [LiveJob(target, keyed_plan(program, ["s0", "s1"], leaves=2))], stream,
                         checkpoint_dir=str(tmp_path / "ckpt2")) as again:
        other.land([{"stream": "s0", "ts": 1, "event": ["i", "alice"]}])
        again.wait_for(lambda: 0 in again.batch_ms, WAIT_S, "batch 0")
        other.land([{"stream": "s0", "ts": 2, "heartbeat": True}, {"stream": "s1", "ts": 2, "heartbeat": True}])
        again.wait_for(lambda: 1 in again.batch_ms, WAIT_S, "batch 1")
        assert batch_lines(caplog, "streamproof.dgs")[1]["rows_in"] == 2  # as O+ counts its marker rows
        assert_signal_stops(again)
    assert read_status(str(tmp_path / "ckpt2")).stream_batch == 1
