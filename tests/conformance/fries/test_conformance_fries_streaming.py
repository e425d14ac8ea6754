"""The Structured Streaming front end's stop, sink/retention, settle and bookkeeping promises,
without Spark (:mod:`conformance.fries.checks.live`): the check holds on the front end, and
names each one-line bug of ``spark_impl/reconfig/streaming.py`` that no other check saw."""

from __future__ import annotations

import time
import types
from typing import Any

import pytest

from conformance.fries.checks import live as fries_streaming_check
from spark_impl.reconfig import streaming


def _rebound(fn: Any) -> Any:
    """``fn`` (a changed function compiled in a copy of streaming's globals) running in streaming's own
    globals, so the check's stand-in clock (``streaming.time``) reaches it as the original."""
    bound = types.FunctionType(fn.__code__, vars(streaming), fn.__name__, fn.__defaults__, fn.__closure__)
    bound.__kwdefaults__ = fn.__kwdefaults__
    return bound


def test_the_streaming_check_passes_on_the_front_end() -> None:
    assert fries_streaming_check.streaming_problem() is None
    assert getattr(streaming, "time") is time  # the stand-in clock is put back


HANDLER = streaming._BatchHandler  # noqa: SLF001 - the foreachBatch function under test


@pytest.mark.parametrize("owner, name, old, new, words", [
    # 1. a batch that starts after stop() returns instead of raising: Structured Streaming commits it, data lost
    (HANDLER, "__call__",
     'raise StreamStopped(f"batch {batch_id} started after stop(); it is replayed after a restart")', "return",
     "started after StreamingRun.stop(), and its foreachBatch handler returned normally"),
    # 2. start_query drops the sink / the retention it was given
    (None, "start_query", "resume=resume, sink=sink, retention=retention)", "resume=resume, retention=retention)",
     "the sink passed to start_query got 0 deliveries"),
    (None, "start_query", "resume=resume, sink=sink, retention=retention)", "resume=resume, sink=sink)",
     "job 0's committed history still lists batches [1, 2, 3]"),
    # 3. the settle logic
    (HANDLER, "_drive", "settle >= self.settle_steps", "settle > self.settle_steps",
     "batch 1 (3 new tuples, a request in progress, its FCMs held) ran 6 executor batches"),
    (HANDLER, "_drive", "if not run.in_progress() or settle", "if not run.in_progress() and settle",
     "batch 0 (3 new tuples, no request) ran 5 executor batches"),
    (None, "start_query", "settle_steps: int = 4", "settle_steps: int = 0",
     "batch 1 (3 new tuples, a request in progress, its FCMs held) ran 1 executor batches [2], expected exactly 5"),
    # 4. the bookkeeping: batch_ms, batches, the last REMEMBERED
    (HANDLER, "__call__", "time.perf_counter() - started", "time.time() - started",
     "StreamingRun.batch_ms[0] = 1699999950250.0, but its foreachBatch call took 250.0 ms"),
    (HANDLER, "__call__", "* 1000.0", "/ 1000.0",
     "StreamingRun.batch_ms[0] = 0.00025, but its foreachBatch call took 250.0 ms"),
    (HANDLER, "_drive", "ran.append(ex.g)", "ran.append(ex.g - 1)",
     "StreamingRun.batches[0] = [0], but the executor batches run for Structured Streaming batch 0 were [1]"),
    (None, "_remember", "while len(table) > REMEMBERED", "while len(table) >= REMEMBERED",
     "StreamingRun.batches keeps 999 batches (1..999); it keeps the last REMEMBERED (1000): 0..999"),
])
def test_a_one_line_bug_of_the_front_end_is_named(monkeypatch: pytest.MonkeyPatch, owner: type | None, name: str,
                                                  old: str, new: str, words: str) -> None:
    from support.source_rewrite import rewritten_function
    from support.source_rewrite import rewritten_method

    if owner is None:
        monkeypatch.setattr(streaming, name, _rebound(rewritten_function(streaming, name, old, new)))
    else:
        monkeypatch.setattr(owner, name, _rebound(rewritten_method(owner, name, old, new)))
    found = fries_streaming_check.streaming_problem()
    assert found is not None and words in found, found
    assert getattr(streaming, "time") is time
