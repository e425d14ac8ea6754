"""DGS synchronization plans on a live stream (spark_impl.dgs.streaming): string keys routed by
spark_impl.keys.route, a file source that grows while the query runs, driver kills at every
point of the commit protocol and restarts, exactly-once results in Parquet (the recipe of
docs/spark.md, "DGS on a live stream")."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections import Counter
from typing import Any

import pytest

from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import StreamEvent, sort_streams, value_to_json
from spec.errors import InputError

from spark_impl.dgs.streaming_input import Mailbox, group_rows, receive
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.dgs.topology import topology
from spark_impl.keys import route
from support.dgs_live_stream import COUNTER, STREAMS, counter_streams, json_rows, land_file, start_query
from support.paths import TESTS
from spark_impl.dgs.streaming_store import Store

HERE = str(TESTS)
FAILING = os.path.join(HERE, "support", "dgs_live_programs.py:FailingCounter")


# --- the mailbox across micro-batches and the keyed plan (no Spark) ---------------------------

def test_receive_waits_for_heartbeats_and_refuses_out_of_order_items() -> None:
    program = load_program(COUNTER)
    topo = topology(program, keyed_plan(program, STREAMS, 2))
    box = Mailbox()
    first = group_rows([json.dumps({"stream": "s0", "ts": 2, "event": ["r", "bob"]})], 1, 0)[0]
    assert receive(program, topo, box, first, "b0") == []  # s1 may still send an earlier ("i", "bob")
    later = group_rows([json.dumps({"stream": "s1", "ts": 3, "heartbeat": True})], 1, 1)[0]
    released = receive(program, topo, box, later, "b1")
    assert [(e.key, e.payload) for e in released] == [((2, "s0"), ("r", "bob"))]
    assert box.buffered == []
    stale = group_rows([json.dumps({"stream": "s1", "ts": 3, "event": ["i", "bob"]})], 1, 2)[0]
    with pytest.raises(InputError, match="timestamp 3 is not after"):
        receive(program, topo, box, stale, "b2")
    assert box.timers["s1"] == (3, "s1")  # unchanged by the refused batch
    with pytest.raises(InputError, match="job 1 does not exist"):
        group_rows([json.dumps({"job": 1, "stream": "s0", "ts": 9, "heartbeat": True})], 1, 3)
    with pytest.raises(InputError, match="exactly one of"):
        group_rows([json.dumps({"stream": "s0", "ts": 9})], 1, 4)


def test_keyed_plan_puts_each_key_on_the_leaf_route_picks() -> None:
    program = load_program(COUNTER)
    plan = keyed_plan(program, STREAMS, 3)
    topo = topology(program, plan)  # P-valid (raises otherwise)
    for key in ("alice", "bob", "carol", "dave", "eve"):
        workers = {topo.owner[((kind, key), s)] for kind in ("i", "r") for s in STREAMS}
        assert workers == {topo.leaves[route(key, 3)]}


# --- live queries -----------------------------------------------------------------------------


def test_live_string_keys_driver_kills_and_restarts_exactly_once_parquet(spark: Any, tmp_path: Any) -> None:
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "in"))
    program = load_program(COUNTER)
    plan = keyed_plan(program, STREAMS, 2)
    streams = counter_streams(7, 30)
    rows = json_rows(streams)
    chunks = [rows[i: i + 8] for i in range(0, len(rows), 8)]
    land_file(os.path.join(root, "in"), 0, chunks[0])
    land_file(os.path.join(root, "in"), 1, chunks[1])
    # a kill at each point of the commit protocol, each followed by a restart on the same checkpoint
    committed = []
    for point in ("before-commit", "after-deliver", "after-commit"):
        run = start_query(spark, root, COUNTER, plan, crash_at=point)
        with pytest.raises(Exception, match="simulated driver kill"):
            run.process_all()
        run.query.stop()
        committed.append(run.committed().batch)
        assert run.error is None
    assert committed == [-1, 0, 1]  # nothing committed, then batch 0 (delivered twice), then 1
    run = start_query(spark, root, COUNTER, plan)
    for number in range(2, len(chunks)):  # the stream keeps growing while the query runs
        land_file(os.path.join(root, "in"), number, chunks[number])
        run.process_all()
    assert run.replayed == [1]  # committed before the last kill, skipped (not computed twice)
    final = run.final_states()
    run.stop()
    table = spark.read.parquet(os.path.join(root, "out")).collect()
    got = Counter(json.dumps(json.loads(r["value"])) for r in table)
    expected_state, expected = spec_run(program, sort_streams(streams))
    assert got == Counter(json.dumps(value_to_json(x)) for x in expected)
    assert sum(got.values()) == sum(1 for s in streams.values() for i in s
                                    if isinstance(i, StreamEvent) and i.payload[0] == "r")
    assert program.states_equal(program.initial, final[0], expected_state)
    assert sorted({r["batch"] for r in table}) == sorted({r["batch"] for r in table if r["job"] == 0})
    # bounded storage: one states directory (the committed one), no records of delivered batches
    dgs = os.path.join(root, "ckpt", "dgs")
    assert len(os.listdir(os.path.join(dgs, "states"))) == 1
    assert os.listdir(os.path.join(dgs, "records")) == []


def test_live_user_error_is_reported_as_the_programs(spark: Any, tmp_path: Any) -> None:
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "in"))
    program = load_program(FAILING)
    run = start_query(spark, root, FAILING, keyed_plan(program, STREAMS, 2))
    land_file(os.path.join(root, "in"), 0, [json.dumps({"stream": "s0", "ts": 1, "event": ["i", "eve"]}),
                                         json.dumps({"stream": "s1", "ts": 2, "heartbeat": True})])
    with pytest.raises(InputError, match=r"FailingCounter.update.*ZeroDivisionError: eve cannot be counted"):
        run.process_all()
    run.query.stop()


@pytest.mark.slow
def test_real_driver_kill_mid_stream_then_restart_is_exactly_once(spark: Any, tmp_path: Any) -> None:
    """The recipe's driver in its own process (tests/support/dgs_live_driver.py), killed with SIGKILL
    (JVM included) once it has committed a batch, wherever it is then; a new driver process
    finishes the stream; Parquet holds spec(sort(u)) exactly once."""
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "in"))
    program = load_program(COUNTER)
    streams = counter_streams(11, 60)
    rows = json_rows(streams)
    chunks = [rows[i: i + 6] for i in range(0, len(rows), 6)]
    for number, chunk in enumerate(chunks):
        land_file(os.path.join(root, "in"), number, chunk)
    command = [sys.executable, os.path.join(HERE, "support", "dgs_live_driver.py"), root, COUNTER, str(len(chunks))]
    first = subprocess.Popen(command, start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    store = Store(os.path.join(root, "ckpt", "dgs"))

    def committed() -> int:
        commit = store.read()
        return -2 if commit is None else commit.batch

    try:
        deadline = time.monotonic() + 600
        while time.monotonic() < deadline and committed() < 2:
            time.sleep(0.05)
        killed_at = committed()
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.wait()
    assert 2 <= killed_at < len(chunks) - 1, "the kill came too late to test a restart"
    second = subprocess.run(command, start_new_session=True, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stderr[-2000:]
    table = spark.read.parquet(os.path.join(root, "out")).collect()
    got = Counter(json.dumps(json.loads(r["value"])) for r in table)
    _, expected = spec_run(program, sort_streams(streams))
    assert got == Counter(json.dumps(value_to_json(x)) for x in expected)
