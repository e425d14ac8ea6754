"""The live O+ engine's request-log oracle
(:func:`conformance.oplus.engines.live.request_log_problem`) on hand-built request logs: it
accepts exactly a log that keeps every request not applied and the ``KEEP_APPLIED`` newest
applied ones (fewer while fewer were applied), and names the difference otherwise - a log that
dropped an applied request too early (``status().applied`` loses it), or one never compacted
(unbounded storage)."""

from __future__ import annotations

from pathlib import Path

import pytest

from spark_impl.oplus.streaming import KEEP_APPLIED
from spark_impl.oplus.streaming_log import Log

from conformance.oplus.engines.live import request_log_problem


def _log(root: Path, issued: int, dropped: int) -> str:
    """A request log of ``issued`` requests from which the ``dropped`` oldest were removed."""
    log = Log(str(root))
    idents = [log.add_request(0, 2, None) for _ in range(issued)]
    log.drop_requests(idents[:dropped])
    return str(root)


@pytest.mark.parametrize("issued, applied", [(5, 3), (5, 5), (14, 12), (3, 0)])
def test_a_log_that_keeps_the_pending_and_the_newest_applied_requests_holds(tmp_path: Path, issued: int,
                                                                           applied: int) -> None:
    dropped = max(0, applied - KEEP_APPLIED)
    assert request_log_problem(_log(tmp_path, issued, dropped), issued, applied) is None


@pytest.mark.parametrize("issued, applied, dropped", [(5, 3, 1), (5, 3, 2), (14, 12, 12 - KEEP_APPLIED + 1)],
                         ids=["one applied dropped early", "two dropped early", "one fewer than KEEP_APPLIED kept"])
def test_a_log_that_dropped_an_applied_request_too_early_is_named(tmp_path: Path, issued: int, applied: int,
                                                                  dropped: int) -> None:
    found = request_log_problem(_log(tmp_path, issued, dropped), issued, applied)
    assert found is not None and "the query's request log keeps" in found, found


def test_a_log_never_compacted_is_named(tmp_path: Path) -> None:
    found = request_log_problem(_log(tmp_path, 14, 0), 14, 12)
    assert found is not None and f"at most {KEEP_APPLIED}" in found, found
