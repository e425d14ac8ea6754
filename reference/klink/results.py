"""What a simulation run reports (Klink §6.2): output latencies, memory samples and the SWM
estimator's forecasts, summarized per policy; and the estimator's accuracy (§6.2.5).

Kept apart from :mod:`reference.klink.simulator` (the mechanics) so the measures can be read
on their own: nearest-rank percentiles, means of empty lists are 0 (the CLI refuses runs that
would measure nothing), accuracy = the share of SWMs ingested inside the Eq. 7 interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spec.klink.estimator import VARIANCE_MIXTURE, SwmForecast, accuracy


@dataclass(frozen=True)
class Forecasted:
    """One SWM: the forecast made when its epoch opened (both variance modes) and the time
    it was actually ingested (for the accuracy of §6.2.5)."""

    mean: float
    sd_mixture: float
    sd_eq6: float
    actual: float


@dataclass
class PolicyResult:
    """What one policy achieved on the workload."""

    name: str
    latencies: list[float]
    after_swm: list[float]
    censored: int
    memory_samples: list[float]
    memory_mode_decisions: int
    decisions: int

    def summary(self) -> dict[str, float | int]:
        """Output latency (s): mean, p50, p99, max, and the part after the SWM's ingestion
        (what scheduling controls); windows measured and censored; memory (events): mean,
        p99, peak; the share of decisions made by the memory policy."""
        lat = sorted(self.latencies)
        mem = sorted(self.memory_samples)
        sched = sorted(self.after_swm)
        return {
            "mean": _mean(lat),
            "p50": percentile(lat, 50),
            "p99": percentile(lat, 99),
            "max": lat[-1] if lat else 0.0,
            "after_swm_mean": _mean(sched),
            "after_swm_p99": percentile(sched, 99),
            "windows": len(lat),
            "censored": self.censored,
            "memory_mean": _mean(mem),
            "memory_p99": percentile(mem, 99),
            "memory_peak": mem[-1] if mem else 0.0,
            "memory_mode_share": self.memory_mode_decisions / self.decisions if self.decisions else 0.0,
        }


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else 0.0


def percentile(sorted_values: list[float], p: float) -> float:
    """Nearest-rank percentile of an ascending list (0 for an empty one)."""
    if not sorted_values:
        return 0.0
    rank = max(1, math.ceil(p / 100.0 * len(sorted_values)))
    return sorted_values[rank - 1]


def estimator_accuracy(forecasts: list[Forecasted], f: float, mode: str) -> float:
    """§6.2.5: the fraction of SWMs ingested inside the Eq. 7 interval of confidence ``f``
    (:func:`spec.klink.estimator.accuracy` with ``mode``'s standard deviation; 0 if there
    were no SWMs)."""
    if not forecasts:
        return 0.0
    chosen = [SwmForecast(fc.mean, fc.sd_mixture if mode == VARIANCE_MIXTURE else fc.sd_eq6)
              for fc in forecasts]
    return accuracy(chosen, [fc.actual for fc in forecasts], f)
