"""What a live O+ query runs and reads (``spark_impl.oplus.streaming_jobs``), without Spark.

* ``oplus_job``: fewer than one source, and a source count the operator does not take, are
  refused; the default source counts (2 for scalejoin and forward, 1 otherwise), each
  source's required fields, the defaults of a job without options;
* ``route_key``: "a string key goes where every O+ engine sends it (crc32) ..., a key of any
  other type by ``spark_impl.keys.route`` (an integer ``k`` to ``k mod p``)";
* **Stream rows** (module docstring): ``job``, ``source`` and ``seq`` default to 0, ``end`` to
  False, a null field is None, structs and arrays become tuples;
* ``Summary`` / ``summarize``: per ``(job, source)`` the largest timestamp or explicit
  watermark (+inf after ``end``), the tuples and the *late* ones ("a tuple below its job's
  previous watermark"), and rows that fit no job, rows with neither ``ts``, ``watermark`` nor
  ``end`` and tuples without their operator's fields reported as bad, not counted; merged
  summaries add up and keep at most three problems; ``rows`` (the log line's "rows in") counts
  every row, marker rows included.
"""

from __future__ import annotations

import math
from typing import Any

import pytest
from pyspark.sql import Row  # a Row needs no SparkSession

from spec.errors import InputError
from spec.oplus.scenario import instance_of

from spark_impl.keys import route
from spark_impl.oplus.streaming_jobs import Summary, entries_of, oplus_job, route_key, summarize


@pytest.mark.parametrize("operator, sources, where", [
    ("sliding-sum", 0, "sources"), ("wordcount", -1, "sources"), ("scalejoin", 3, None)])
def test_a_job_with_a_source_count_its_operator_does_not_take_is_refused(operator: str, sources: int,
                                                                         where: str | None) -> None:
    with pytest.raises(InputError) as refused:
        oplus_job(operator, 1, 2, sources=sources)
    assert where is None or refused.value.where == where


def test_an_unknown_operator_is_refused() -> None:
    with pytest.raises(InputError):
        oplus_job("maxsum", 1, 2)


def test_a_jobs_default_sources_and_required_fields() -> None:
    assert {name: oplus_job(name, 1, 1).sources for name in ("scalejoin", "forward", "sliding-sum", "wordcount")} == {
        "scalejoin": 2, "forward": 2, "sliding-sum": 1, "wordcount": 1}
    join, total = oplus_job("scalejoin", 1, 2), oplus_job("sliding-sum", 1, 2, sources=3)
    assert [join.required_fields(0), join.required_fields(1), total.required_fields(2)] == [
        ("x", "y"), ("a", "b"), ("key", "value")]
    plain = oplus_job("sliding-sum", 1, 2)
    assert (plain.parallelism, plain.config().typed_keys, plain.config().off_by_one,
            plain.config(True).off_by_one) == (1, True, False, True)
    with pytest.raises(TypeError):
        oplus_job("forward", 1, 1, "multi")  # type: ignore[call-arg]  # WT and the rest are keyword-only


@pytest.mark.parametrize("key", ["a", "#x", "word-17", 7, -3, 12.0, (1, "a"), True])
@pytest.mark.parametrize("size", [1, 3, 5])
def test_route_key_sends_strings_by_crc32_and_other_keys_by_the_shared_route(key: Any, size: int) -> None:
    want = instance_of(key, size) if isinstance(key, str) else route(key, size)
    assert route_key(key, size) == want
    if isinstance(key, int) and not isinstance(key, bool):
        assert want == key % size


COLUMNS = ["job", "source", "seq", "ts", "watermark", "end", "key", "value", "text"]


@pytest.mark.parametrize("key, read", [([1, [2, "a"]], (1, (2, "a"))), (Row(a=1, b=[2, 3]), (1, (2, 3)))])
def test_a_tuple_row_reads_with_its_defaults_and_its_key_as_a_tuple(key: Any, read: Any) -> None:
    entry = entries_of(COLUMNS)
    row = Row(job=None, source=None, seq=None, ts=5, watermark=None, end=None, key=key, value=7, text=None)
    assert entry(row) == (0, 0, 5, None, False, 0, {"key": read, "value": 7, "text": None})


def test_a_mark_row_reads_as_its_watermark_and_end() -> None:
    entry = entries_of(COLUMNS)
    row = Row(job=1, source=1, seq=4, ts=None, watermark=9, end=True, key=None, value=None, text=None)
    assert entry(row) == (1, 1, None, 9, True, 4, {})


def test_a_batch_summary_holds_bounds_tuples_late_ones_and_bad_rows() -> None:
    jobs = [oplus_job("sliding-sum", 2, 4, parallelism=2), oplus_job("scalejoin", 1, 3, params={"keys": 2}),
            oplus_job("sliding-sum", 1, 2, sources=2)]
    rows = [
        (0, 0, 3, None, False, 0, {"key": "a", "value": 1}),
        (0, 0, 9, None, False, 1, {"key": "b", "value": 1}),
        (0, 0, None, 12, False, 2, {}),
        (0, 0, 1, None, False, 3, {"key": "c", "value": 1}),   # late: below job 0's previous watermark 2
        (1, 0, 6, None, False, 0, {"x": 1}),                   # bad: no y
        (1, 0, None, None, False, 0, {}),                      # bad: no ts, watermark or end
        (0, 0, 0, None, False, 4, {"key": "c", "value": 1}),   # late
        (1, 0, 4, None, False, 0, {"x": 1, "y": 2}),
        (1, 1, None, None, True, 0, {}),
        (1, 1, 2, None, False, 1, {"a": 1, "b": 1}),           # at job 1's watermark 2: not late
        (2, 0, -8, None, False, 0, {"key": "a", "value": 1}),  # job 2 has no previous watermark
        (2, 1, None, -7, False, 0, {}),                        # a negative explicit watermark
        (3, 0, 5, None, False, 0, {"key": "a", "value": 1}),   # bad: no job 3 (of 3)
        (7, 0, 5, None, False, 0, {"key": "a", "value": 1}),   # bad: no job 7
        (-1, 0, 5, None, False, 0, {"key": "a", "value": 1}),  # bad: no job -1
        (0, 1, 5, None, False, 0, {"key": "a", "value": 1}),   # bad: job 0 has 1 source
        (0, 4, 5, None, False, 0, {"key": "a", "value": 1}),   # bad: job 0 has 1 source
        (0, -1, 5, None, False, 0, {"key": "a", "value": 1}),  # bad: no source -1
        (1, 2, 5, None, False, 0, {"a": 1, "b": 1}),           # bad: job 1 has 2 sources
    ]
    (out,) = list(summarize(jobs, {0: 2.0, 1: 2.0})(iter(rows)))
    assert out.bounds == {(0, 0): 12.0, (1, 0): 4.0, (1, 1): math.inf, (2, 0): -8.0, (2, 1): -7.0}
    assert (out.late, out.tuples, len(out.bad), out.rows) == ({0: 2}, 7, 9, len(rows))
    sources = [b for b in out.bad if " source(s)" in b]
    assert len(sources) == 4 and all("; job 0 has 1 source(s)" in b for b in sources[:3])
    assert "; job 1 has 2 source(s)" in sources[3]


@pytest.mark.parametrize("kept, more", [(["p1"], ["p2", "p3", "p4"]), (["p1", "p2", "p3"], ["p4"]),
                                        ([], ["p1", "p2", "p3", "p4"])])
def test_merged_summaries_add_up_and_keep_three_problems(kept: list[str], more: list[str]) -> None:
    first = Summary({(0, 0): 3.0, (1, 1): 5.0}, {0: 3}, 4, list(kept))
    first.merge(Summary({(0, 0): 7.0, (1, 0): -1.0}, {0: 1, 1: 3}, 2, list(more)))
    assert first.bounds == {(0, 0): 7.0, (1, 1): 5.0, (1, 0): -1.0}
    assert (first.late, first.tuples, first.bad) == ({0: 4, 1: 3}, 6, (kept + more)[:3])


def test_rows_in_counts_every_row_of_the_batch_marker_rows_included() -> None:
    """docs/production/operating.md, the per-batch line: "rows in" is every row the micro-batch
    brought in - on O+ watermark and end marker rows too, as DGS counts its heartbeat rows."""
    jobs = [oplus_job("sliding-sum", 2, 4, parallelism=2)]
    markers = [(0, 0, None, None, True, 0, {}), (0, 0, None, None, True, 1, {})]
    (ends,) = list(summarize(jobs, {})(iter(markers)))
    assert (ends.rows, ends.tuples) == (2, 0)
    mixed = [(0, 0, 3, None, False, 0, {"key": "a", "value": 1}), (0, 0, None, 9, False, 1, {})]
    (both,) = list(summarize(jobs, {})(iter(mixed)))
    ends.merge(both)
    assert (ends.rows, ends.tuples) == (4, 1)
