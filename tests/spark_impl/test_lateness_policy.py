"""spark_impl.lateness: one lateness module for the live O+ and DGS front ends, with one default
``late_policy`` (``"fail"``: nothing is dropped unless the user asked for it; module docstring,
docs/production/oplus.md and docs/production/dgs.md, "late_policy" / "The late policies").

The O+ query runs on the pure-Python Spark stand-in (``conformance.standin``), no JVM.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Sequence

import pytest
from pyspark.sql import Row

from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import Stream
from spec.errors import InputError
from spark_impl import lateness
from spark_impl.dgs import streaming_late
from spark_impl.dgs.streaming import start_dgs_query
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.reconfig.sinks import CallbackSink

COLUMNS = ("job", "source", "seq", "ts", "watermark", "end", "key", "value")


class _Batch:
    """A micro-batch DataFrame of the stand-in: ``columns`` and ``rdd`` over ``Row`` s."""

    columns = list(COLUMNS)

    def __init__(self, spark: LocalSpark, items: Sequence[dict[str, Any]]) -> None:
        row = Row(*COLUMNS)  # a Row needs no SparkSession
        self.rdd = spark.sparkContext.parallelize([row(*(i.get(c) for c in COLUMNS)) for i in items], 2)


def _oplus(directory: str, **options: Any) -> tuple[Any, Any, LocalSpark]:
    spark, stream = LocalSpark(), Stream(columns=COLUMNS)
    run = start_oplus_query(spark, stream, [oplus_job("sliding-sum", 5, 10)], checkpoint_dir=directory,
                            sink=CallbackSink(lambda df, b: None), **options)
    return run, stream.handler, spark


def test_both_live_front_ends_default_to_the_one_documented_policy_fail() -> None:
    """"``"fail"`` (:data:`DEFAULT_LATE_POLICY`, the default of both front ends)"."""
    assert lateness.DEFAULT_LATE_POLICY == "fail"
    for start in (start_oplus_query, start_dgs_query):
        assert inspect.signature(start).parameters["late_policy"].default == "fail", start.__name__


def test_an_oplus_query_without_a_policy_stops_on_a_late_tuple_and_drops_nothing(
        tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """docs/production/oplus.md, "late_policy": by default the micro-batch raises
    ``LateTupleError`` naming the first late tuple before anything of it commits; nothing is
    dropped (no "dropped" WARNING, no late count committed)."""
    run, handler, spark = _oplus(str(tmp_path))
    handler(_Batch(spark, [{"ts": 30, "key": "ann", "value": 1}]), 0)
    with caplog.at_level(logging.INFO, logger="streamproof"), pytest.raises(lateness.LateTupleError) as caught:
        handler(_Batch(spark, [{"ts": 3, "key": "bob", "value": 1}]), 1)
    assert "key 'bob' at event time 3" in str(caught.value) and caught.value.count == 1
    assert run.log.committed() == [0] and run.late() == {0: 0}
    assert not [r for r in caplog.records if "dropped" in r.getMessage()]


def test_drop_is_still_available_when_asked_for(tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """``"drop"``: left out and counted, one WARNING per micro-batch that drops, on the front
    end's logger, in the shared wording."""
    run, handler, spark = _oplus(str(tmp_path), late_policy="drop")
    handler(_Batch(spark, [{"ts": 30, "key": "ann", "value": 1}]), 0)
    with caplog.at_level(logging.WARNING, logger="streamproof.oplus"):
        handler(_Batch(spark, [{"ts": 3, "key": "bob", "value": 1}]), 1)
    lines = [r.getMessage() for r in caplog.records if r.name == "streamproof.oplus" and r.levelno == logging.WARNING]
    assert len(lines) == 1 and lines[0].startswith("batch 1: dropped 1 late tuple(s) (allowed_lateness 0); first:")
    assert run.late() == {0: 1}


@pytest.mark.parametrize("name", ["raise", "Raise", "ERROR", "Drop", "sink", ""])
def test_both_front_ends_refuse_the_same_misspelt_policies(tmp_path: Any, name: str) -> None:
    """"a path (a string other than the names ...)": a string that looks like a misspelt policy
    is refused with the same one-line InputError on O+ and DGS, never taken as a directory."""
    with pytest.raises(InputError) as oplus:
        _oplus(str(tmp_path / "o"), late_policy=name)
    with pytest.raises(InputError) as dgs:
        start_dgs_query(None, [object()], Stream(columns=("value",)), checkpoint_dir=str(tmp_path / "d"),  # type: ignore[list-item]
                        late_policy=name)
    assert str(oplus.value) == str(dgs.value) == (
        f"late_policy: unknown late policy {name!r} (expected 'drop', 'fail', a sink, or a path with a separator "
        "or scheme such as './late', '/data/late', 's3a://bucket/late')")


def test_the_dgs_names_stay_importable_from_their_documented_module_and_are_the_shared_ones() -> None:
    """docs/production/dgs.md: ``LateEventError`` (an ``InputError``) importable as before from
    ``spark_impl.dgs.streaming_late``; it is the one module's class, so one ``except`` catches
    it whichever import the user wrote."""
    assert streaming_late.LateEventError is lateness.LateEventError
    assert issubclass(lateness.LateEventError, InputError)
    assert streaming_late.parse_late_policy is lateness.late_policy
    assert streaming_late.LatePolicy is lateness.LatePolicy
