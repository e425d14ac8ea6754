"""The live DGS front end run with its defaults on a pure-Python Spark
(:mod:`conformance.dgs.checks.live_standin`): the check holds on ``spark_impl/dgs/streaming.py``, and
names each one-line bug of its retention, inlining, bookkeeping and ``stop()`` that the Spark runs
(``keep_records=True``, idle stops) and the contracts check (``Store.prune`` and ``run.stopping``
called directly) leave unseen."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from conformance.dgs.checks import live_standin as dgs_live_local_check
from spark_impl.dgs import streaming

RUN = streaming.DgsStreamingRun


def test_the_check_passes_on_the_front_end() -> None:
    assert dgs_live_local_check.dgs_live_local_problem() is None


def test_the_check_exercises_re_plans_inlining_and_a_restart(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its cases re-plan in both queries and inline events (else parts of it test nothing)."""
    seen: list[tuple[int, list[tuple[int, int]]]] = []
    original = dgs_live_local_check._bookkeeping_problem  # noqa: SLF001 - spied on

    def spy(run: Any, computed: list[int], replanned: list[tuple[int, int]], when: str) -> str | None:
        seen.append((len(computed), list(run.replanned)))
        return original(run, computed, replanned, when)

    monkeypatch.setattr(dgs_live_local_check, "_bookkeeping_problem", spy)
    assert dgs_live_local_check.dgs_live_local_problem() is None
    assert [n for n, _ in seen] == [1, 2, 3, 4, 1]  # four batches, stop(), one batch of a new query
    assert seen[3][1] and seen[4][1]  # re-plans applied by the first query and by the restarted one


def test_cases_that_inline_nothing_are_reported(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = dgs_live_local_check._cases()  # noqa: SLF001
    monkeypatch.setattr(dgs_live_local_check, "_cases", lambda: [replace(c, inline_below=0) for c in cases])
    found = dgs_live_local_check.dgs_live_local_problem()
    assert found is not None and "inline no event" in found, found


@pytest.mark.parametrize("name, old, new, words", [
    # streaming.py:268: a delivery that keeps every record (or prunes nothing): the checkpoint grows without bound
    ("deliver", "self.store.prune(self.committed(), self.keep_records)", "self.store.prune(self.committed(), True)",
     "after batch 0 (keep_records=False) the checkpoint keeps states ['b000000000000'] and records ['b000000000000']"),
    ("deliver", "self.store.prune(self.committed(), self.keep_records)", "pass",
     "the checkpoint keeps states ['b000000000000', 'init'] and records ['b000000000000']"),
    # streaming.py:220: inlining silently off (the judge accepts a leaf as well as an ancestor)
    ("_batch", "self.jobs[j].inline_below)", "0)",
     "batch 1, job 5 (inline_below 3): the records name (key, worker) ((1, 's2'), 'rw4') where "
     "inline_short_segments(steps_of(receive(...))) gives ((1, 's2'), 'rw2')"),
    # streaming.py:234: the batches computed
    ("_batch", "_keep_last(self.batches, batch_id)", "pass", "after batch 0: the run lists batches [],"),
    ("_batch", "_keep_last(self.batches, batch_id)", "_keep_last(self.batches, batch_id - 1)",
     "after batch 0: the run lists batches [-1],"),
    # streaming.py:213: the re-plans applied
    ("_batch", "_keep_last(self.replanned, (batch_id, j))", "pass",
     "after batch 1: the run lists batches [0, 1], replayed [], replanned [],"),
    ("_batch", "_keep_last(self.replanned, (batch_id, j))", "_keep_last(self.replanned, (j, batch_id))",
     "replanned [(0, 1), (5, 1)], batch_ms keys [0, 1]; it computed batches [0, 1] and applied the re-plans "
     "(batch, job) [(1, 0), (1, 5)]"),
    ("_batch", "_keep_last(self.replanned, (batch_id, j))", "_keep_last(self.replanned, (batch_id - 1, j))",
     "replanned [(0, 0), (0, 5)]"),
    # streaming.py:136: stop() that never refuses the next batch
    ("stop", "self.stopping.set()", "pass",
     "batch 4 started after DgsStreamingRun.stop() and its foreachBatch call returned"),
])
def test_a_one_line_bug_of_the_front_end_is_named(monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str,
                                                  words: str) -> None:
    from support.source_rewrite import rewritten_method

    monkeypatch.setattr(RUN, name, rewritten_method(RUN, name, old, new))
    found = dgs_live_local_check.dgs_live_local_problem()
    assert found is not None and words in found, found


def test_a_batch_whose_outputs_never_reach_the_sink_is_judged(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run is judged from the sink: a delivery that loses the outputs fails ``outputs``."""
    from spark_impl.dgs import streaming_sink
    from support.source_rewrite import rewritten_function

    monkeypatch.setattr(streaming_sink, "_rows", rewritten_function(streaming_sink, "_rows", "if kind == \"out\":",
                                                         "if kind == \"lost\":"))
    found = dgs_live_local_check.dgs_live_local_problem()
    assert found is not None and "failed outputs" in found, found
