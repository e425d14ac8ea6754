"""The SWM-ingestion estimator and the expected slack (Klink Eq. 2-10, Alg. 1), literally.

Per epoch ``n`` of a query (see :mod:`spec.klink.watermarks`) Klink collects the set
``D_n`` of network delays (ingestion time minus generation time) of the events ingested in
that epoch. When the epoch closes:

* Eq. 3: ``mu_n = mean(D_n)``;  Eq. 4: ``chi_n = mean(d^2 for d in D_n)``.

While epoch ``n`` is open, Alg. 1 (line 2) averages the last ``h`` closed epochs:
``mu = mean(mu_i)``, ``chi = mean(chi_i)`` over ``m = min(h, closed)`` epochs.

Eq. 2/5: ``E[w_{n+1}] = mu + p``, measured from the previous SWM's generation (whose successor
is generated one SWM period ``p`` later); we write it ``generated_at + mu`` with
``generated_at`` the generation time of the next SWM.

Eq. 6 (``VARIANCE_EQ6``) is the variance of the *average* of ``m`` independent epoch delays,
``(1/m) [chi + (1/m) sum_{i != j} mu_i mu_j] - mu^2``, which equals
``(1/m^2) sum_i (chi_i - mu_i^2)``. It shrinks like ``1/m``, but the next SWM's delay is one
draw, not an average, so intervals from Eq. 6 are far too narrow. We therefore also define
``VARIANCE_MIXTURE``, the variance of one delay drawn from the last ``m`` epochs:
``chi - mu^2``. Interpretation choice: the reference scheduler uses the mixture variance by
default; the benchmark reports the accuracy of both (docs/klink.md).

Eq. 7: the interval ``[t_min, t_max]`` holding ``w_{n+1}`` with probability ``f`` is
``E +- z sigma`` with ``z = Phi^{-1}((1 + f) / 2)`` (Alg. 1 hard-codes ``2 sigma`` for
``f >= 95%``).

Eq. 10: ``P(x <= w <= x + r) = Phi((x + r - E)/sigma) - Phi((x - E)/sigma)`` (the paper writes
the Q-function of ``(E - x)/Var``; dividing by the variance instead of ``sigma`` is a typo).

Eq. 9: conditioned on the SWM not having arrived by ``t``:
``P(x <= w <= x + r | t) = P(x <= w <= x + r) / P(w >= t)`` for slots with ``x >= t`` and 0
before (the paper's ``x <= t`` contradicts Alg. 1, which starts at ``x = max(t, t_min)``).

Eq. 8 / Alg. 1 ComputeExpectedSlack: ``sl(t) = sum_x P(x <= w <= x + r | t) *
((x + r - t) - cost)`` over ``x = max(t, t_min) + i r <= t_max``.

Interpretation choices for the degenerate cases: with ``sigma = 0`` the SWM time is certain
and the slack is Eq. 1 itself; when ``t`` is past ``t_max`` (or ``P(w >= t)`` vanishes) the
SWM is overdue, ``w`` is taken to be ``t`` and the slack is ``-cost``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist
from typing import Sequence

from spec.errors import InputError

VARIANCE_EQ6 = "eq6"
VARIANCE_MIXTURE = "mixture"
VARIANCE_MODES = (VARIANCE_EQ6, VARIANCE_MIXTURE)

_STANDARD = NormalDist()
#: Below this, P(w >= t) is treated as 0 (the SWM is overdue).
TAIL_EPSILON = 1e-12


@dataclass(frozen=True)
class EpochMoments:
    """``(mu_n, chi_n)`` of one closed epoch (Klink Eq. 3, 4)."""

    mu: float
    chi: float


def epoch_moments(delays: Sequence[float]) -> EpochMoments:
    """Eq. 3 and 4 for a closed epoch: the mean delay and the mean squared delay of ``D_n``."""
    if not delays:
        raise InputError("an epoch needs at least one delay", "delays")
    return EpochMoments(
        mu=sum(delays) / len(delays), chi=sum(d * d for d in delays) / len(delays)
    )


def window_of(history: Sequence[EpochMoments], h: int) -> Sequence[EpochMoments]:
    """The last ``h`` closed epochs (Alg. 1 line 2)."""
    if h < 1:
        raise InputError(f"history h must be >= 1, got {h}", "h")
    return history[-h:]


def delay_mean(history: Sequence[EpochMoments], h: int) -> float:
    """``mu_n`` of Alg. 1 line 2: the mean of ``mu_i`` over the last ``h`` epochs."""
    recent = window_of(history, h)
    if not recent:
        raise InputError("no closed epoch yet", "history")
    return sum(e.mu for e in recent) / len(recent)


def delay_variance(history: Sequence[EpochMoments], h: int, mode: str) -> float:
    """``Var[w_{n+1}]``: Eq. 6 literally (``mode="eq6"``, with its double sum over
    ``i != j``) or the mixture variance ``chi - mu^2`` (``mode="mixture"``). Clamped at 0
    against rounding."""
    recent = window_of(history, h)
    if not recent:
        raise InputError("no closed epoch yet", "history")
    m = len(recent)
    mu = sum(e.mu for e in recent) / m
    chi = sum(e.chi for e in recent) / m
    if mode == VARIANCE_EQ6:
        cross = sum(
            recent[i].mu * recent[j].mu for i in range(m) for j in range(m) if i != j
        )
        value = (chi + cross / m) / m - mu * mu
    elif mode == VARIANCE_MIXTURE:
        value = chi - mu * mu
    else:
        raise InputError(f"unknown variance mode {mode!r} (expected one of {VARIANCE_MODES})")
    return max(value, 0.0)


@dataclass(frozen=True)
class SwmForecast:
    """``w_{n+1} ~ Normal(mean, sd^2)`` (Klink Eq. 5, 6)."""

    mean: float
    sd: float


def forecast(
    history: Sequence[EpochMoments], h: int, generated_at: float, mode: str
) -> SwmForecast:
    """Eq. 5 and 6: the distribution of the next SWM's ingestion time."""
    return SwmForecast(
        mean=generated_at + delay_mean(history, h),
        sd=math.sqrt(delay_variance(history, h, mode)),
    )


def z_value(f: float) -> float:
    """The two-sided normal quantile of confidence ``f`` (0 < f < 1)."""
    if not 0.0 < f < 1.0:
        raise InputError(f"confidence f must be in (0, 1), got {f}", "f")
    return _STANDARD.inv_cdf((1.0 + f) / 2.0)


def interval(fc: SwmForecast, f: float) -> tuple[float, float]:
    """Eq. 7: ``[t_min, t_max]`` with ``P(t_min <= w <= t_max) = f``."""
    half = z_value(f) * fc.sd
    return (fc.mean - half, fc.mean + half)


def cdf(fc: SwmForecast, x: float) -> float:
    """``P(w <= x)`` (a step function when ``sd = 0``)."""
    if fc.sd == 0:
        return 1.0 if x >= fc.mean else 0.0
    return _STANDARD.cdf((x - fc.mean) / fc.sd)


def slot_probability(fc: SwmForecast, x: float, r: float) -> float:
    """Eq. 10: ``P(x <= w <= x + r)``."""
    return max(cdf(fc, x + r) - cdf(fc, x), 0.0)


def slot_starts(fc: SwmForecast, now: float, f: float, r: float) -> list[float]:
    """Alg. 1 lines 11-15: ``x = max(t, t_min) + i r`` for every ``i`` with ``x <= t_max``."""
    if not r > 0:
        raise InputError(f"slot r must be positive, got {r}", "r")
    low, high = interval(fc, f)
    start = max(now, low)
    starts: list[float] = []
    i = 0
    while start + i * r <= high:
        starts.append(start + i * r)
        i += 1
    return starts


def conditional_slot_probabilities(
    fc: SwmForecast, now: float, f: float, r: float
) -> list[float]:
    """Eq. 9 for every slot of :func:`slot_starts`: ``P(slot) / P(w >= t)``. Empty when the
    SWM is overdue (``P(w >= t)`` below :data:`TAIL_EPSILON`)."""
    tail = 1.0 - cdf(fc, now) if fc.sd > 0 else (1.0 if fc.mean >= now else 0.0)
    if tail < TAIL_EPSILON:
        return []
    return [slot_probability(fc, x, r) / tail for x in slot_starts(fc, now, f, r)]


def expected_slack(fc: SwmForecast, now: float, cost: float, f: float, r: float) -> float:
    """Eq. 8 / Alg. 1 ComputeExpectedSlack, with the degenerate cases of the module
    docstring."""
    if fc.sd == 0:
        return (fc.mean - now) - cost if fc.mean >= now else -cost
    starts = slot_starts(fc, now, f, r)
    probabilities = conditional_slot_probabilities(fc, now, f, r)
    if not probabilities:
        return -cost
    return sum(p * ((x + r - now) - cost) for p, x in zip(probabilities, starts))


def accuracy(forecasts: Sequence[SwmForecast], actual: Sequence[float], f: float) -> float:
    """§6.2.5: the fraction of SWMs ingested inside the interval of Eq. 7."""
    if len(forecasts) != len(actual) or not actual:
        raise InputError("need as many forecasts as SWMs, at least one", "accuracy")
    hits = 0
    for fc, w in zip(forecasts, actual):
        low, high = interval(fc, f)
        hits += low <= w <= high
    return hits / len(actual)
