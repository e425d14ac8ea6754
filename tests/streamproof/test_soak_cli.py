"""``streamproof soak``: bad input exits 2 before Spark starts; a short run (slow: about a
minute) prints exactly the contract's keys, loses and duplicates nothing and exits 0."""

from __future__ import annotations

import json
import os
import signal
import time
from typing import Any
from collections import Counter

import pytest

from streamproof.main import main
from conformance.oplus.engines.reference import reference_rows
from spark_impl.reconfig.streaming import REMEMBERED, remember
from spark_impl.workloads import footprint
from spark_impl.workloads.soak import check_table, measure, summarize
from spark_impl.workloads.soak_oplus import check_windows, expected_windows

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
    def table(name: str, rows: list[tuple[int, int]]) -> str:
        path = str(tmp_path / name)
        spark.createDataFrame([(f"S:{t}", json.dumps([v, 0])) for t, v in rows], "txn string, value string") \
            .write.parquet(path)
        return path

    assert check_table(spark, table("good", [(i, i) for i in range(10)]), 10) == (0, 0)
    assert check_table(spark, table("gap", [(i, i) for i in range(10) if i != 5] + [(3, 3)]), 10) == (1, 1)
    assert check_table(spark, table("repeat", [(i, i) for i in range(10)] + [(10, 4)]), 11) == (1, 1)


class _FakeRun:
    """A front end's run as the soak sees it: ``batch_ms`` keeps only the last REMEMBERED
    batches (as spark_impl.reconfig.streaming does); one batch finishes per poll."""

    def __init__(self, total: int) -> None:
        self.remembered, self.remember = REMEMBERED, remember
        self.total, self.next = total, 0
        self.batch_ms: dict[int, float] = {}
        self.requests: list[int] = []
        outer = self

        class Query:
            @staticmethod
            def exception() -> None:
                if outer.next < outer.total:  # a batch ends between two polls
                    outer.remember(outer.batch_ms, outer.next, float(outer.next))
                    outer.next += 1

        self.query = Query()

    def in_progress(self) -> bool:
        return False

    def submit(self, request: int) -> None:
        self.requests.append(request)


def test_a_soak_longer_than_the_front_ends_memory_counts_every_batch() -> None:
    """Regression: the soak counted the entries of the front end's ``batch_ms``, which keeps
    only the last 1000 batches, so a 2,000-batch soak never ended; and its latency figures
    came from the batches still remembered, not from the second and the last 10%."""
    run = _FakeRun(2500)
    assert run.remembered < 2000
    seen = measure(run, 2000, "", every=5, request=lambda version: version, stall_s=2.0,
                   sample=lambda: (run.next, 0))
    assert len(seen.durations) == 2000 and seen.durations[:3] == [0.0, 1.0, 2.0]
    assert seen.requests == len(run.requests) == 399 and run.requests[:2] == [1, 2]
    figures = summarize(2000, seen, 0, 0)
    # the median of batches 200..399 and of 1800..1999 (each batch's time = its id here)
    assert figures.batch_ms_p50_start == 299.5 and figures.batch_ms_p50_end == 1899.5
    assert figures.disk_bytes_start == 200 and figures.disk_bytes_end == 2000


def test_a_child_in_its_parents_memory_is_counted_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression: a posix_spawn child of the JVM (Hadoop's chmod) shows the JVM's whole RSS
    until it execs; summing it made the soak's RSS at the end a second copy of the JVM."""
    table = {100: 1, 101: 100, 102: 100, 103: 102}  # 101 shares 100's memory; 102 forked; 103 its child
    monkeypatch.setattr(footprint, "_parents", lambda: table)
    monkeypatch.setattr(footprint, "rss_bytes", lambda pid: {100: 600, 101: 600, 102: 50, 103: 7}[pid])
    monkeypatch.setattr(footprint, "shares_memory", lambda a, b: (a, b) == (101, 100), raising=False)
    assert footprint.tree_rss_bytes(100) == 657


def test_shared_memory_is_asked_of_the_kernel() -> None:
    if footprint.KCMP is None:
        pytest.skip("kcmp: no syscall number for this machine")
    assert footprint.shares_memory(os.getpid(), os.getpid())
    child = os.fork()
    if child == 0:  # pragma: no cover - the child only waits
        time.sleep(30)
        os._exit(0)
    try:
        assert not footprint.shares_memory(os.getpid(), child)
        assert footprint.tree_rss_bytes() > footprint.rss_bytes(os.getpid())  # the forked child is counted
    finally:
        os.kill(child, signal.SIGKILL)
        os.waitpid(child, 0)


def test_the_oplus_soaks_expected_windows_are_the_sequential_references() -> None:
    """The O+ soak's verdict compares the Parquet table with these rows: they must be the
    sequential reference's windows closed by the final watermark."""
    for n, keys, wa, ws in ((40, 3, 5, 10), (57, 4, 4, 8), (30, 1, 3, 6)):
        items = [{"ts": v, "key": f"k{v % keys}", "value": v} for v in range(n)]
        case = {"operator": "sliding-sum", "WA": wa, "WS": ws, "WT": "single", "parallelism": 1, "inputs": [items]}
        closed = Counter(r for r in reference_rows(case, "sequential") if r[0] <= n - 1)
        mine = expected_windows(n, keys, wa, ws)
        assert Counter((end, key, json.dumps(total)) for end, key, total in mine.elements()) == closed
        rows = list(mine.elements())
        assert check_windows(rows, n, keys, wa, ws) == (0, 0)
        assert check_windows(rows[1:] + rows[:1] * 2, n, keys, wa, ws) == (0, 1)
        assert check_windows(rows[1:], n, keys, wa, ws) == (1, 0)
        wrong = [(rows[0][0], rows[0][1], rows[0][2] + 1)] + rows[1:]
        assert check_windows(wrong, n, keys, wa, ws) == (1, 1)


@pytest.mark.slow
@pytest.mark.spark
def test_a_short_oplus_soak_loses_and_duplicates_nothing(spark: Any, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["soak", "--front-end", "oplus", "--batches", "20", "--every", "3", "--json"]) == 0
    figures = json.loads(capsys.readouterr().out)
    assert set(figures) == CONTRACT
    assert figures["batches"] == 20 and figures["lost"] == 0 and figures["duplicated"] == 0
