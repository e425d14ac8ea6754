"""The SWM-ingestion estimator and the expected slack in O(1) per update (Klink Eq. 2-10,
Alg. 1), equal to ``spec.klink.estimator`` up to floating-point rounding.

:class:`SwmEstimator` follows one input stream: :meth:`observe` adds the delays of ingested
events to the open epoch, :meth:`close_epoch` (called at each SWM ingestion) turns them into
``(mu_n, chi_n)`` (Eq. 3, 4) and keeps the last ``h`` of them with running sums, so the
forecast of Eq. 5/6 costs O(1) instead of the O(h^2) double sum of the literal Eq. 6.
:func:`expected_slack` evaluates Eq. 8 with one normal CDF per slot (each slot's upper bound
is the next slot's lower bound).
"""

from __future__ import annotations

import math
from collections import deque
from functools import lru_cache

from spec.errors import InputError
from spec.klink.estimator import (
    TAIL_EPSILON,
    VARIANCE_EQ6,
    VARIANCE_MIXTURE,
    VARIANCE_MODES,
    SwmForecast,
    z_value,
)

_SQRT2 = math.sqrt(2.0)


class SwmEstimator:
    """Per-epoch delay statistics of one input stream over a history of ``h`` epochs."""

    def __init__(self, h: int, mode: str = VARIANCE_MIXTURE) -> None:
        if h < 1:
            raise InputError(f"history h must be >= 1, got {h}", "h")
        if mode not in VARIANCE_MODES:
            raise InputError(f"unknown variance mode {mode!r} (expected one of {VARIANCE_MODES})")
        self.h = h
        self.mode = mode
        self._epochs: deque[tuple[float, float]] = deque()
        self._sum_mu = 0.0
        self._sum_chi = 0.0
        self._sum_mu2 = 0.0
        self._open_weight = 0.0
        self._open_sum = 0.0
        self._open_sq = 0.0

    @property
    def closed_epochs(self) -> int:
        """How many closed epochs the history holds (at most ``h``)."""
        return len(self._epochs)

    def observe(self, delay: float, weight: float = 1.0) -> None:
        """``weight`` events of the open epoch were ingested ``delay`` after generation."""
        self._open_weight += weight
        self._open_sum += weight * delay
        self._open_sq += weight * delay * delay

    def close_epoch(self) -> None:
        """Eq. 3, 4: close the open epoch (a no-op if it saw no event) and slide the history."""
        if self._open_weight <= 0:
            return
        mu = self._open_sum / self._open_weight
        chi = self._open_sq / self._open_weight
        self._open_weight = self._open_sum = self._open_sq = 0.0
        self._epochs.append((mu, chi))
        self._sum_mu += mu
        self._sum_chi += chi
        self._sum_mu2 += mu * mu
        if len(self._epochs) > self.h:
            old_mu, old_chi = self._epochs.popleft()
            self._sum_mu -= old_mu
            self._sum_chi -= old_chi
            self._sum_mu2 -= old_mu * old_mu

    def forecast(self, generated_at: float, mode: str | None = None) -> SwmForecast | None:
        """Eq. 5/6 for the SWM generated at ``generated_at`` with the estimator's variance
        mode (or ``mode``); ``None`` before any closed epoch."""
        m = len(self._epochs)
        if m == 0:
            return None
        mu = self._sum_mu / m
        if (mode or self.mode) == VARIANCE_EQ6:
            variance = (self._sum_chi - self._sum_mu2) / (m * m)
        else:
            variance = self._sum_chi / m - mu * mu
        return SwmForecast(mean=generated_at + mu, sd=math.sqrt(max(variance, 0.0)))


@lru_cache(maxsize=64)
def _z(f: float) -> float:
    return z_value(f)


def expected_slack(fc: SwmForecast, now: float, cost: float, f: float, r: float) -> float:
    """Eq. 8 / Alg. 1 ComputeExpectedSlack (same degenerate cases as the spec)."""
    sd = fc.sd
    mean = fc.mean
    if sd == 0:
        return (mean - now) - cost if mean >= now else -cost
    scale = sd * _SQRT2
    erf = math.erf
    tail = 0.5 * math.erfc((now - mean) / scale)
    if tail < TAIL_EPSILON:
        return -cost
    half = _z(f) * sd
    start = max(now, mean - half)
    high = mean + half
    if start > high:
        return -cost
    weighted = 0.0
    mass = 0.0
    lower = erf((start - mean) / scale)
    i = 0
    while start + i * r <= high:
        x = start + i * r
        upper = erf((x + r - mean) / scale)
        p = upper - lower
        if p > 0:
            weighted += p * (x + r - now)
            mass += p
        lower = upper
        i += 1
    # Phi(b) - Phi(a) = (erf(b') - erf(a')) / 2; divide by P(w >= t) once at the end.
    return (weighted - cost * mass) * 0.5 / tail
