"""The Structured Streaming baseline of ``streamproof bench throughput|latency``
(spark_impl/workloads/structured.py) does the benchmark's work: every event is processed once
by Expensive and once by Tally, whose final running sum per key is the sum of that key's
values, in one micro-batch per ``batch_size`` events."""

from __future__ import annotations

from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import pytest

from spark_impl.workloads.backlog import event
from spark_impl.workloads.structured import structured_run

pytestmark = [pytest.mark.spark, pytest.mark.slow]  # a TWS query: ~1 min, and under heavy load
# its Python workers can miss Spark's fixed 10 s connect-back timeout


def test_structured_baseline_computes_the_workload(spark: Any, tmp_path: Path) -> None:
    events, batch = 60, 20
    batches = structured_run(spark, events, cost_ms=0.0, batch_size=batch,
                             directory=str(tmp_path))
    assert batches == events // batch
    rows = spark.read.parquet(str(tmp_path / "out")).collect()
    expected_total: dict[int, int] = defaultdict(int)
    expected_count: Counter[int] = Counter()
    for key, value in map(event, range(events)):
        expected_total[key] += value
        expected_count[key] += 1
    assert Counter(r["key"] for r in rows) == expected_count
    final = {key: max(r["value"] for r in rows if r["key"] == key) for key in expected_count}
    assert final == dict(expected_total)
