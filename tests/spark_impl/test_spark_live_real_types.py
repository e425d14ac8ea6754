"""Real Spark types on every live front end (docs/production/types.md, spark_impl/values.py):
a column of nested structs, arrays, maps, decimals, dates, timestamps, binary and nulls, read
from Parquet by Structured Streaming's file source, reaches the user's functions in the
documented form (structs and arrays as tuples, so they can be keys; maps as sorted pairs;
Decimal; date; UTC-aware datetime; bytes; None) on the Fries, O+ and DGS front ends, and a
restart after a crash (simulated here, a SIGKILL of a driver process in the slow tests) gives
every result exactly once. The user functions (tests/support/live_real_types_jobs.py,
tests/support/dgs_typed_program.py) raise on any value not in the documented form."""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import time
import datetime as dt
import time as clock
from collections import Counter
from pathlib import Path
from typing import Any
from decimal import Decimal

import pytest

from spark_impl.values import from_json, to_json, decode

from support.paths import TESTS
sys.path.insert(0, str(TESTS))
from support import live_real_types_jobs as jobs  # noqa: E402 - the shared jobs and the driver of the kill tests
from conformance.oplus.engines.reference import reference_rows
from hypothesis import given, settings, strategies as st
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import route_key, oplus_job
from spark_impl.readers import read_result_rows
from spark_impl.reconfig import collect_results, DirectorySource
from spark_impl.reconfig.sinks import ParquetSink
from spark_impl.reconfig.streaming import LOG_SUFFIX, start_query, BatchLogSource, InputIndex
from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams
from spec.errors import InputError

pytestmark = pytest.mark.spark
HERE = str(TESTS)
DGS_TARGET = os.path.join(HERE, "support", "dgs_typed_program.py:TypedCounter")


def _encoded(value: Any) -> str:
    """A value's persisted encoding as text: equal texts = equal values of equal types."""
    return json.dumps(to_json(value), sort_keys=True)


# --- Fries ------------------------------------------------------------------------------------

def _land_fries(root: Path, files: range) -> None:
    for f in files:
        rows = [jobs.fries_row(i) for i in range(f * jobs.PER_FILE, (f + 1) * jobs.PER_FILE)]
        jobs.land(str(root / "in"), f, rows, jobs.FRIES_SCHEMA)


def _check_fries(outputs: list[tuple[str, Any, Any]], states: dict[tuple[str, Any], Any], n: int) -> None:
    """Every source tuple's T output exactly once, and M's and T's states equal the serial run
    of tuples 0..n-1 (each once), types included."""
    counts = Counter(txn for txn, _, _ in outputs)
    assert sorted(counts) == sorted(f"S:{i}" for i in range(n)) and set(counts.values()) == {1}
    expected = jobs.fries_expected(n)
    assert {_encoded(k): _encoded(s) for k, s in states.items()} == {_encoded(k): _encoded(s)
                                                                       for k, s in expected.items()}
    keys = {k for op, k in states if op == "T"}
    assert {type(k) for k in keys} == {str, tuple}  # keys of mixed types, ordered by key_order


def test_fries_live_nested_struct_keys_reach_functions_as_tuples_and_restart_exactly_once(
        spark: Any, tmp_path: Path) -> None:
    """docs/production/types.md: a nested struct key reaches the user's function as a tuple
    (before, a value struct reached it as a list, and a list used as a key crashed the query);
    the input log keeps every type exactly (decimal, UTC timestamp, date, bytes, map as pairs,
    null); a crash before a commit and a restart give each tuple's result exactly once."""
    (tmp_path / "in").mkdir()
    _land_fries(tmp_path, range(2))

    def start() -> Any:
        stream = spark.readStream.schema(jobs.FRIES_SCHEMA).option("maxFilesPerTrigger", 1).parquet(str(tmp_path / "in"))
        return start_query(spark, jobs.fries_job(), stream, scheduler="fries", checkpoint_dir=str(tmp_path / "ckpt"))

    run = start()
    run.query.processAllAvailable()
    run.crash_before_commit(3 * jobs.PER_FILE)
    _land_fries(tmp_path, range(2, 3))
    with pytest.raises(Exception, match="simulated driver crash"):
        run.query.processAllAvailable()
    run.query.stop()
    assert run.executor.state[0].committed.offset == 2 * jobs.PER_FILE
    run = start()
    _land_fries(tmp_path, range(3, 5))
    run.query.processAllAvailable()
    run.stop()
    n = 5 * jobs.PER_FILE
    (result,) = collect_results(run.executor)
    _check_fries([(txn, k, v) for _, txn, k, v in result.outputs], dict(result.states), n)
    # the input log gives back exactly what the function saw (types included)
    assert [_encoded(run.source.get(i)[2:]) for i in range(n)] == [_encoded(jobs.fries_tuple(i)) for i in range(n)]
    assert all(name.endswith(LOG_SUFFIX) for name in os.listdir(tmp_path / "ckpt" / "input") if name.startswith("b"))


def test_fries_input_log_of_the_first_format_is_still_read_with_tuples(tmp_path: Path) -> None:
    """spark_impl/reconfig/streaming.py LOG_SUFFIX: a plain ``.jsonl`` file of the first format
    (a checkpoint written before) is read, its lists become tuples (keys and values)."""
    log = tmp_path / "input"
    log.mkdir()
    (log / "b000000000000-p00000.jsonl").write_text(json.dumps([["eu", [1, ["a"]]], [1.5, {"k": [2]}]]) + "\n")
    (log / "b000000000001-p00000.v2.jsonl").write_text(json.dumps([["eu", [1, ["a"]]], [{"d": "1.50"}, None]]) + "\n")
    InputIndex([[0, [["b000000000000-p00000.jsonl", 1]]], [1, [["b000000000001-p00000.v2.jsonl", 1]]]],
               last=1).write(str(log))
    source = BatchLogSource("S", str(log))
    assert source.get(0)[2:] == (("eu", (1, ("a",))), (1.5, (("k", (2,)),)))
    _, _, key, value = source.get(1)
    assert key == ("eu", (1, ("a",))) and _encoded(value) == _encoded((from_json({"d": "1.50"}), None))


def test_directory_source_values_are_in_the_documented_form(tmp_path: Path) -> None:
    """spark_impl.reconfig.model.DirectorySource: JSON arrays in keys and values are tuples,
    objects sorted pairs (a value can be used as a key; before, a value array was a list)."""
    (tmp_path / "a.jsonl").write_text(json.dumps([["eu", [1]], [[1, [2]], {"z": 1, "a": [3]}]]) + "\n")
    _, _, key, value = DirectorySource("S", str(tmp_path)).get(0)
    assert key == ("eu", (1,)) and value == ((1, (2,)), (("a", (3,)), ("z", 1)))
    hash(value)


def test_a_column_of_a_type_without_a_documented_form_is_refused_at_start(spark: Any, tmp_path: Path) -> None:
    """spark_impl.values.unsupported: one clear error when the query starts, naming the column."""
    (tmp_path / "in").mkdir()
    stream = spark.readStream.schema("key string, value string").json(str(tmp_path / "in"))
    stream = stream.selectExpr("key", "make_interval(1, 2, 0, 0, 0, 0, 0) as value")
    with pytest.raises(InputError, match="column 'value': the Spark type interval has no documented Python form"):
        start_query(spark, jobs.fries_job(), stream, scheduler="fries", checkpoint_dir=str(tmp_path / "ckpt"))


# --- O+ -----------------------------------------------------------------------------------------

def _oplus_files(count: int = 5, per: int = 8) -> list[list[dict[str, Any]]]:
    items = jobs.oplus_items(count * per)
    files = [[jobs.oplus_row(i) for i in items[f * per:(f + 1) * per]] for f in range(count)]
    files[-1].append(jobs.OPLUS_END)
    return files


def _check_oplus(spark: Any, table: str, items: list[dict[str, Any]]) -> None:
    """The Parquet rows equal the sequential reference on the same keys, the keys read back by
    ``read_result_rows(decode=True)`` exactly as the user's items had them (docs/production/types.md
    "Results": a map as sorted pairs, a date, a UTC datetime, types kept), Spark reads the same
    rows, and each row came from the instance its key routes to (a key not in the documented
    form routes elsewhere: a naive timestamp has another hash)."""
    case = {"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "single", "parallelism": 1,
            "inputs": [[{"ts": i["ts"], "key": _encoded(i["key"]), "value": i["value"]} for i in items]]}
    rows = read_result_rows(table, decode=True)
    got = Counter((int(r["ts"]), _encoded(r["key"]), json.dumps(int(r["value"]))) for r in rows)
    assert got == Counter(reference_rows(case, "sequential"))
    keys = {_encoded(i["key"]): i["key"] for i in items}
    assert all(r["key"] == keys[_encoded(r["key"])] for r in rows)
    assert all(r["instance"] == route_key(r["key"], 2) for r in rows)
    assert len(spark.read.parquet(table).collect()) == len(rows)


def test_oplus_live_struct_keys_with_maps_dates_and_timestamps_restart_exactly_once(
        spark: Any, tmp_path: Path) -> None:
    """docs/production/types.md on the O+ front end: a struct key holding a map, a date and a
    timestamp is a tuple (the map as sorted pairs: before, a dict, unhashable); two crashes and
    restarts give the reference's windows exactly once."""
    source, ckpt, table = (str(tmp_path / n) for n in ("in", "ckpt", "out"))
    os.makedirs(source)
    files = _oplus_files()

    def start() -> Any:
        stream = spark.readStream.schema(jobs.OPLUS_SCHEMA).option("maxFilesPerTrigger", 1).parquet(source)
        return start_oplus_query(spark, stream, [oplus_job("sliding-sum", 2, 4, parallelism=2)], checkpoint_dir=ckpt,
                                 sink=ParquetSink(table, value_type="long"))

    run = start()
    for f, rows in enumerate(files):
        jobs.land(source, f, rows, jobs.OPLUS_SCHEMA)
        if f in (1, 3):
            run.crash_at("after-round" if f == 1 else "after-commit")
            with pytest.raises(Exception, match="simulated driver crash"):
                run.query.processAllAvailable()
            run.query.stop()
            run = start()
        run.query.processAllAvailable()
    run.stop()
    _check_oplus(spark, table, jobs.oplus_items(5 * 8))


# --- DGS ----------------------------------------------------------------------------------------

def _dgs_files(per: int = 6) -> list[list[dict[str, Any]]]:
    rows = [jobs.dgs_row(i) for i in jobs.dgs_items(30)]
    return [rows[i:i + per] for i in range(0, len(rows), per)]


def _check_dgs(spark: Any, table: str) -> None:
    """The outputs read back by ``read_result_rows(decode=True)`` equal spec(sort(u)) of the
    documented-form events exactly (docs/production/types.md "Results": Decimal and datetime
    kept, types included); Spark reads as many rows."""
    streams: dict[str, list[Any]] = {}
    for item in jobs.dgs_items(30):
        streams.setdefault(item["stream"], []).append(
            Heartbeat(item["ts"]) if item.get("heartbeat") else StreamEvent(item["ts"], item["event"]))
    _, expected = spec_run(load_program(DGS_TARGET), sort_streams(streams))
    got = [r["value"] for r in read_result_rows(table, decode=True)]
    assert Counter(_encoded(v) for v in got) == Counter(_encoded(x) for x in expected) and expected
    assert len(spark.read.parquet(table).collect()) == len(got)


def test_dgs_live_struct_events_with_decimals_and_timestamps_restart_exactly_once(
        spark: Any, tmp_path: Path) -> None:
    """spark_impl/dgs/streaming_rows.py: a struct item column's event reaches the program in
    the documented form (a nested key tuple, Decimal, UTC datetime); kills at two points of the
    commit protocol and restarts give spec(sort(u)) exactly once."""
    source, ckpt, table = (str(tmp_path / n) for n in ("in", "ckpt", "out"))
    os.makedirs(source)
    plan = keyed_plan(load_program(DGS_TARGET), ["s0", "s1"], 2)

    def start(crash_at: str | None = None) -> Any:
        stream = spark.readStream.schema(jobs.DGS_SCHEMA).option("maxFilesPerTrigger", 1).parquet(source)
        return start_dgs_query(spark, [LiveJob(DGS_TARGET, plan)], stream, checkpoint_dir=ckpt, column="item",
                               sink=ParquetSink(table), crash_at=crash_at)

    files = _dgs_files()
    run = start()
    for f, rows in enumerate(files):
        jobs.land(source, f, rows, jobs.DGS_SCHEMA)
        if f in (1, 3):
            run.stop()
            run = start("before-commit" if f == 1 else "after-deliver")
            with pytest.raises(Exception, match="simulated driver kill"):
                run.process_all()
            run.query.stop()
            run = start()
        run.process_all()
    run.stop()
    _check_dgs(spark, table)


# --- a real driver process killed with SIGKILL, restarted --------------------------------------

def _driver(mode: str, root: Path, files: int) -> "subprocess.Popen[str]":
    return subprocess.Popen([sys.executable, os.path.join(HERE, "support", "live_real_types_jobs.py"), mode, str(root), str(files)],
                            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, start_new_session=True)


def _kill(proc: "subprocess.Popen[str]") -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait(60)


@pytest.mark.slow
@pytest.mark.parametrize("mode", ["fries", "oplus", "dgs"])
def test_a_driver_killed_with_sigkill_restarts_exactly_once_on_real_types(spark: Any, tmp_path: Path,
                                                                          mode: str) -> None:
    """A driver process of each front end on the nested-type Parquet stream, killed with
    SIGKILL (JVM and Python workers included) at a random moment after some commits, then a
    new driver process on the same checkpoint: every result exactly once, equal to the
    serial run / the reference."""
    source = tmp_path / "in"
    source.mkdir()
    if mode == "fries":
        files = 8
        _land_fries(tmp_path, range(files))
    else:
        chunks = _oplus_files(8, 6) if mode == "oplus" else _dgs_files(4)
        files = len(chunks)
        for f, rows in enumerate(chunks):
            jobs.land(str(source), f, rows, jobs.OPLUS_SCHEMA if mode == "oplus" else jobs.DGS_SCHEMA)
    first = _driver(mode, tmp_path, files)
    try:
        assert first.stdout is not None
        deadline = time.monotonic() + 600
        for line in first.stdout:
            committed = json.loads(line).get("committed")
            if committed not in (None, -1, 0, [], [0]) or time.monotonic() > deadline:
                break
        time.sleep(random.uniform(0.0, 1.5))
    finally:
        _kill(first)
    second = _driver(mode, tmp_path, files)
    try:
        out, _ = second.communicate(timeout=900)
    finally:
        _kill(second)
    lines = [json.loads(line) for line in out.strip().splitlines()]
    assert lines[-1] == {"done": True}, out[-2000:]
    if mode == "fries":
        (final,) = [line for line in lines if "outputs" in line]
        outputs = [tuple(o) for o in from_json(final["outputs"])]
        states = {(op, key): state for op, key, state in from_json(final["states"])}
        _check_fries(outputs, states, files * jobs.PER_FILE)
    elif mode == "oplus":
        _check_oplus(spark, str(tmp_path / "out"), jobs.oplus_items(8 * 6))
    else:
        _check_dgs(spark, str(tmp_path / "out"))


# --- decode against Spark's own conversion ---------------------------------------------------

ALL_TYPES = ("a struct<x:bigint,y:array<string>>, m map<string,decimal(12,3)>, k map<bigint,array<date>>, "
             "d date, t timestamp, n timestamp_ntz, b binary, f double, s string")


def _spark_input(row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A documented row as createDataFrame takes it (arrays as lists, maps as dicts)."""
    a, m, k, *rest = row
    return (None if a is None else (a[0], None if a[1] is None else list(a[1])),
            None if m is None else dict(m), None if k is None else {key: list(v) for key, v in k}, *rest)


def test_decode_gives_the_documented_form_of_what_spark_stores_in_any_local_zone(spark: Any) -> None:
    """spark_impl.values.decode, docs/production/types.md's table, against Spark itself: rows
    of every type (nulls at every level, timestamps around a daylight-saving change) go into a
    DataFrame and come back through PySpark's conversion, in a driver whose local zone is not
    UTC; decoded, each equals the documented value it started from (types included)."""
    utc = dt.timezone.utc
    texts = st.text(alphabet="abcé", max_size=3)
    decimals = st.decimals(min_value=-10**8, max_value=10**8, places=3, allow_nan=False, allow_infinity=False)
    dates = st.dates(dt.date(1900, 1, 1), dt.date(2100, 1, 1))
    instants = st.one_of(st.datetimes(dt.datetime(1950, 1, 1), dt.datetime(2100, 1, 1), timezones=st.just(utc)),
                         st.sampled_from([dt.datetime(2024, 11, 3, h, 30, tzinfo=utc) for h in (4, 5, 6, 7)]))
    rows = st.tuples(
        st.none() | st.tuples(st.integers(-2**63, 2**63 - 1), st.none() | st.lists(st.none() | texts, max_size=3).map(tuple)),
        st.none() | st.dictionaries(texts, st.none() | decimals, max_size=3).map(lambda d: tuple(sorted(d.items()))),
        st.none() | st.dictionaries(st.integers(-5, 5), st.lists(dates, max_size=2).map(tuple), max_size=3)
        .map(lambda d: tuple(sorted(d.items()))),
        st.none() | dates, st.none() | instants, st.none() | st.datetimes(dt.datetime(1950, 1, 1), dt.datetime(2100, 1, 1)),
        st.none() | st.binary(max_size=4), st.none() | st.floats(allow_nan=False), st.none() | texts)

    zone = os.environ.get("TZ")
    os.environ["TZ"] = "America/New_York"
    clock.tzset()
    try:
        @settings(max_examples=3, deadline=None)
        @given(st.lists(rows, min_size=1, max_size=40))
        def check(values: list[tuple[Any, ...]]) -> None:
            frame = spark.createDataFrame([_spark_input(v) for v in values], ALL_TYPES)
            got = [decode(r, frame.schema) for r in frame.collect()]
            assert [_encoded(g) for g in got] == [_encoded(v) for v in values]
            assert all(isinstance(v, Decimal) for g in got if g[1] for _, v in g[1] if v is not None)

        check()
    finally:
        if zone is None:
            del os.environ["TZ"]
        else:
            os.environ["TZ"] = zone
        clock.tzset()
