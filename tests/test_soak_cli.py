"""``streamproof soak``: bad input exits 2 before Spark starts; a short run (slow: about a
minute) prints exactly the contract's keys, loses and duplicates nothing and exits 0."""

from __future__ import annotations

import json
from typing import Any

import pytest

from conformance.cli.main import main

CONTRACT = {"batches", "disk_bytes_start", "disk_bytes_end", "rss_bytes_start", "rss_bytes_end",
            "batch_ms_p50_start", "batch_ms_p50_end", "lost", "duplicated"}


@pytest.mark.parametrize("argv, fragment", [
    (["soak", "--batches", "5"], "--batches: must be at least 10"),
    (["soak", "--keys", "0"], "--keys: must be at least 1"),
    (["soak", "--every", "-1"], "--every: must be at least 1"),
    (["soak", "--scheduler", "bogus"], "unknown scheduler 'bogus'"),
])
def test_bad_input_is_one_line_and_exit_2(argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    err = captured.err.strip()
    assert fragment in err and len(err.splitlines()) == 1 and captured.out == ""


@pytest.mark.slow
@pytest.mark.spark
def test_a_short_soak_loses_and_duplicates_nothing(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["soak", "--batches", "20", "--every", "3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == CONTRACT
    assert figures["batches"] == 20 and figures["lost"] == 0 and figures["duplicated"] == 0
    assert figures["disk_bytes_start"] > 0 and figures["rss_bytes_start"] > 0


@pytest.mark.spark
def test_the_soak_check_counts_lost_and_duplicated_rows(spark: Any, tmp_path: Any) -> None:
    """The soak's verdict has teeth: a missing tuple is lost, a transaction written twice or an
    input value under two transactions is duplicated."""
    from spark_impl.workloads.soak import check_table

    def table(name: str, rows: list[tuple[int, int]]) -> str:
        path = str(tmp_path / name)
        spark.createDataFrame([(f"S:{t}", json.dumps([v, 0])) for t, v in rows], "txn string, value string") \
            .write.parquet(path)
        return path

    assert check_table(spark, table("good", [(i, i) for i in range(10)]), 10) == (0, 0)
    assert check_table(spark, table("gap", [(i, i) for i in range(10) if i != 5] + [(3, 3)]), 10) == (1, 1)
    assert check_table(spark, table("repeat", [(i, i) for i in range(10)] + [(10, 4)]), 11) == (1, 1)
