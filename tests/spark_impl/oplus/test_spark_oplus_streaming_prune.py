"""The O+ live log's garbage collection (``spark_impl.oplus.streaming_log.Log.prune``), on a
local path, ``file://`` and S3 (moto on 127.0.0.1, the objstore tests' fixtures).

Names two one-line bugs that no differential run sees:
``b > delivered`` -> ``b is not delivered`` in the kept commits (every undelivered-or-not
commit kept: storage grows without bound) and ``b > delivered`` -> ``b < delivered`` for the
output parts (undelivered outputs deleted, so a crash between a batch's commit and its
delivery would lose them). No Spark: the rule only looks at object names.
"""

from __future__ import annotations

import sys

from spark_impl.oplus.streaming_log import Commit, Log, write_part

from support.paths import TESTS
sys.path.insert(0, str(TESTS))


def _log_with_batches(location: str, batches: range, delivered: int) -> Log:
    log = Log(location)
    for b in batches:
        log.write_commit(Commit(b, {0: 1}, {0: 1}, 1))
        write_part(log.location, "state", b, 0, [(0, {"k": b})])
        write_part(log.location, "out", b, 0, [(0, b, "k", b)])
    log.mark_delivered(delivered)
    return log


def _present(log: Log, sub: str) -> list[int]:
    return sorted(int(n[1:]) for n in log.store.list(sub) if n.startswith("b"))


def test_prune_keeps_the_last_commits_and_everything_not_delivered_and_nothing_else(location: str) -> None:
    log = _log_with_batches(location, range(6), delivered=2)
    log.prune(keep=2)
    # commits: the last two (4, 5) plus every batch after the delivered one (3, 4, 5)
    assert log.committed() == [3, 4, 5]
    # outputs: exactly the undelivered batches, the ones a restart must deliver again
    assert _present(log, "out") == [3, 4, 5]
    # states: the kept commits' states
    assert _present(log, "state") == [3, 4, 5]


def test_prune_with_everything_delivered_keeps_only_the_restart_base(location: str) -> None:
    log = _log_with_batches(location, range(5), delivered=4)
    log.prune(keep=1)
    assert log.committed() == [4]
    assert _present(log, "out") == []
    assert _present(log, "state") == [4]
    assert log.latest() == Commit(4, {0: 1}, {0: 1}, 1) and log.delivered() == 4
    assert len(log.deliveries.sequences()) == 1  # one delivery record so far (two are kept)
