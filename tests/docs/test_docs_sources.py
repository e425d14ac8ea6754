"""docs/production/sources.md: every code block (first line ``# sources: <name>``) is run as
the page says under it, in a namespace holding the test session's ``spark`` and a ``base``
directory; blocks after "A Kafka-shaped stream without a broker" use its ``raw`` / ``kafka_like``.

Default run: the Kafka read (it must fail only for the missing Kafka package: no broker here) and
the file-landing block. Slow: the Kafka-shaped stream with the Fries, O+ and DGS blocks, the
rate block and the list-stream block (one live query each; tests/spark_impl/test_spark_sources.py runs each front end on a
Kafka-shaped stream in the default run).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import time
from collections import Counter
from typing import Any, Callable

import pytest
from support.paths import ROOT as REPOSITORY
from pyspark.sql import functions as F
from reference.oplus.operators.catalogue import to_row
from reference.oplus.run import execute
from spark_impl.reconfig.api import collect_results
from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams, value_to_json
from spec.oplus.scenario import parse_scenario

pytestmark = pytest.mark.spark

ROOT = str(REPOSITORY)
DOC = os.path.join(ROOT, "docs", "production", "sources.md")
BLOCK = re.compile(r"^```python\n(# sources: ([\w-]+)\n.*?)^```", re.S | re.M)
RUN_HERE = {"kafka-read", "kafka-shaped", "kafka-fries", "kafka-oplus", "kafka-dgs", "rate-oplus", "list-stream", "files"}
"""The blocks this module runs (a block added to the page must be added here and run)."""


def blocks() -> dict[str, str]:
    """``{name: code}`` of the page's blocks."""
    with open(DOC, encoding="utf-8") as handle:
        found = BLOCK.findall(handle.read())
    names = [name for _, name in found]
    assert len(names) == len(set(names)), f"a block name is used twice: {names}"
    return {name: code for code, name in found}


def run_block(name: str, namespace: dict[str, Any]) -> dict[str, Any]:
    """Execute block ``name`` in ``namespace`` (updated in place, returned)."""
    exec(compile(blocks()[name], f"{DOC}:{name}", "exec"), namespace)  # noqa: S102 - the doc's own code
    return namespace


def wait_for(query: Any, done: Callable[[], bool], what: str, seconds: float = 240) -> None:
    """Poll ``done`` while the query runs; fail with the query's error if it died."""
    deadline = time.monotonic() + seconds
    while not done():
        assert query.isActive, f"the query stopped before {what}: {query.exception()}"
        assert time.monotonic() < deadline, f"not {what} within {seconds} s"
        time.sleep(0.2)


def test_every_block_of_the_page_is_run_here() -> None:
    assert set(blocks()) == RUN_HERE


def test_the_kafka_read_block_fails_only_for_the_missing_kafka_package(spark: Any) -> None:
    """sources.md, "Reading a topic": the block is valid up to load(), where Spark needs the package."""
    with pytest.raises(Exception, match=r"KAFKA_DATA_SOURCE_NOT_ENABLED\] Failed to find data source: kafka\."):
        run_block("kafka-read", {"spark": spark})


@pytest.mark.slow
def test_the_kafka_fries_block_counts_the_decoded_records_with_a_bounded_log(spark: Any, tmp_path: Any) -> None:
    """sources.md, "Parsing" and "The Fries input log": the Fries block on the Kafka-shaped stream
    commits whole batches of decoded records (the states count them per user, the retained
    batches' outputs are exactly their records), and with its Retention the input log keeps no
    file below the committed offset."""
    ns = run_block("kafka-fries", run_block("kafka-shaped", {"spark": spark, "base": str(tmp_path)}))
    run = ns["run"]
    try:
        wait_for(run.query, lambda: run.executor.state[0].committed.offset >= 300, "300 records committed")
    finally:
        run.stop()
    count = run.executor.state[0].committed.offset
    assert count % 100 == 0 and run.source.count() == count
    (result,) = collect_results(run.executor)
    assert result.states == {("M", f"user-{u}"): count // 5 for u in range(5)}
    positions = sorted(int(txn.split(":")[1]) for _, txn, _, _ in result.outputs)
    first = positions[0]
    assert first % 100 == 0 and positions == list(range(first, count))
    assert Counter((k, v) for _, _, k, v in result.outputs) == \
        Counter((f"user-{n % 5}", n % 7) for n in range(first, count))
    assert os.listdir(os.path.join(str(tmp_path), "fries", "input")) == ["index.json"]


def _window_sums(rows: list[Any], per_unit: int, watermark: int) -> None:
    """The O+ blocks' results: every emitted window (right end ``ts`` <= watermark) equals the
    sequential reference over the records whose event time the watermark covers."""
    items = [{"ts": n // per_unit, "key": f"user-{n % 5}", "value": n % 7} for n in range(per_unit * watermark)]
    case = {"operator": "sliding-sum", "WA": 5, "WS": 10, "parallelism": 1, "inputs": [items]}
    expected = Counter((int(r["ts"]), str(r["key"]), int(r["value"])) for r in
                       map(to_row, execute(parse_scenario(case), "sequential").outputs) if r["ts"] <= watermark)
    got = Counter((int(r["ts"]), r["key"], int(r["value"])) for r in rows)
    assert got == expected and len(got) >= 5


@pytest.mark.slow
@pytest.mark.parametrize("block, per_unit", [("kafka-oplus", 10), ("rate-oplus", 20)])
def test_the_oplus_blocks_emit_the_reference_window_sums(spark: Any, tmp_path: Any, block: str, per_unit: int) -> None:
    """sources.md, "Parsing" and "The rate source": the O+ blocks' Parquet results are the sequential
    reference's windows up to the watermark reached."""
    ns = {"spark": spark, "base": str(tmp_path)}
    if block == "kafka-oplus":
        run_block("kafka-shaped", ns)
    run = run_block(block, ns)["run"]
    try:
        wait_for(run.query, lambda: (s := run.status()) is not None and s.watermark[0] >= 25, "event time 25")
    finally:
        run.stop()
    status = run.status()
    assert status is not None and status.late == {0: 0}
    results = "oplus-results" if block == "kafka-oplus" else "rate-results"
    _window_sums(spark.read.parquet(os.path.join(str(tmp_path), results)).collect(), per_unit,
                 int(status.watermark[0]))


@pytest.mark.slow
def test_the_kafka_dgs_block_outputs_the_sequential_programs(spark: Any, tmp_path: Any) -> None:
    """sources.md, "Parsing": DGS items as Kafka values (two streams, heartbeats at the end) on the
    recipe's key counter; the Parquet outputs are spec(sort(u))'s."""
    shutil.copy(os.path.join(ROOT, "tests", "support", "dgs_live_programs.py"), tmp_path / "word_counter.py")
    target = f"{tmp_path}/word_counter.py:WordCounter"
    ns = run_block("kafka-shaped", {"spark": spark, "base": str(tmp_path), "target": target})
    words, total = ("alice", "bob", "carol", "dave"), 200
    n = F.col("value")
    stream = F.concat(F.lit("s"), (n % 2).cast("string"))
    item = F.when(n < total, F.to_json(F.struct(stream.alias("stream"), (n + 1).alias("ts"), F.array(
        F.when(n % 3 == 0, F.lit("r")).otherwise(F.lit("i")), F.element_at(F.array(*map(F.lit, words)), (n % 4 + 1).cast("int"))
    ).alias("event")))).otherwise(F.to_json(F.struct(stream.alias("stream"), (n + 1).alias("ts"), F.lit(True).alias("heartbeat"))))
    raw = ns["kafka_like"](spark, key=F.lit(None).cast("string"), value=item)
    ns["raw"] = raw.where(F.col("offset") * 3 + F.col("partition") < total + 2)  # 3 partitions: n again
    run = run_block("kafka-dgs", ns)["run"]
    try:
        wait_for(run.query, lambda: (c := run.committed()).mailboxes != [] and not c.mailboxes[0].buffered
                 and all(c.mailboxes[0].timers.get(s, (0,))[0] > total for s in ("s0", "s1")), "both heartbeats")
    finally:
        run.stop()
    streams: dict[str, list[Any]] = {"s0": [], "s1": []}
    for i in range(total + 2):
        streams[f"s{i % 2}"].append(StreamEvent(i + 1, ("r" if i % 3 == 0 else "i", words[i % 4])) if i < total
                                    else Heartbeat(i + 1))
    _, expected = spec_run(load_program(target), sort_streams(streams))
    table = spark.read.parquet(os.path.join(str(tmp_path), "dgs-results")).collect()
    assert Counter(json.dumps(json.loads(r["value"])) for r in table) == \
        Counter(json.dumps(value_to_json(x)) for x in expected)


def test_the_files_block_lands_files_a_millisecond_apart_that_the_stream_reads(spark: Any, tmp_path: Any) -> None:
    """sources.md, "Files": atomic landing, distinct millisecond modification times, read by the stream."""
    ns = run_block("files", {"spark": spark, "base": str(tmp_path)})
    ns["land"](f"{tmp_path}/in", "f0003.json", [{"ts": 3, "user": "cy", "amount": 5}])  # at once after the others
    times = sorted(os.stat(e.path).st_mtime_ns for e in os.scandir(f"{tmp_path}/in"))
    assert len(times) == 3 and all(b - a >= 1_000_000 for a, b in zip(times, times[1:]))
    query = (ns["stream"].writeStream.format("memory").queryName("landed_files").trigger(availableNow=True)
             .option("checkpointLocation", f"{tmp_path}/q").start())
    query.awaitTermination(120)
    assert sorted(r["user"] for r in spark.table("landed_files").collect()) == ["ann", "bob", "cy"]


@pytest.mark.slow
def test_the_list_stream_block_delivers_the_listed_batches(spark: Any, tmp_path: Any) -> None:
    """sources.md, "A scripted stream": the three listed batches reach a query as listed."""
    ns = run_block("list-stream", {"spark": spark, "base": str(tmp_path)})
    seen: list[tuple[int, list[tuple[Any, ...]]]] = []
    query = (ns["stream"].writeStream.foreachBatch(lambda df, b: seen.append((b, [tuple(r) for r in df.collect()])))
             .option("checkpointLocation", f"{tmp_path}/q").start())
    query.processAllAvailable()
    query.stop()
    assert seen == [(0, [("ann", 3), ("bob", 1)]), (1, []), (2, [("ann", 4)])]
