"""Any source (docs/production/sources.md): ``spark_impl.sources.from_kafka`` decodes Kafka
records into typed front-end columns and refuses what does not fit with a line naming the
record; the three live front ends (Fries ``start_query``, O+ ``start_oplus_query``, DGS
``start_dgs_query``) run on non-file sources - a Kafka-shaped stream (binary key/value,
topic, partition, offset, timestamp) built from Spark's ``rate-micro-batch`` source (default
run) or ``rate`` source (slow: batches cut by the wall clock) and decoded by ``from_kafka`` -
each to the result of the reference model fed the same tuples. (Spark's ``rate`` source
projected straight to the O+ columns is docs/production/sources.md's rate block, run by
tests/docs/test_docs_sources.py.)

No broker runs here: the Kafka-shaped stream is what Spark's Kafka source yields (same column
names and types), with per-partition offsets increasing, several partitions and two topics.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from typing import Any, Callable

import pytest

from spec.errors import InputError
from spark_impl.sources import KAFKA_COLUMNS, from_kafka, kafka_package, list_stream
from support.paths import TESTS
import pyspark
from pyspark.sql import functions as F
from reference.fries.userjob import serial_run
from reference.oplus.operators.catalogue import to_row
from reference.oplus.run import execute
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.reconfig import ListSource, UserOperator, user_job
from spark_impl.reconfig.api import collect_results
from spark_impl.reconfig.sinks import CallbackSink
from spark_impl.reconfig.streaming import start_query
from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams, value_to_json
from spec.fries.dataflow import dataflow
from spec.oplus.scenario import parse_scenario

pytestmark = pytest.mark.spark

HERE = str(TESTS)
COUNTER = os.path.join(HERE, "support", "dgs_live_programs.py:WordCounter")
USERS = ("ann", "bob", "cid", "dee")
WORDS = ("alice", "bob", "carol", "dave")  # keys the DGS program knows
PARTITIONS = 3


# --- a Kafka-shaped stream without a broker ------------------------------------------------------

def kafka_shaped(spark: Any, kind: str, key: Any, value: Any, topic: Any, rows_per_batch: int = 16) -> Any:
    """Spark's ``rate`` (``kind="rate"``, time-driven batches) or ``rate-micro-batch`` source
    (batch ``b`` holds rate values ``[b*R, (b+1)*R)``) as the columns of Spark's Kafka source:
    ``key``/``value`` binary (from the column expressions ``key``/``value`` over the rate's
    ``value`` ``n``), ``topic`` (``topic``), ``partition`` = n mod 3, ``offset`` = n div 3 (each
    partition's offsets increase), ``timestamp`` (the rate's), ``timestampType`` 0."""
    reader = spark.readStream.format(kind).option("numPartitions", 2)
    if kind == "rate-micro-batch":
        reader = reader.option("rowsPerBatch", rows_per_batch).option("startTimestamp", 0)
    else:
        reader = reader.option("rowsPerSecond", 25)
    n = F.col("value")
    return reader.load().select(
        key.cast("binary").alias("key"), value.cast("binary").alias("value"), topic.alias("topic"),
        (n % PARTITIONS).cast("int").alias("partition"), (n / PARTITIONS).cast("long").alias("offset"),
        F.col("timestamp"), F.lit(0).alias("timestampType"))


def wait_until(query: Any, done: Callable[[], bool], what: str, seconds: float = 180) -> None:
    """Poll ``done`` while the query runs; fail with the query's error if it died."""
    deadline = time.monotonic() + seconds
    while not done():
        if not query.isActive:
            raise AssertionError(f"the query stopped before {what}: {query.exception()}")
        if time.monotonic() > deadline:
            raise AssertionError(f"not {what} within {seconds} s (last progress: {query.lastProgress})")
        time.sleep(0.2)


def _collecting() -> tuple[dict[int, list[Any]], Any]:
    """A sink callback keeping each batch's rows by batch id (idempotent by batch id)."""
    delivered: dict[int, list[Any]] = {}
    return delivered, (lambda df, batch: delivered.__setitem__(batch, [r.asDict() for r in df.collect()]))


# --- from_kafka ------------------------------------------------------------------------------------

def _frame(spark: Any, records: list[tuple[Any, Any]]) -> Any:
    rows = [(None if k is None else k.encode(), None if v is None else v.encode(), "payments", i % 2, 100 + i, i * 1000)
            for i, (k, v) in enumerate(records)]

    return (spark.createDataFrame(rows, "key binary, value binary, topic string, partition int, offset long, ms long")
            .withColumn("timestamp", F.timestamp_millis("ms")).drop("ms"))


def test_from_kafka_decodes_json_values_into_typed_columns_key_and_event_time(spark: Any) -> None:
    """sources.from_kafka docstring: the value's fields with the schema's types, the key as text,
    the Kafka timestamp as milliseconds, kept columns, in that order; optional fields may be null."""
    df = _frame(spark, [("ann", '{"amount": 3, "tags": ["a", "b"], "at": {"x": 1.5}}'),
                        ("bob", '{"amount": -4, "tags": []}'),
                        ("ann", '{"amount": 7, "extra": "ignored"}')])
    out = from_kafka(df, "amount long, tags array<string>, at struct<x: double>", key="user", event_time="ts",
                     keep=("partition", "offset"), optional=("tags", "at"))
    assert out.columns == ["user", "amount", "tags", "at", "ts", "partition", "offset"]
    assert dict(out.dtypes) == {"user": "string", "amount": "bigint", "tags": "array<string>", "at": "struct<x:double>",
                                "ts": "bigint", "partition": "int", "offset": "bigint"}
    got = [r.asDict(recursive=True) for r in out.orderBy("offset").collect()]
    assert got == [
        {"user": "ann", "amount": 3, "tags": ["a", "b"], "at": {"x": 1.5}, "ts": 0, "partition": 0, "offset": 100},
        {"user": "bob", "amount": -4, "tags": [], "at": None, "ts": 1000, "partition": 1, "offset": 101},
        {"user": "ann", "amount": 7, "tags": None, "at": None, "ts": 2000, "partition": 0, "offset": 102}]
    text = from_kafka(df, None)  # the DGS front end reads JSON text itself
    assert text.columns == ["value"] and text.orderBy("value").first()["value"].startswith('{"amount": -4')


@pytest.mark.parametrize("record, column, message", [
    (("ann", "not json"), "user", r"offset 101: the value is not a JSON object of schema <struct<amount:bigint>>: not json"),
    (("ann", '{"amount": "three"}'), "amount", r"offset 101: the value is not a JSON object .*three"),
    (("ann", '{"amount": 2.5}'), "user", r"offset 101: the value is not a JSON object"),
    (("ann", None), "amount", r"topic payments, partition 1, offset 101: the value is null \(a tombstone\)"),
    (("ann", '{"other": 1}'), "user", r"offset 101: no 'amount' \(null or absent"),
    ((None, '{"amount": 1}'), "amount", r"offset 101: no 'user'"),
])
def test_from_kafka_fails_the_query_naming_the_record_instead_of_passing_nulls(spark: Any, record: tuple[Any, Any],
                                                                              column: str, message: str) -> None:
    """sources module docstring, "Nothing is dropped or nulled silently": also when the front end
    selects a single column, another than the faulty one (the check is a filter, not a column
    Spark could prune)."""
    df = _frame(spark, [("bob", '{"amount": 1}'), record])
    with pytest.raises(Exception, match=message):
        from_kafka(df, "amount long", key="user").select(column).collect()


def test_from_kafka_refuses_frames_and_names_it_cannot_use(spark: Any) -> None:
    """from_kafka docstring: InputError at once for a frame without Kafka's columns, a name used twice,
    an unknown kept or optional column."""
    plain = spark.createDataFrame([(1, "x")], "key long, value string")
    with pytest.raises(InputError, match=r"not a Kafka-shaped DataFrame: no column\(s\) \['topic', 'partition'"):
        from_kafka(plain, "a long")
    df = _frame(spark, [("ann", "{}")])
    with pytest.raises(InputError, match=r"\['user'\] used twice"):
        from_kafka(df, "user string", key="user")
    with pytest.raises(InputError, match=r"cannot keep column\(s\) \['headers'\]"):
        from_kafka(df, "a long", keep=("headers",))
    with pytest.raises(InputError, match=r"optional names \['b'\]"):
        from_kafka(df, "a long", optional=("b",))
    assert set(KAFKA_COLUMNS) <= set(df.columns)


def test_kafka_package_matches_the_installed_pyspark() -> None:
    """kafka_package docstring: the coordinate for --packages, Spark and Scala versions of the installed PySpark."""
    assert kafka_package() == f"org.apache.spark:spark-sql-kafka-0-10_2.13:{pyspark.__version__}"
    assert kafka_package("3.5.1", "2.12") == "org.apache.spark:spark-sql-kafka-0-10_2.12:3.5.1"
    with pytest.raises(InputError, match="not a Scala binary version"):
        kafka_package("4.0.0", "2")


# --- the three live front ends on Kafka-shaped and rate streams -----------------------------------

SOURCES = ["rate-micro-batch", pytest.param("rate", marks=pytest.mark.slow)]


@pytest.mark.parametrize("kind", SOURCES)
def test_fries_live_on_a_kafka_stream_equals_the_serial_reference(spark: Any, tmp_path: Any, kind: str) -> None:
    """docs/production/sources.md: start_query takes any streaming DataFrame with a key and a value
    column; on decoded Kafka records the outputs and states equal reference.fries.userjob.serial_run
    over the tuples in the input log's order, and those tuples are exactly the records sent."""
    from spark_impl.keys import route  # noqa: PLC0415 - read when called: spark_impl.keys.route is replaced at run time

    total = 40
    n = F.col("value")
    raw = kafka_shaped(spark, kind, F.element_at(F.array(*map(F.lit, USERS)), (n % 4 + 1).cast("int")),
                       F.to_json(F.struct(((n * 7) % 11).alias("amount"))), F.lit("payments"))
    rows = from_kafka(raw.where(F.col("offset") * PARTITIONS + F.col("partition") < total), "amount long", key="user")
    flow = dataflow([("S", "source"), ("A", "one-to-one"), ("B", "one-to-one")], [("S", "A"), ("A", "B")])

    def running(state: Any, key: str, value: int) -> tuple[Any, list[tuple[str, Any]]]:
        count, sum_ = state or (0, 0)
        return (count + 1, sum_ + value), [(key, [count + 1, sum_ + value])]

    def tally(state: Any, key: str, value: Any) -> tuple[Any, list[tuple[str, Any]]]:
        return (state or 0) + 1, [(key, value[1] * 100 + (state or 0))]

    operators = {"A": UserOperator(flow.kind("A"), running), "B": UserOperator(flow.kind("B"), tally)}
    job = user_job(flow, operators, ListSource(()), parallelism={"A": 2, "B": 2})
    run = start_query(spark, job, rows, scheduler="fries", checkpoint_dir=str(tmp_path / "ckpt"),
                      key_column="user", value_column="amount")
    try:
        wait_until(run.query, lambda: run.executor.state[0].committed.offset >= total, f"{total} tuples committed")
    finally:
        run.stop()
    logged = [run.source.get(i) for i in range(run.source.count())]
    assert Counter((k, v) for _, _, k, v in logged) == Counter((USERS[i % 4], i * 7 % 11) for i in range(total))
    (result,) = collect_results(run.executor)
    expected = serial_run(user_job(flow, operators, ListSource(tuple(logged)), parallelism={"A": 2, "B": 2}),
                          [t[1] for t in logged], route=route)
    assert Counter(json.dumps(list(o)) for o in result.outputs) == Counter(json.dumps(list(o)) for o in expected.outputs)
    assert {k: json.dumps(v) for k, v in result.states.items()} == {k: json.dumps(v) for k, v in expected.states.items()}


def _oplus_expected(inputs: list[list[dict[str, Any]]], WA: int, WS: int, WT: str) -> Counter[tuple[int, str, str]]:
    case = {"operator": "sliding-sum", "WA": WA, "WS": WS, "WT": WT, "parallelism": 1, "inputs": inputs}
    rows = [to_row(o) for o in execute(parse_scenario(case), "sequential").outputs]
    return Counter((int(r["ts"]), str(r["key"]), json.dumps(r["value"])) for r in rows)


@pytest.mark.parametrize("kind", SOURCES)
def test_oplus_live_on_a_kafka_stream_equals_the_sequential_reference(spark: Any, tmp_path: Any, kind: str) -> None:
    """docs/production/sources.md: two O+ jobs, one per Kafka topic (``keep=`` picks the job),
    event time a field of the JSON value, end marks as messages with optional fields null; a
    rescale while it runs. Job 1 has two O+ sources, one per group of Kafka partitions, and
    partition 1 lags 20 event-time units behind the others ("What order each source
    guarantees": map each O+ source to its own partitions, and the skew between partitions is
    no lateness). Every window result equals the sequential reference's, each once; no tuple
    is late."""
    total, lag = 48, 20  # rate values 0..47 are tuples, 48..53 end every (topic, partition)
    n = F.col("value")
    topic_b, lagging = n % 2 == 1, n % PARTITIONS == 1
    ts = (n / 2).cast("long") + F.when(topic_b & ~lagging, F.lit(lag)).otherwise(F.lit(0))
    tuple_json = F.to_json(F.struct(ts.alias("ts"), ((n * 5) % 9).alias("amount")))
    raw = kafka_shaped(spark, kind, F.when(n < total, F.element_at(F.array(*map(F.lit, USERS)), (n % 3 + 1).cast("int"))),
                       F.when(n < total, tuple_json).otherwise(F.lit('{"end": true}')),
                       F.when(topic_b, F.lit("sums-b")).otherwise(F.lit("sums-a")))
    decoded = from_kafka(raw.where(F.col("offset") * PARTITIONS + F.col("partition") < total + 6),
                         "ts long, amount long, end boolean", key="user", keep=("topic", "partition"),
                         optional=("user", "ts", "amount", "end"))
    job = (F.col("topic") == "sums-b").cast("int")
    stream = (decoded.withColumn("job", job).withColumn("source", ((job == 1) & (F.col("partition") == 1)).cast("int"))
              .drop("topic", "partition").withColumnRenamed("user", "key").withColumnRenamed("amount", "value"))
    delivered, callback = _collecting()
    jobs = [oplus_job("sliding-sum", 3, 6, WT="multi", parallelism=2),
            oplus_job("sliding-sum", 4, 4, WT="single", parallelism=3, sources=2)]
    run = start_oplus_query(spark, stream, jobs, checkpoint_dir=str(tmp_path / "ckpt"),
                            sink=CallbackSink(callback, value_type="long"))
    run.rescale(3, job=0)
    try:
        wait_until(run.query, lambda: (s := run.status()) is not None and all(w == float("inf") for w in s.watermark.values()),
                   "every job ended")
    finally:
        run.stop()

    def item(i: int) -> dict[str, Any]:
        return {"ts": i // 2 + (lag if i % 2 == 1 and i % PARTITIONS != 1 else 0), "key": USERS[i % 3], "value": i * 5 % 9}

    expected = {0: _oplus_expected([[item(i) for i in range(0, total, 2)]], 3, 6, "multi"),
                1: _oplus_expected([[item(i) for i in range(1, total, 2) if i % PARTITIONS != 1],
                                    [item(i) for i in range(1, total, 2) if i % PARTITIONS == 1]], 4, 4, "single")}
    for j in (0, 1):
        got = Counter((int(r["ts"]), r["key"], json.dumps(int(r["value"]))) for rows in delivered.values()
                      for r in rows if r["job"] == j)
        assert got == expected[j], f"job {j}"
    status = run.status()
    assert status is not None and status.late == {0: 0, 1: 0} and status.rescaled == {0: 1}


@pytest.mark.parametrize("kind", SOURCES)
def test_dgs_live_on_a_kafka_stream_equals_the_sequential_program(spark: Any, tmp_path: Any, kind: str) -> None:
    """docs/production/sources.md: Kafka values that are DGS items (JSON text, ``from_kafka(raw, None)``)
    on a two-leaf plan; the outputs equal spec(sort(u)), each once, and the final state the sequential one."""
    total = 40  # rate values 0..39 are events, 40 and 41 heartbeats of s0 and s1
    n = F.col("value")
    stream_of = F.concat(F.lit("s"), (n % 2).cast("string"))
    kind_of = F.when(n % 5 == 0, F.lit("r")).otherwise(F.lit("i"))
    key_of = F.element_at(F.array(*map(F.lit, WORDS)), ((n * 7) % 4 + 1).cast("int"))
    event = F.to_json(F.struct(stream_of.alias("stream"), (n + 1).alias("ts"), F.array(kind_of, key_of).alias("event")))
    beat = F.to_json(F.struct(stream_of.alias("stream"), (n + 1).alias("ts"), F.lit(True).alias("heartbeat")))
    raw = kafka_shaped(spark, kind, F.lit(None).cast("string"), F.when(n < total, event).otherwise(beat), F.lit("counts"))
    items = from_kafka(raw.where(F.col("offset") * PARTITIONS + F.col("partition") < total + 2), None)
    program = load_program(COUNTER)
    delivered, callback = _collecting()
    run = start_dgs_query(spark, [LiveJob(COUNTER, keyed_plan(program, ["s0", "s1"], leaves=2))], items,
                          checkpoint_dir=str(tmp_path / "ckpt"), sink=CallbackSink(callback))

    def drained() -> bool:
        mailbox = run.committed().mailboxes[0] if run.committed().mailboxes else None
        return (mailbox is not None and not mailbox.buffered
                and all(mailbox.timers.get(s, (0,))[0] >= total + 1 for s in ("s0", "s1")))

    try:
        wait_until(run.query, drained, "both heartbeats committed")
        final = run.final_states()
    finally:
        run.stop()
    keys = [WORDS[i * 7 % 4] for i in range(total)]
    streams: dict[str, list[Any]] = {"s0": [], "s1": []}
    for i in range(total + 2):
        item = StreamEvent(i + 1, ("r" if i % 5 == 0 else "i", keys[i])) if i < total else Heartbeat(i + 1)
        streams[f"s{i % 2}"].append(item)
    expected_state, expected = spec_run(program, sort_streams(streams))
    got = Counter(json.dumps(json.loads(r["value"])) for rows in delivered.values() for r in rows)
    assert got == Counter(json.dumps(value_to_json(x)) for x in expected)
    assert sum(got.values()) == total // 5
    assert program.states_equal(program.initial, final[0], expected_state)


def test_a_bad_record_stops_a_live_front_end_with_the_line_naming_it(spark: Any, tmp_path: Any) -> None:
    """sources module docstring: in a running query (the Fries front end on a scripted Kafka-shaped
    stream), a record that does not fit stops the query with the record's line; the batch before it
    is committed, nothing of the bad record's batch is."""
    records = list_stream(spark, "key string, value string, topic string, partition int, offset long", [
        [["ann", '{"amount": 1}', "payments", 0, 0], ["bob", '{"amount": 2}', "payments", 1, 0]],
        [["ann", '{"amount": 3}', "payments", 0, 1], ["cy", '{"amount": "4"}', "payments", 1, 1]]])
    raw = records.select(F.col("key").cast("binary").alias("key"), F.col("value").cast("binary").alias("value"),
                         "topic", "partition", "offset", F.timestamp_millis(F.lit(0)).alias("timestamp"))
    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])
    job = user_job(flow, {"M": UserOperator(flow.kind("M"), lambda s, k, v: ((s or 0) + v, [(k, v)]))},
                   ListSource(()), parallelism={"M": 1})
    run = start_query(spark, job, from_kafka(raw, "amount long", key="user"), scheduler="fries",
                      checkpoint_dir=str(tmp_path / "ckpt"), key_column="user", value_column="amount")
    with pytest.raises(Exception, match=r"from_kafka: topic payments, partition 1, offset 1: the value is not a JSON "
                                        r"object of schema <struct<amount:bigint>>: \{\"amount\": \"4\"\}"):
        run.query.awaitTermination(120)
    assert run.executor.state[0].committed.offset == 2 and run.source.count() == 2
