"""The live O+ ``foreachBatch`` handler on the pure-Python Spark stand-in
(:mod:`conformance.oplus.checks.live_standin`), without Spark: the check passes on the handler and
names each one-line bug of ``_Handler._run`` that the Spark live cases (in-order sources, no
late tuple, no bad row, string keys, parallelism at most 256) let through. Each bug is
``_run`` recompiled from its source with one change (``_method``)."""

from __future__ import annotations

import pytest

from support.source_rewrite import rewritten_method

import spark_impl.oplus.streaming as streaming
from conformance.oplus.checks import live_standin as check
from conformance.standin.spark import LocalSpark
from conformance.core.results import SuiteResult


def test_the_live_handler_keeps_its_promises_on_the_local_spark() -> None:
    assert check.live_local_problem() is None


def test_the_suite_check_passes_on_the_handler() -> None:
    result = SuiteResult("oplus", "spark", 0, delay_unit="")
    check.run_check(result)
    assert [(c.name, c.failed) for c in result.checks] == [(check.CHECK, 0)] and not result.failures


def test_the_local_spark_maps_within_partitions() -> None:
    rdd = LocalSpark(3).sparkContext.parallelize(range(5), 2).map(lambda x: x * 10)
    assert rdd.mapPartitionsWithIndex(lambda i, it: [(i, list(it))]).collect() == [(0, [0, 10]), (1, [20, 30, 40])]


def _mutate(monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    monkeypatch.setattr(streaming._Handler, "_run", rewritten_method(streaming._Handler, "_run", old, new))


def test_a_watermark_taken_from_the_batch_alone_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``bounds[at] = max(bounds.get(at, -inf), bound)`` -> ``bounds[at] = bound``: a late tuple
    (or a stale heartbeat) moves the watermark backwards; the next late tuple is accepted,
    re-creates the emitted window [0, 10) and it is emitted a second time."""
    _mutate(monkeypatch, "bounds[at] = max(bounds.get(at, -math.inf), bound)", "bounds[at] = bound")
    found = check.live_local_problems()
    assert found and "the job's watermark went back from 12 to 5" in found[0], found
    assert any("a late tuple at ts 7" in p and "status().late is {0: 1}, expected {0: 2}" in p for p in found)
    assert any("the window [0, 10) of key 7 was emitted 2 times (batches [0, 4])" in p for p in found), found


@pytest.mark.parametrize("new", ["", "late=prev.late,"])
def test_late_tuples_not_counted_or_counted_from_the_previous_record_are_named(
        monkeypatch: pytest.MonkeyPatch, new: str) -> None:
    """``late=summary.late`` dropped, or replaced by ``prev.late`` (the running count added to
    itself): ``status().late`` is wrong."""
    _mutate(monkeypatch, "late=summary.late,", new)
    found = check.live_local_problem()
    assert found is not None and "status().late is {0: 0}, expected {0: 1}" in found, found


def test_a_batch_with_bad_rows_that_runs_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """The bad-row ``raise`` dropped (the InputError built, not raised): the batch commits."""
    _mutate(monkeypatch, 'raise InputError(f"batch {batch_id}', 'InputError(f"batch {batch_id}')
    found = check.live_local_problems()
    assert found and "batch 7 (a row of job 3 of 1" in found[0] and "was accepted" in found[0], found
    assert any("the refused batch 7 left the commits [6, 7]" in p for p in found), found


@pytest.mark.parametrize("new, words", [
    ("outputs=len(counts)", "status().outputs is 257 and 6 rows were delivered under its id, expected 6"),
    ("outputs=0", "status().outputs is 0 and 0 rows were delivered under its id, expected 6"),
])
def test_a_wrong_output_count_is_named(monkeypatch: pytest.MonkeyPatch, new: str, words: str) -> None:
    """The record's ``outputs`` not the batch's rows: ``status()`` lies, and with 0 the batch
    is never delivered (``deliver_pending`` skips a record without outputs)."""
    _mutate(monkeypatch, "outputs=sum(n for _, n in counts)", new)
    found = check.live_local_problem()
    assert found is not None and words in found, found


def test_instances_that_own_keys_by_the_default_route_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``ScenarioRound(..., self.drop, route_key)`` -> ``(..., self.drop)``: the instances own
    keys by ``instance_of`` (crc32 of a string), which is ``route_key`` for strings only and
    raises on an integer key."""
    _mutate(monkeypatch, "self.drop, route_key)", "self.drop)")
    found = check.live_local_problem()
    assert found is not None and "batch 0" in found and "raised AttributeError" in found, found


def test_a_job_re_read_by_every_instance_without_a_rescale_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``prev.parallelism[j] != prev.ran.get(j)`` -> ``is not``: above 256 the two equal
    parallelisms read back from the commit record are distinct objects, so every batch
    "moves" the job and each of the 257 instances reads all 257 state files (same outputs)."""
    _mutate(monkeypatch, "prev.parallelism[j] != prev.ran.get(j)", "prev.parallelism[j] is not prev.ran.get(j)")
    found = check.live_local_problem()
    assert found is not None and "batch 1 gave its instances RoundPlan.moved = [0], expected []" in found, found
