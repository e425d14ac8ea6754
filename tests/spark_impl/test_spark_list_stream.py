"""``spark_impl.sources.list_stream`` (docs/production/sources.md, "A scripted stream"): micro-batch
``i`` is exactly the ``i``-th list, the stream is replayable from the query's checkpoint (a restart
with more batches appended continues after the last committed one), and the Fries live front
end on it - stopped and restarted mid-stream - equals the serial reference, and the same job fed
through files (slow).
"""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

import pytest

from spark_impl.sources import list_stream
from reference.fries.userjob import serial_run
from spark_impl.reconfig import ListSource, UserOperator, user_job
from spark_impl.reconfig.api import collect_results
from spark_impl.reconfig.streaming import start_query
from spec.fries.dataflow import dataflow

pytestmark = pytest.mark.spark

BATCHES = [[["ann", 3], ["bob", 1], ["ann", 4]], [["cy", 1]], [], [["bob", 5], ["ann", 9], ["dé", 2], ["cy", 6]]]


def test_each_micro_batch_is_exactly_one_listed_batch_and_a_restart_continues(spark: Any, tmp_path: Any) -> None:
    """list_stream docstring: batch i = batches[i] (an empty list an empty batch), typed by the
    schema; processAllAvailable returns; restarted with more batches, the query takes only the new ones."""
    seen: list[tuple[int, list[Any]]] = []
    rows = [[["a", 1, ["x"], {"n": 1}]], [["b", None, [], None]]]

    def start(batches: list[Any]) -> Any:
        stream = list_stream(spark, "key string, value long, tags array<string>, at struct<n: long>", batches)
        return (stream.writeStream.foreachBatch(lambda df, b: seen.append((b, [r.asDict(recursive=True) for r in df.collect()])))
                .option("checkpointLocation", str(tmp_path / "q")).start())

    query = start(rows)
    query.processAllAvailable()
    query.stop()
    query = start(rows + [[], [["c", 7, ["y", "z"], {"n": 3}]]])
    query.processAllAvailable()
    query.stop()
    assert seen == [(0, [{"key": "a", "value": 1, "tags": ["x"], "at": {"n": 1}}]),
                    (1, [{"key": "b", "value": None, "tags": [], "at": None}]),
                    (2, []), (3, [{"key": "c", "value": 7, "tags": ["y", "z"], "at": {"n": 3}}])]


def _job(tuples: tuple[Any, ...] = ()) -> Any:
    flow = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])

    def running_sum(state: Any, key: str, value: int) -> tuple[Any, list[tuple[str, Any]]]:
        return (state or 0) + value, [(key, (state or 0) + value)]

    return user_job(flow, {"M": UserOperator(flow.kind("M"), running_sum)}, ListSource(tuples), parallelism={"M": 2})


def _fries(spark: Any, stream: Any, ckpt: str) -> Any:
    return start_query(spark, _job(), stream, scheduler="fries", checkpoint_dir=ckpt,
                       key_column="user", value_column="amount")


def _results(run: Any) -> tuple[list[str], dict[Any, Any]]:
    (result,) = collect_results(run.executor)
    return sorted(json.dumps(list(o)) for o in result.outputs), dict(result.states)


def test_fries_live_on_a_list_stream_stopped_and_restarted_equals_the_serial_reference(spark: Any, tmp_path: Any) -> None:
    """docs/production/sources.md: the Fries front end on a non-file, replayable stream, stopped after
    two batches and restarted with all four: the input log holds the listed rows once, in order,
    and outputs and states equal reference.fries.userjob.serial_run over them."""
    from spark_impl.keys import route  # noqa: PLC0415 - read when called: spark_impl.keys.route is replaced at run time

    ckpt = str(tmp_path / "ckpt")
    run = _fries(spark, list_stream(spark, "user string, amount long", BATCHES[:2]), ckpt)
    run.query.processAllAvailable()
    run.stop()
    run = _fries(spark, list_stream(spark, "user string, amount long", BATCHES), ckpt)
    run.query.processAllAvailable()
    run.stop()
    logged = [run.source.get(i) for i in range(run.source.count())]
    assert [(k, v) for _, _, k, v in logged] == [(k, v) for batch in BATCHES for k, v in batch]
    expected = serial_run(_job(tuple(logged)), [t[1] for t in logged], route=route)
    outputs, states = _results(run)
    assert outputs == sorted(json.dumps(list(o)) for o in expected.outputs)
    assert states == dict(expected.states)
    assert Counter(states.values()) == Counter({16: 1, 6: 1, 7: 1, 2: 1})  # ann 16, bob 6, cy 7, dé 2


@pytest.mark.slow
def test_fries_live_on_a_list_stream_equals_the_same_job_fed_through_files(spark: Any, tmp_path: Any) -> None:
    """docs/production/sources.md: the same batches as one file each (maxFilesPerTrigger=1, distinct
    modification times) give the same input log order, outputs (transaction ids included) and states."""
    data = tmp_path / "in"
    data.mkdir()
    for number, batch in enumerate(BATCHES):
        tmp = tmp_path / f".f{number}"
        tmp.write_text("".join(json.dumps({"user": k, "amount": v}) + "\n" for k, v in batch), encoding="utf-8")
        os.utime(tmp, (1_700_000_000 + number, 1_700_000_000 + number))
        os.replace(tmp, data / f"f{number}.json")
    files = spark.readStream.schema("user string, amount long").option("maxFilesPerTrigger", 1).json(str(data))
    by_file = _fries(spark, files, str(tmp_path / "files"))
    by_file.query.processAllAvailable()
    by_file.stop()
    listed = _fries(spark, list_stream(spark, "user string, amount long", BATCHES), str(tmp_path / "listed"))
    listed.query.processAllAvailable()
    listed.stop()
    log = [by_file.source.get(i) for i in range(by_file.source.count())]
    assert log == [listed.source.get(i) for i in range(listed.source.count())]
    assert _results(by_file) == _results(listed)
