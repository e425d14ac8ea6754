"""The O+ live log's garbage collection (``spark_impl.oplus.streaming_log.Log.prune``).

Kills two mutants the default suite left alive (docs/conformance.md, "Session 4, last check"):
``b > delivered`` -> ``b is not delivered`` in the kept commits (every undelivered-or-not
commit kept: storage grows without bound) and ``b > delivered`` -> ``b < delivered`` for the
output directories (undelivered outputs deleted, so a crash between a batch's commit and its
delivery would lose them). No Spark: the rule only looks at directory and file names.
"""

from __future__ import annotations

import os
from pathlib import Path

from spark_impl.oplus.streaming_log import Log


def _log_with_batches(tmp_path: Path, batches: range, delivered: int) -> Log:
    log = Log(str(tmp_path))
    for b in batches:
        Path(log._commit_path(b)).write_text("{}", encoding="utf-8")
        os.makedirs(log.state_dir(b))
        os.makedirs(log.out_dir(b))
    log.mark_delivered(delivered)
    return log


def _present(log: Log, sub: str) -> list[int]:
    return sorted(int(n[1:]) for n in os.listdir(os.path.join(log.root, sub)) if n.startswith("b"))


def test_prune_keeps_the_last_commits_and_everything_not_delivered_and_nothing_else(tmp_path: Path) -> None:
    log = _log_with_batches(tmp_path, range(6), delivered=2)
    log.prune(keep=2)
    # commits: the last two (4, 5) plus every batch after the delivered one (3, 4, 5)
    assert log.committed() == [3, 4, 5]
    # outputs: exactly the undelivered batches, the ones a restart must deliver again
    assert _present(log, "out") == [3, 4, 5]
    # states: the kept commits' states
    assert _present(log, "state") == [3, 4, 5]


def test_prune_with_everything_delivered_keeps_only_the_restart_base(tmp_path: Path) -> None:
    log = _log_with_batches(tmp_path, range(5), delivered=4)
    log.prune(keep=1)
    assert log.committed() == [4]
    assert _present(log, "out") == []
    assert _present(log, "state") == [4]
