"""``OplusStreamingRun.late()`` (``spark_impl.oplus.streaming``): "every job id of the query is
present, with 0 before any commit (a query that failed before its first commit too)", the same
shape as after commits. On the live query over the Spark stand-in
(``support.oplus_live_standin``).
"""

from __future__ import annotations

from typing import Any

import pytest

from spec.errors import InputError

from spark_impl.oplus.streaming_jobs import oplus_job

from support.oplus_live_standin import start_local


def _jobs() -> list[Any]:
    return [oplus_job("sliding-sum", 5, 10), oplus_job("sliding-sum", 10, 10)]


def test_late_has_every_job_with_0_before_any_commit_and_after_a_failed_first_batch(tmp_path: Any) -> None:
    live = start_local(_jobs(), str(tmp_path / "ckpt"), late_policy="drop")
    assert live.run.late() == {0: 0, 1: 0}
    with pytest.raises(InputError):
        live.batch(0, [{"ts": 1, "job": 7, "key": 1, "value": 1}])  # no job 7: the batch fails, nothing commits
    assert live.run.log.committed() == [] and live.run.late() == {0: 0, 1: 0}


def test_late_has_every_job_after_commits_counting_each_jobs_late_tuples(tmp_path: Any) -> None:
    live = start_local(_jobs(), str(tmp_path / "ckpt"), late_policy="drop")
    live.batch(0, [{"ts": 30, "job": 0, "key": 1, "value": 1}])
    live.batch(1, [{"ts": 3, "job": 0, "key": 1, "value": 1}])
    assert live.run.late() == {0: 1, 1: 0}
