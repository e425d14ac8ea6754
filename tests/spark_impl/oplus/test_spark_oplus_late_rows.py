"""``spark_impl.oplus.streaming.late_rows``: the rows of a micro-batch that a late sink receives
are exactly the tuples below *their own job's* previous watermark (its docstring, and
docs/production/oplus.md: under a late sink no late tuple of any job is lost), with the
watermark each was behind."""

from __future__ import annotations

from typing import Any

import pytest

from spark_impl.oplus.streaming import late_rows


@pytest.mark.spark
def test_every_jobs_late_tuples_are_the_rows_below_their_own_jobs_watermark(spark: Any) -> None:
    rows = [(job, ts) for job in (0, 1, 2) for ts in (5, 15, 25, 35)] + [(None, 5), (None, 15)]
    df = spark.createDataFrame(rows, "job int, ts long")
    watermark = {0: 10.0, 1: 20.0, 2: 30.0}
    got = sorted(((r["job"], r["ts"], r["late_watermark"]) for r in late_rows(df, watermark).collect()),
                 key=repr)
    # a row without a job column value belongs to job 0, as the front end reads it
    want = sorted([(0, 5, 10), (None, 5, 10), (1, 5, 20), (1, 15, 20), (2, 5, 30), (2, 15, 30), (2, 25, 30)],
                  key=repr)
    assert got == want


@pytest.mark.spark
def test_a_job_without_a_finite_watermark_has_no_late_rows(spark: Any) -> None:
    df = spark.createDataFrame([(0, 1), (1, 1)], "job int, ts long")
    assert late_rows(df, {0: float("-inf"), 1: float("-inf")}).count() == 0
    assert [r["job"] for r in late_rows(df, {0: float("-inf"), 1: 2.0}).collect()] == [1]
