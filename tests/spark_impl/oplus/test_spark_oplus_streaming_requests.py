"""The live O+ query's rescale requests stay bounded (found by ``streamproof soak --front-end
oplus``: ``requests.json`` and every commit's ``applied`` list grew by one entry per rescale,
the checkpoint 1.55x over 300 batches). No Spark: the commit protocol's request steps
(:func:`settle_requests`, :func:`compact_requests`) on a real checkpoint directory."""

from __future__ import annotations

import math
from typing import Any

import pytest
from spark_impl.oplus import streaming
from spark_impl.oplus.streaming import OplusStreamingRun, compact_requests, settle_requests
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.oplus.streaming_log import Commit, Log


def test_requests_and_applied_stay_bounded_and_no_request_is_applied_twice(tmp_path: Any,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(streaming, "KEEP_APPLIED", 5)
    run = OplusStreamingRun(None, [oplus_job("sliding-sum", 2, 4, parallelism=2)], Log(str(tmp_path)))
    prev = Commit(-1, {0: 2}, {0: 2}, 2, watermark={0: -math.inf})
    issued: list[int] = []
    applied: list[int] = []
    for batch in range(60):
        if batch % 2 == 0:
            issued.append(run.rescale(2 + batch % 3))
        if batch % 7 == 0:  # one waits for a watermark the stream has not reached yet
            issued.append(run.rescale(3, watermark=batch + 3))
        record = Commit(batch, dict(prev.parallelism), dict(prev.parallelism), 2, {},
                        {0: float(batch)}, list(prev.applied), {}, 0, [])
        settle_requests(run, record)
        applied.extend(r["request"] for r in record.rescales)
        run.log.write_commit(record)
        compact_requests(run, record)
        prev = record
        assert len(run.log.requests()) <= 5 + 2 and len(record.applied) <= 5 + 2
    assert issued == sorted(set(issued)), "ids are unique and increasing, also after compaction"
    assert sorted(applied) == sorted(set(applied)), "no request applied twice"
    assert set(applied) == set(issued), "every request applied (the last one at its watermark)"
