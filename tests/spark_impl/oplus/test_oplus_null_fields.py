"""A null in a column of a live O+ stream (``spark_impl.oplus.streaming_jobs``), on the Spark
stand-in (``support.oplus_live_standin``): docs/production/types.md, "null, in a column of any
type -> ``None``", and docs/production/oplus.md ("Constraints"), keys may be ``None``.

* a null key reaches sliding-sum as ``None`` and is a key like any other;
* a null field inside a struct is ``None`` inside its tuple;
* a null where a catalogue operator computes (sliding-sum's ``value``) fails the batch with one
  line naming the row and the field, as the reference's scenario format refuses it
  (docs/production/oplus.md, "Null fields");
* a column the stream does not have stays "lacks field(s)"; a tuple needs its event time.
"""

from __future__ import annotations

from typing import Any

import pytest
from pyspark.sql import Row  # a Row needs no SparkSession
from pyspark.sql.types import LongType, StringType, StructField, StructType

from spec.errors import InputError
from spec.oplus.scenario import parse_scenario

from spark_impl.oplus.streaming_jobs import Summary, entries_of, oplus_job, summarize

from support.oplus_live_standin import start_local


def test_null_in_a_column_of_any_type_reaches_sliding_sum_as_None_key(tmp_path: Any) -> None:
    live = start_local([oplus_job("sliding-sum", 10, 10)], str(tmp_path / "ckpt"))
    live.batch(0, [{"ts": 1, "key": None, "value": 1}, {"ts": 2, "key": 5, "value": 2},
                   {"ts": 3, "key": None, "value": 4}, {"end": True}])
    assert live.run.failure() is None
    assert sorted((tuple(r)[-3:] for r in live.delivered[0]), key=repr) == sorted(  # (ts, key, value)
        [(10, None, 5), (10, 5, 2)], key=repr)


def test_null_in_a_struct_field_is_None_inside_its_tuple() -> None:
    schema = StructType([StructField("ts", LongType()), StructField("key", StructType(
        [StructField("a", StringType()), StructField("b", LongType())])), StructField("value", LongType())])
    entry = entries_of(["ts", "key", "value"], schema)
    assert entry(Row(ts=1, key=Row(a=None, b=2), value=None))[6] == {"key": (None, 2), "value": None}


def test_a_null_value_of_sliding_sum_fails_the_batch_naming_the_row_as_the_reference_refuses_it(
        tmp_path: Any) -> None:
    live = start_local([oplus_job("sliding-sum", 10, 10)], str(tmp_path / "ckpt"))
    with pytest.raises(InputError) as refused:
        live.batch(0, [{"ts": 1, "key": 1, "value": 1}, {"ts": 2, "key": 7, "value": None}, {"end": True}])
    message = str(refused.value)
    assert "at ts 2 has null field(s) ['value']" in message and "\n" not in message, message
    assert live.run.log.committed() == [] and live.delivered == {}
    with pytest.raises(InputError):
        parse_scenario({"operator": "sliding-sum", "WA": 10, "WS": 10,
                        "inputs": [[{"ts": 2, "key": "ann", "value": None}]]})


def test_a_missing_column_and_a_null_event_time_stay_errors_naming_the_row() -> None:
    job = oplus_job("sliding-sum", 10, 10)
    entry = entries_of(["ts", "key"])
    out = Summary()
    for part in summarize([job], {})(iter([entry(Row(ts=4, key="ann")), entry(Row(ts=None, key="bob"))])):
        out.merge(part)
    assert out.bad == ["tuple of job 0, source 0 at ts 4 lacks field(s) ['value'] (no such column in the stream)",
                       "row of job 0, source 0 has no ts, watermark or end"]
