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
    from spec.fries.dataflow import dataflow
    from spark_impl.reconfig import ListSource, UserOperator, user_job

    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])

    def count(state: Any, key: Any, value: Any) -> Any:
        if negative_raises and value < 0:
            raise ValueError(f"negative amount {value} for {key}")
        return (state or 0) + 1, [(key, value)]

    return flow, user_job(flow, {"M": UserOperator(flow.kind("M"), count)}, ListSource(()), parallelism={"M": 2})


def test_fries_query_logs_meters_reports_status_reads_and_never_hangs_on_death(spark: Any, tmp_path: Any,
                                                                               caplog: Any) -> None:
    from spark_impl.reconfig import Request, user_update
    from spark_impl.reconfig.sinks import ParquetSink
    from spark_impl.reconfig.streaming import start_query

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
        status = run.status()
        assert status.versions == {"M": "R1"}
        assert [(r.request, r.state) for r in status.requests] == [("R1", "applied"), ("refusal 1", "rejected")]
        assert status.committed_batch >= 1 and status.state_bytes and status.late == 0

        # metrics: the run's registry, and the same over HTTP on 127.0.0.1
        assert sample(run, "streamproof_input_rows_total") == 4.0
        assert sample(run, "streamproof_output_rows_total") == 4.0
        assert sample(run, "streamproof_operator_version", operator="M", version="R1") == 1.0
        assert sample(run, "streamproof_requests", state="rejected") == 1.0
        assert sample(run, "streamproof_warnings_total", kind="refused") == 1.0
        text = scrape(port)
        assert 'streamproof_requests{state="applied"} 1.0' in text and "streamproof_batch_duration_seconds_count" in text

        # the results without Spark equal what Spark reads
        fast = sorted((r["txn"], r["key"], r["value"]) for r in read_result_rows(results))
        slow = sorted((r["txn"], r["key"], r["value"]) for r in spark.read.parquet(results).collect())
        assert fast == slow and len(fast) == 4 and ("S:3", "cy", 10) in fast

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


def test_fries_with_block_and_sigterm_stop_at_a_batch_boundary(spark: Any, tmp_path: Any) -> None:
    from spark_impl.reconfig.streaming import start_query

    _, job = fries_job(negative_raises=False)
    files = Landing(str(tmp_path / "in"))
    stream = spark.readStream.schema("user string, amount long").option("maxFilesPerTrigger", 1).json(files.folder)
    ckpt = str(tmp_path / "ckpt")
    with start_query(spark, job, stream, scheduler="fries", checkpoint_dir=ckpt, key_column="user",
                     value_column="amount") as run:
        files.land([{"user": "ann", "amount": 1}])
        run.wait_for(lambda: 0 in run.batch_ms, WAIT_S, "batch 0")
    assert not run.query.isActive and run.failure() is None
    assert read_status(ckpt).stream_batch == 0  # the batch running when the block ended committed
    with start_query(spark, job, stream, scheduler="fries", checkpoint_dir=ckpt, key_column="user",
                     value_column="amount") as run:
        files.land([{"user": "bob", "amount": 2}])
        run.wait_for(lambda: 1 in run.batch_ms, WAIT_S, "batch 1")
        assert_signal_stops(run)
        with pytest.raises(QueryStopped):
            run.in_progress()
    status = read_status(ckpt)
    assert status.stream_batch == 1 and run.executor.state[0].committed.offset == 2
    assert POLL_S <= 0.1
