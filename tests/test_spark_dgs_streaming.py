"""DGS synchronization plans on a live stream (spark_impl.dgs.streaming): string keys routed by
spark_impl.keys.route, a file source that grows while the query runs, driver kills at every
point of the commit protocol and restarts, exactly-once results in Parquet (the recipe of
docs/spark.md, "DGS on a live stream")."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from typing import Any

import pytest

from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams, value_to_json
from spec.errors import InputError

from spark_impl.dgs.streaming_input import Mailbox, group_rows, receive
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.dgs.topology import topology
from spark_impl.keys import route

HERE = os.path.dirname(__file__)
COUNTER = os.path.join(HERE, "dgs_live_programs.py:WordCounter")
FAILING = os.path.join(HERE, "dgs_live_programs.py:FailingCounter")
STREAMS = ("s0", "s1")


def _streams(seed: int, n: int) -> dict[str, list[Any]]:
    """Two streams of counter events with strictly increasing timestamps, each ended by a
    heartbeat after every event (a valid input instance, Def. 3.3)."""
    rng = random.Random(seed)
    keys = ("alice", "bob", "carol", "dave")
    streams: dict[str, list[Any]] = {s: [] for s in STREAMS}
    for ts in range(1, n + 1):
        stream = STREAMS[ts % 2]
        streams[stream].append(StreamEvent(ts, (rng.choice("iir"), rng.choice(keys))))
    for stream in STREAMS:
        streams[stream].append(Heartbeat(n + 1))
    return streams


def _rows(streams: dict[str, list[Any]]) -> list[str]:
    """The items as JSON rows, in timestamp order."""
    items = sorted(((item.ts, s, item) for s, items in streams.items() for item in items), key=lambda x: x[:2])
    return [json.dumps({"stream": s, "ts": ts, **({"event": value_to_json(item.payload)}
                                                   if isinstance(item, StreamEvent) else {"heartbeat": True})})
            for ts, s, item in items]


def _land(directory: str, number: int, rows: list[str]) -> None:
    """File ``number`` of the live stream: written aside, renamed in (the source never sees
    half a file), modification time ``number`` seconds after a fixed start (Spark's file
    source takes files oldest first; equal times have no order)."""
    path = os.path.join(directory, f"f{number:04d}.json")
    with open(os.path.join(directory, f".f{number:04d}.tmp"), "w", encoding="utf-8") as handle:
        handle.write("".join(r + "\n" for r in rows))
    os.utime(handle.name, (1_700_000_000 + number, 1_700_000_000 + number))
    os.replace(handle.name, path)


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

def _start(spark: Any, root: str, target: str, plan: Any, **options: Any) -> Any:
    from spark_impl.dgs.streaming import LiveJob, start_dgs_query
    from spark_impl.reconfig.sinks import ParquetSink

    stream = spark.readStream.option("maxFilesPerTrigger", 1).text(os.path.join(root, "in"))
    return start_dgs_query(spark, [LiveJob(target, plan)], stream, checkpoint_dir=os.path.join(root, "ckpt"),
                           sink=ParquetSink(os.path.join(root, "out")), **options)


def test_live_string_keys_driver_kills_and_restarts_exactly_once_parquet(spark: Any, tmp_path: Any) -> None:
    root = str(tmp_path)
    os.makedirs(os.path.join(root, "in"))
    program = load_program(COUNTER)
    plan = keyed_plan(program, STREAMS, 2)
    streams = _streams(7, 30)
    rows = _rows(streams)
    chunks = [rows[i: i + 8] for i in range(0, len(rows), 8)]
    _land(os.path.join(root, "in"), 0, chunks[0])
    _land(os.path.join(root, "in"), 1, chunks[1])
    # a kill at each point of the commit protocol, each followed by a restart on the same checkpoint
    committed = []
    for point in ("before-commit", "after-deliver", "after-commit"):
        run = _start(spark, root, COUNTER, plan, crash_at=point)
        with pytest.raises(Exception, match="simulated driver kill"):
            run.process_all()
        run.query.stop()
        committed.append(run.committed().batch)
        assert run.error is None
    assert committed == [-1, 0, 1]  # nothing committed, then batch 0 (delivered twice), then 1
    run = _start(spark, root, COUNTER, plan)
    for number in range(2, len(chunks)):  # the stream keeps growing while the query runs
        _land(os.path.join(root, "in"), number, chunks[number])
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
    run = _start(spark, root, FAILING, keyed_plan(program, STREAMS, 2))
    _land(os.path.join(root, "in"), 0, [json.dumps({"stream": "s0", "ts": 1, "event": ["i", "eve"]}),
                                         json.dumps({"stream": "s1", "ts": 2, "heartbeat": True})])
    with pytest.raises(InputError, match=r"FailingCounter.update.*ZeroDivisionError: eve cannot be counted"):
        run.process_all()
    run.query.stop()


@pytest.mark.slow
def test_real_driver_kill_mid_stream_then_restart_is_exactly_once(spark: Any, tmp_path: Any) -> None:
    """The recipe's driver in its own process (tests/dgs_live_driver.py), killed with SIGKILL
    (JVM included) once it has committed a batch, wherever it is then; a new driver process
    finishes the stream; Parquet holds spec(sort(u)) exactly once."""
    import signal
    import subprocess
    import sys
    import time

    from spark_impl.dgs.streaming_store import Store

    root = str(tmp_path)
    os.makedirs(os.path.join(root, "in"))
    program = load_program(COUNTER)
    streams = _streams(11, 60)
    rows = _rows(streams)
    chunks = [rows[i: i + 6] for i in range(0, len(rows), 6)]
    for number, chunk in enumerate(chunks):
        _land(os.path.join(root, "in"), number, chunk)
    command = [sys.executable, os.path.join(HERE, "dgs_live_driver.py"), root, COUNTER, str(len(chunks))]
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
