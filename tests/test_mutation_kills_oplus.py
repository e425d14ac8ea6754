"""The O+ suite's checks of ``spark_impl/oplus`` promises no differential run sees, shown
without Spark: each test applies a one-line bug (the function recompiled from its source with
one change: ``_mutant``) and shows the suite's check fails on it, and passes on the original."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable

import pytest

import spark_impl.oplus.streaming as streaming
from conformance.oplus.engines.live import request_log_problem
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit, Log
from support.source_rewrite import rewritten_function, rewritten_method

Compact = Callable[[Any, Commit], None]


def _log_after(tmp: Path, compact: Compact, issued: int, applied: list[int]) -> str | None:
    """Issue ``issued`` requests, commit a batch that applied the ids ``applied``, compact with
    ``compact``, then judge the request log as the live O+ check does after every batch."""
    run = streaming.OplusStreamingRun(None, [oplus_job("sliding-sum", 2, 4)], Log(str(tmp)))
    idents = [run.log.add_request(0, 2, None) for _ in range(issued)]
    record = Commit(0, {0: 1}, {0: 2}, 1, applied=[idents[i] for i in applied])
    compact(run, record)
    return request_log_problem(str(tmp), issued, len(applied))


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
    """spark_impl/oplus/streaming.py's compaction, line 259 (a compaction that never runs is
    of the same kind): the live check
    used to accept any log between the pending requests and ``KEEP_APPLIED`` more, so
    dropping applied requests early (``status().applied`` loses them) passed."""
    wrong = rewritten_function(streaming, "compact_requests", "max(0, len(applied) - KEEP_APPLIED)", new)
    found = _log_after(tmp_path, wrong, issued, applied)
    assert found is not None and "the query's request log keeps" in found, found


# --- conformance.oplus.checks.commit and the batch driver's round plans ------------------------


def _commit_problems(tmp: Path) -> list[str]:
    from conformance.oplus.checks.commit import check

    return check(0)


def test_the_commit_bookkeeping_and_the_round_plans_keep_their_definitions(tmp_path: Path) -> None:
    from conformance.oplus.checks.faults import fault_problem

    assert _commit_problems(tmp_path) == [] and fault_problem() is None


def test_round_plans_that_hand_the_next_watermark_as_the_previous_one_are_caught(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """driver.py (``watermark(r - 1)`` ->
    ``watermark(r + 1)``): only ``drop-near-watermark`` reads ``previous``."""
    import spark_impl.oplus.driver as driver
    from conformance.oplus.checks.faults import fault_problem

    monkeypatch.setattr(driver, "round_plans", rewritten_function(driver, "round_plans", "f.watermark(r - 1)",
                                                       "f.watermark(r + 1)"))
    found = fault_problem()
    assert found is not None and "round 0 of scenario 0" in found, found


@pytest.mark.parametrize("cls, name, old, new, words", [
    ("_Handler", "__call__", "* 1000.0", "+ 1000.0", "replayed in 2 s"),     # Mul_Add:1 (line 166)
    ("_Handler", "__call__", "time.perf_counter() - started", "time.perf_counter() % started",
     "replayed in 2 s"),                                                      # Sub_Mod:0 (line 166)
    ("_Handler", "__call__", "len(run.batch_ms) > 1000", "len(run.batch_ms) >= 1000",
     "after 1000 earlier calls"),                                                # Gt_GtE:0 (line 167)
    ("_Handler", "__call__", "len(run.batch_ms) > 1000", "len(run.batch_ms) != 1000",
     "raised StopIteration"),                                                      # Gt_GtE:0 (line 167)
    ("_Handler", "__call__", "batch_id <= last.batch", "batch_id < last.batch",
     "committed batch 5002 raised"),                                             # LtE_Lt:0 (line 159)
    ("_Handler", "__call__", "last is not None and batch_id", "last is not None or batch_id",
     "the first batch of a checkpoint with no commit was not run"),             # AndWithOr:1 (line 159)
    ("_Handler", "__call__", "batch_id <= last.batch", "batch_id is not last.batch",
     "batch 5003 after the commit of 5002 was not run"),                        # LtE_IsNot:3 (line 159)
    ("_Handler", "_apply_requests", "del record.rescales[:-KEEP_RESCALES]", "del record.rescales[:+KEEP_RESCALES]",
     "'rescales'"),                                                              # USub_UAdd (line 212)
    ("_Handler", "_apply_requests", "at < wanted", "at <= wanted", "'parallelism'"),  # Lt_LtE (line 204)
    ("_Handler", "_apply_requests", "del record.rescales[:-KEEP_RESCALES]", "del record.rescales[:-KEEP_RESCALES - 1]",
     "'rescales'"),                                                              # a window of 9, not 8
])
def test_broken_foreach_batch_bookkeeping_is_caught(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, cls: str,
                                                    name: str, old: str, new: str, words: str) -> None:
    import types

    owner = getattr(streaming, cls)
    wrong = rewritten_method(owner, name, old, new)
    if name == "__call__":  # the module's own globals: the check replaces streaming.time by its clock
        wrong = types.FunctionType(wrong.__code__, vars(streaming), name, wrong.__defaults__)
    monkeypatch.setattr(owner, name, wrong)
    problems = _commit_problems(tmp_path)
    assert any(words in p for p in problems), problems


@pytest.mark.parametrize("module, name, old, new, words", [
    ("spark_impl.oplus.streaming", "commit_batch", "prev.late.get(j, 0) + batch.late.get(j, 0)",
     "prev.late.get(j, 0) - batch.late.get(j, 0)", "'late'"),                    # Add_Sub:1 (line 231)
    ("spark_impl.oplus.streaming", "commit_batch", "batch.late.get(j, 0)", "batch.late.get(j, 1)",
     "'late'"),                                                                  # NumberReplacer:28 (line 231)
    ("spark_impl.oplus.streaming", "compact_requests", "len(applied) - KEEP_APPLIED", "len(applied) - KEEP_APPLIED + 1",
     "the request log keeps"),                                                   # 7 applied kept, not 8
    ("spark_impl.oplus.streaming_log", "encode_time", "return None", "return 0", "written as"),
    ("spark_impl.oplus.streaming_sink", "deliver_pending", "batch <= delivered", "batch < delivered",
     "deliver_pending with batches"),                                            # LtE_Lt:0 (line 40)
])
def test_broken_commit_functions_are_caught(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, module: str, name: str,
                                            old: str, new: str, words: str) -> None:
    import importlib

    found = importlib.import_module(module)
    monkeypatch.setattr(found, name, rewritten_function(found, name, old, new))
    problems = _commit_problems(tmp_path)
    assert any(words in p for p in problems), problems


@pytest.mark.parametrize("old, new", [("if b > delivered}", "if b >= delivered}"),
                                      ("batches[-keep:]", "batches[-keep - 1:]"),
                                      ("else b > delivered)", "else b >= delivered)"),
                                      ('if sub == "state"', 'if sub != "state"'),
                                      ("batches else -1", "batches else +1"),         # USub_UAdd:6 (line 208)
                                      ("int(name[1:])", "int(name[2:])"),             # ids above 10**11
                                      ('name.startswith("b") and', 'name.startswith("b") or'),  # AndWithOr:0
                                      ("and name[1:].isdigit()", "and name[2:].isdigit()")])  # NumberReplacer:22
def test_a_broken_prune_is_caught(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, old: str, new: str) -> None:
    import spark_impl.oplus.streaming_log as streaming_log

    monkeypatch.setattr(streaming_log.Log, "prune", rewritten_method(streaming_log.Log, "prune", old, new))
    problems = _commit_problems(tmp_path)
    assert any("prune(keep=" in p for p in problems), problems


@pytest.mark.parametrize("cls, name, old, new, words", [
    ("Log", "delivered", "return -1 if", "return +1 if", "deliver_pending with batches [0, 1]"),  # USub_UAdd:3 (194)
    ("Log", "delivered", "return -1 if", "return -0 if", "deliver_pending with batches [0, 1]"),  # NumberReplacer:8
])
def test_a_fresh_checkpoint_that_skips_its_first_deliveries_is_caught(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                       cls: str, name: str, old: str, new: str,
                                                                       words: str) -> None:
    """The first batch of a log (``streaming.py`` ``Commit(-1, ...)`` changed is itself
    equivalent): a log with no delivery record must deliver batch 0."""
    import spark_impl.oplus.streaming_log as streaming_log

    owner = getattr(streaming_log, cls)
    monkeypatch.setattr(owner, name, rewritten_method(owner, name, old, new))
    problems = _commit_problems(tmp_path)
    assert any(words in p for p in problems), problems


def test_an_infinity_compared_by_identity_is_caught(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """streaming_log.py Eq_Is:0 (line 49): ``float("inf")`` is not ``math.inf``'s object."""
    import spark_impl.oplus.streaming_log as streaming_log

    monkeypatch.setattr(streaming_log, "encode_time", rewritten_function(streaming_log, "encode_time", "if value == math.inf:",
                                                              "if value is math.inf:"))
    problems = _commit_problems(tmp_path)
    assert any("the time inf could not be written" in p for p in problems), problems
