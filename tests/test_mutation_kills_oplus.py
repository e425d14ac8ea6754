"""The O+ suite's checks added for mutants of ``spark_impl/oplus`` (issue 12, session 6), shown
without Spark: each test applies a mutant (the function recompiled from its source with one
change, as cosmic-ray would write it: ``_mutant``) and shows the suite's check fails on it, and
passes on the original. Ids are benchmarks/mutation.py's (``module:operator:occurrence``) at
d4dcd99."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

from test_conformance_dgs_oplus_order import _mutant

import spark_impl.oplus.streaming as streaming
from conformance.oplus_streaming import _request_log_problem
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit, Log

Compact = Callable[[Any, Commit], None]


def _log_after(tmp: Path, compact: Compact, issued: int, applied: list[int]) -> str | None:
    """Issue ``issued`` requests, commit a batch that applied the ids ``applied``, compact with
    ``compact``, then judge the request log as the live O+ check does after every batch."""
    run = streaming.OplusStreamingRun(None, [oplus_job("sliding-sum", 2, 4)], Log(str(tmp)))
    idents = [run.log.add_request(0, 2, None) for _ in range(issued)]
    record = Commit(0, {0: 1}, {0: 2}, 1, applied=[idents[i] for i in applied])
    compact(run, record)
    return _request_log_problem(str(tmp), issued, len(applied))


@pytest.mark.parametrize("issued, applied", [(5, [0, 1, 2]), (5, [0, 1, 2, 3, 4]), (14, list(range(12))),
                                             (14, list(range(2, 14)))])
def test_the_original_compaction_keeps_what_the_live_check_expects(tmp_path: Path, issued: int,
                                                                   applied: list[int]) -> None:
    assert _log_after(tmp_path, streaming.compact_requests, issued, applied) is None


@pytest.mark.parametrize("new, issued, applied", [
    ("max(1, len(applied) - KEEP_APPLIED)", 5, [0, 1, 2]),   # NumberReplacer:30: one applied dropped early
    ("max(-1, len(applied) - KEEP_APPLIED)", 5, [0, 1, 2]),  # NumberReplacer:31: all but the newest applied
    ("max(0, len(applied) + KEEP_APPLIED)", 14, list(range(12))),  # Sub_Add:1: every applied one dropped
    ("max(0, len(applied) // KEEP_APPLIED)", 14, list(range(12))),  # Sub_FloorDiv:1: 1 dropped, 11 kept
    ("max(0, len(applied) >> KEEP_APPLIED)", 14, list(range(12))),  # Sub_RShift:1: none dropped (unbounded)
])
def test_a_compaction_that_drops_too_many_or_too_few_applied_requests_is_caught(
        tmp_path: Path, new: str, issued: int, applied: list[int]) -> None:
    """Kills spark_impl/oplus/streaming.py's compaction mutants on line 259 (session 5's
    survivor #4 at 1f19446, a compaction that never ran, had the same kind): the live check
    used to accept any log between the pending requests and ``KEEP_APPLIED`` more, so
    dropping applied requests early (``status().applied`` loses them) passed."""
    wrong = _mutant(streaming, "compact_requests", "max(0, len(applied) - KEEP_APPLIED)", new)
    found = _log_after(tmp_path, wrong, issued, applied)
    assert found is not None and "the query's request log keeps" in found, found
