"""An output the Fries sink's column type cannot hold (``spark_impl.reconfig.sinks``, module
docstring): it "fails the delivery with one line naming the column, the output and where it
came from (job, batch id, operator, transaction, key) ... an ``InputError`` located at ``sink``;
nothing of the delivery is written or recorded, so a restart with a sink whose columns hold the
outputs delivers those batches, once" (the mechanism: ``spark_impl.sink_misfit``;
docs/production/types.md, "Results").

The live front end (``start_query``) runs a job ``S -> M`` whose ``M`` emits what each case
names. Without Spark: the real ``foreachBatch`` handler on the stand-ins of
``conformance.standin`` with a ``CallbackSink`` (plain, and wrapping the task's error in a
multi-line text as Spark does). With Spark: the user's own case - a ``ParquetSink`` whose
``value_type`` is ``long``, a function returning strings - on a file stream, as a driver meets it.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Callable

import pytest

from spec.errors import InputError
from spec.fries.dataflow import dataflow

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import MicroBatch, Stream
from spark_impl.lifecycle import QueryFailed
from spark_impl.reconfig import ListSource, UserOperator, user_job
from spark_impl.reconfig.sinks import CallbackSink, ParquetSink, read_delivered
from spark_impl.reconfig.streaming import start_query
from support.kept_deliveries import Kept

FLOW = dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")])


def _job(out: Callable[[Any, Any], tuple[Any, Any]]) -> Any:
    def emit(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        return (state or 0) + 1, [out(key, value)]

    return user_job(FLOW, {"M": UserOperator(FLOW.kind("M"), emit)}, ListSource(()), parallelism={"M": 1})


def _start(directory: Path, out: Callable[[Any, Any], tuple[Any, Any]], sink: Any) -> tuple[Any, Stream]:
    spark, stream = LocalSpark(), Stream(columns=("key", "value"))
    run = start_query(spark, _job(out), stream, scheduler="fries", checkpoint_dir=str(directory), sink=sink)
    return run, stream


@pytest.mark.parametrize("out, key_type, value_type, tail", [
    (lambda k, v: (k, f"n{v}"), "string", "long",
     "value_type 'long' cannot hold the value 'n3' (job 0, batch 1, operator 'M', txn 'S:0', key 'ann'): "
     "give the sink value_type='string', which holds every value"),
    (lambda k, v: (k, (v, "x")), "string", "long",
     "value_type 'long' cannot hold the value (3, 'x') (job 0, batch 1, operator 'M', txn 'S:0', key 'ann'): "
     "give the sink value_type='string', which holds every value"),
    (lambda k, v: ((k, 1), v), "long", "long",
     "key_type 'long' cannot hold the key ('ann', 1) (job 0, batch 1, operator 'M', txn 'S:0', key ('ann', 1)): "
     "give the sink key_type='string', which holds every value"),
    (lambda k, v: (k, v << 64), "string", "long",
     "value_type 'long' cannot hold the value 55340232221128654848 (job 0, batch 1, operator 'M', txn 'S:0', "
     "key 'ann'): give the sink value_type='string', which holds every value"),
    (lambda k, v: (k, "three"), "string", "double",
     "value_type 'double' cannot hold the value 'three' (job 0, batch 1, operator 'M', txn 'S:0', key 'ann'): "
     "give the sink value_type='string', which holds every value")])
@pytest.mark.parametrize("wrap", [False, True])
def test_an_output_the_sinks_column_cannot_hold_fails_the_delivery_in_one_line_and_nothing_is_recorded(
        tmp_path: Path, out: Any, key_type: str, value_type: str, tail: str, wrap: bool) -> None:
    kept = Kept(wrap)
    run, stream = _start(tmp_path, out, CallbackSink(kept, key_type=key_type, value_type=value_type))
    with pytest.raises(InputError) as refused:
        stream.handler(MicroBatch(run.executor.spark, [("ann", 3)]), 0)
    assert str(refused.value) == f"sink: the sink's {tail}"
    assert refused.value.where == "sink" and refused.value.__cause__ is None
    assert kept.calls == {} and read_delivered(str(tmp_path / "executor")) == {}
    # the batch is committed by the executor, not delivered: a restart whose sink's columns
    # hold the outputs delivers it, once, at start
    fixed = Kept()
    again, _ = _start(tmp_path, out, CallbackSink(fixed))
    assert list(fixed.calls) == [1] and len(fixed.calls[1]) == 1
    assert read_delivered(str(tmp_path / "executor")) == {0: 1}
    again.stop()


def test_a_restart_with_the_same_sink_refuses_in_the_same_line(tmp_path: Path) -> None:
    """The redelivery a restart makes first (``Executor``: "first the delivery a crash may have
    interrupted") fails with the same one line, from ``start_query`` itself."""
    out = lambda k, v: (k, f"n{v}")  # noqa: E731 - one expression
    run, stream = _start(tmp_path, out, CallbackSink(Kept(), value_type="long"))
    with pytest.raises(InputError) as first:
        stream.handler(MicroBatch(run.executor.spark, [("ann", 3)]), 0)
    with pytest.raises(InputError) as second:
        _start(tmp_path, out, CallbackSink(Kept(), value_type="long"))
    assert str(second.value) == str(first.value)
    assert read_delivered(str(tmp_path / "executor")) == {}


def _land(data: Path, name: str, rows: list[dict[str, Any]]) -> None:
    tmp = data.parent / f".{name}"
    tmp.write_text("".join(json.dumps(r) + "\n" for r in rows))
    os.replace(tmp, data / name)


@pytest.mark.spark
def test_a_live_query_whose_parquet_sink_cannot_hold_an_output_stops_with_one_line_and_writes_nothing(
        spark: Any, tmp_path: Path) -> None:
    """The user's case on Spark: the task's error reaches the driver inside Spark's
    multi-line wrappers; the query fails with the one line (``run.failure()``, what
    ``supervised`` prints), the Parquet table has no file, nothing is marked delivered; a
    restart with a ``string`` column delivers the row once."""
    data, ckpt, table = tmp_path / "in", tmp_path / "ckpt", tmp_path / "results"
    data.mkdir()
    _land(data, "f0.json", [{"key": "ann", "value": 3}])
    out = lambda k, v: (k, f"n{v}")  # noqa: E731 - one expression

    def start(value_type: str) -> Any:
        stream = spark.readStream.schema("key string, value long").json(str(data))
        return start_query(spark, _job(out), stream, scheduler="fries", checkpoint_dir=str(ckpt),
                           sink=ParquetSink(str(table), value_type=value_type))

    run = start("long")
    with pytest.raises(QueryFailed) as failed:
        run.await_termination(timeout=120)
    assert str(failed.value) == (
        "the query failed: InputError: sink: the sink's value_type 'long' cannot hold the value 'n3' (job 0, "
        "batch 1, operator 'M', txn 'S:0', key 'ann'): give the sink value_type='string', which holds every value")
    written = [p for p in table.rglob("*") if p.is_file()] if table.exists() else []
    assert written == [] and read_delivered(str(ckpt / "executor")) == {}
    again = start("string")
    try:
        again.query.processAllAvailable()
    finally:
        again.stop()
    rows = spark.read.parquet(str(table)).collect()
    assert [(r["txn"], r["key"], r["value"]) for r in rows] == [("S:0", "ann", "n3")]
    assert read_delivered(str(ckpt / "executor")) == {0: 1}
