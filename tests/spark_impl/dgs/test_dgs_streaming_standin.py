"""The live DGS front end (``spark_impl/dgs/streaming.py``) with its defaults, run batch by
batch on the pure-Python Spark stand-in (:mod:`support.dgs_standin_query`: eight drawn cases
as the jobs of one query, re-plans, inlining bounds up to 50, ``stop()`` and a restart).

The promises held, each from a docstring:

* retention (``spark_impl/dgs/streaming_store.py``): "after a delivery every states prefix
  but the committed one is deleted, and the records of delivered batches unless
  ``keep_records``" (``keep_records`` defaults to False);
* inlining (``LiveJob``: "``inline_below`` is the executor's runtime optimization";
  ``inline_short_segments``: "Such events appear in the trace as processed by ``w``");
* bookkeeping (``DgsStreamingRun``): "``batches``: batch ids this process computed;
  ``replayed``: batch ids it found already committed; ``replanned``: ``(batch, job)`` of the
  re-plans applied; ``batch_ms``: batch id -> wall time of its ``foreachBatch`` call";
* stop (``DgsStreamingRun.stop``: "Stop at a batch boundary ...: the checkpoint stays;
  ``start_dgs_query`` on it resumes"; ``StreamStopped``: "Raised by a batch that starts after
  ``StreamingRun.stop``");
* every batch is committed and its delivery recorded, reaches the sink once, and the run
  equals ``spec(sort(u))`` (DGS Thm 3.5) judged from the sink by the DGS suite's oracles.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from spec.dgs.streams import value_from_json

from conformance.dgs.engines.replan import judged_processed
from conformance.dgs.oracles import judge
from support.dgs_standin_query import QueryRun, query_cases, run_query


@pytest.fixture(scope="module")
def query(tmp_path_factory: pytest.TempPathFactory) -> QueryRun:
    """The query of the module docstring, run once for every test here."""
    root: Path = tmp_path_factory.mktemp("dgs-live-standin")
    return run_query(query_cases(), str(root))


def test_the_query_re_plans_inlines_and_restarts(query: QueryRun) -> None:
    """The promises below are exercised: five batches (the last after ``stop()``), events
    inlined, re-plans applied by both queries."""
    assert len(query.batches) == 5 and query.inlined > 0
    assert query.batches[-2].replanned and query.batches[-1].replanned and query.batches[-1].restarted


def test_keep_records_defaults_to_false(query: QueryRun) -> None:
    assert query.keep_records is False


@pytest.mark.parametrize("index", range(5))
def test_every_batch_commits_and_records_its_delivery(query: QueryRun, index: int) -> None:
    seen = query.batches[index]
    assert seen.committed == (seen.number, seen.number)


@pytest.mark.parametrize("index", range(5))
def test_a_delivery_keeps_only_the_committed_states_and_deletes_delivered_records(query: QueryRun,
                                                                                  index: int) -> None:
    seen = query.batches[index]
    assert seen.listed == ([seen.states], [])


@pytest.mark.parametrize("index", range(5))
def test_the_records_name_the_worker_inlining_gives_each_event(query: QueryRun, index: int) -> None:
    seen = query.batches[index]
    assert seen.named == seen.expected


@pytest.mark.parametrize("index", range(5))
def test_the_run_lists_the_batches_it_computed_and_the_re_plans_it_applied(query: QueryRun, index: int) -> None:
    seen = query.batches[index]
    assert seen.bookkeeping == (seen.computed, [], seen.replanned, seen.computed)


def test_a_batch_after_stop_is_refused_and_leaves_the_commit_as_it_was(query: QueryRun) -> None:
    stop = query.stop
    assert stop.query_stopped and stop.refused and stop.after == stop.before


def test_a_query_started_on_the_stopped_checkpoint_computes_the_refused_batch(query: QueryRun) -> None:
    last = query.batches[-1]
    assert last.restarted and last.bookkeeping[0] == [last.number] and last.committed == (last.number, last.number)


def test_every_batch_reaches_the_sink_once(query: QueryRun) -> None:
    assert query.watch.collected.repeated(set()) is None


@pytest.mark.parametrize("job", range(8))
def test_each_job_equals_the_sequential_program_read_from_the_sink(query: QueryRun, job: int) -> None:
    case = query.cases[job]
    outputs = [value_from_json(json.loads(text)) for rows in query.watch.collected.batches.values()
               for j, text in rows if j == job]
    processed = sorted((value for batch in sorted(query.watch.processed) for j, value in query.watch.processed[batch]
                        if j == job), key=lambda entry: entry[1])
    assert judge(case, (outputs, query.final_states[job], judged_processed(case, query.replans[job], processed))) == []
