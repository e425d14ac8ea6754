"""The DGS cases' arrival model keeps its documented bounds (``spark_impl.dgs.release.Arrival``,
checked by ``conformance.dgs.checks.release.arrival_problem``): per stream, arrivals are FIFO,
never before the item exists, and within ``max_delay + max_jitter`` of the item's timestamp.
Outputs stay correct under any arrival order, so no output oracle sees an arrival model that
stopped exercising the delays the cases claim; the arrival check does, on hand-built bad
models. Spark-free."""

from __future__ import annotations

import math
import random
from typing import Any

import pytest

from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.checks.release import arrival_problem
from spark_impl.dgs import release


def test_dgs_arrival_model_keeps_fifo_and_its_delay_bound(monkeypatch: pytest.MonkeyPatch) -> None:
    cases = [c for c in draw_dgs_cases(40, 0) if c.max_jitter and c.streams]
    assert cases and all(arrival_problem(c) is None for c in cases)

    def shifted(self: Any, streams: Any) -> dict[str, list[float]]:  # arrivals far beyond the bound
        rng = random.Random(self.seed)
        out: dict[str, list[float]] = {}
        for stream in sorted(streams):
            delay, last, times = self.delays.get(stream, rng.randint(0, self.max_delay)), -math.inf, []
            for item in streams[stream]:
                last = max(last, float(item.ts + delay << rng.randint(0, self.max_jitter)))
                times.append(last)
            out[stream] = times
        return out

    monkeypatch.setattr(release.Arrival, "times", shifted)
    assert any(arrival_problem(c) is not None for c in cases)
    monkeypatch.setattr(release.Arrival, "times", lambda self, streams: {s: [0.0] * len(v) for s, v in streams.items()})
    assert any("arrives at 0.0" in (arrival_problem(c) or "") for c in cases)  # before the item exists
