"""The efficient estimator (reference.klink.estimator) against the literal Eq. 2-10
(spec.klink.estimator), and the estimator's sanity properties."""

from __future__ import annotations

import math
from statistics import NormalDist

import pytest
from hypothesis import assume, given, strategies as st

from reference.klink.estimator import SwmEstimator, expected_slack as ref_slack
from spec.errors import InputError
from spec.klink.estimator import (
    VARIANCE_EQ6,
    VARIANCE_MIXTURE,
    EpochMoments,
    SwmForecast,
    accuracy,
    conditional_slot_probabilities,
    delay_mean,
    delay_variance,
    epoch_moments,
    expected_slack,
    forecast,
    interval,
    slot_probability,
    slot_starts,
)

delay = st.floats(min_value=0.0, max_value=5.0)
epoch = st.lists(st.tuples(delay, st.integers(min_value=1, max_value=5)), min_size=1, max_size=6)
modes = st.sampled_from([VARIANCE_EQ6, VARIANCE_MIXTURE])
forecasts = st.builds(SwmForecast, st.floats(min_value=-5, max_value=5), st.floats(min_value=0.0, max_value=2.0))
confidence = st.sampled_from([0.5, 0.8, 0.9, 0.95, 0.99])
slot = st.floats(min_value=0.01, max_value=1.0)


def close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=1e-7, abs_tol=1e-7)


@given(st.lists(epoch, min_size=1, max_size=8), st.integers(min_value=1, max_value=5), modes,
       st.floats(min_value=0, max_value=100))
def test_running_sums_equal_the_literal_equations(
    epochs_: list[list[tuple[float, int]]], h: int, mode: str, generated: float
) -> None:
    estimator = SwmEstimator(h, mode)
    history: list[EpochMoments] = []
    for batches in epochs_:
        for d, weight in batches:
            estimator.observe(d, weight)
        estimator.close_epoch()
        history.append(epoch_moments([d for d, weight in batches for _ in range(weight)]))
        got = estimator.forecast(generated)
        want = forecast(history, h, generated, mode)
        assert got is not None
        assert close(got.mean, want.mean)
        assert math.isclose(got.sd ** 2, want.sd ** 2, rel_tol=1e-6, abs_tol=1e-6)
    assert estimator.closed_epochs == min(h, len(epochs_))


def test_no_forecast_before_a_closed_epoch() -> None:
    estimator = SwmEstimator(3)
    assert estimator.forecast(1.0) is None
    estimator.close_epoch()  # empty epoch: nothing to close
    assert estimator.forecast(1.0) is None
    with pytest.raises(InputError):
        SwmEstimator(0)


@given(st.lists(st.tuples(delay, delay), min_size=1, max_size=6), st.integers(min_value=1, max_value=8))
def test_eq6_is_the_variance_of_the_average(pairs: list[tuple[float, float]], h: int) -> None:
    # chi_i >= mu_i^2 for real epochs: build them from two-point distributions.
    history = [EpochMoments((a + b) / 2, (a * a + b * b) / 2) for a, b in pairs]
    recent = history[-h:]
    m = len(recent)
    closed_form = sum(e.chi - e.mu ** 2 for e in recent) / (m * m)
    assert math.isclose(delay_variance(history, h, VARIANCE_EQ6), max(closed_form, 0.0), abs_tol=1e-9)
    assert delay_variance(history, h, VARIANCE_MIXTURE) >= delay_variance(history, h, VARIANCE_EQ6) - 1e-9
    assert delay_mean(history, h) == pytest.approx(sum(e.mu for e in recent) / m)


@given(forecasts, st.floats(min_value=-8, max_value=8), confidence, slot)
def test_conditional_probabilities_are_probabilities(fc: SwmForecast, now: float, f: float, r: float) -> None:
    probabilities = conditional_slot_probabilities(fc, now, f, r)
    assert all(0.0 <= p <= 1.0 + 1e-9 for p in probabilities)
    assert sum(probabilities) <= 1.0 + 1e-9
    if fc.sd == 0 or not probabilities:
        return
    # Eq. 9 computed independently: P(x <= w <= x + r) / P(w >= now) with w ~ N(mean, sd^2),
    # and the slots cover the part of the Eq. 7 interval after now (Alg. 1 lines 11-15)
    normal = NormalDist(fc.mean, fc.sd)
    tail = 1.0 - normal.cdf(now)
    starts = slot_starts(fc, now, f, r)
    assert len(starts) == len(probabilities) and starts[0] == max(now, interval(fc, f)[0])
    for p, x in zip(probabilities, starts):
        assert math.isclose(p, (normal.cdf(x + r) - normal.cdf(x)) / tail, rel_tol=1e-6, abs_tol=1e-9)
    low, high = interval(fc, f)
    covered = max(normal.cdf(high) - normal.cdf(max(now, low)), 0.0) / tail
    assert sum(probabilities) >= covered - 1e-6


@given(forecasts, st.floats(min_value=-8, max_value=8), slot)
def test_slot_probability_is_a_probability(fc: SwmForecast, x: float, r: float) -> None:
    p = slot_probability(fc, x, r)
    assert 0.0 <= p <= 1.0
    if fc.sd > 0:  # Eq. 10 with the standardized value (the paper's Var is a typo for sd)
        normal = NormalDist(fc.mean, fc.sd)
        assert math.isclose(p, normal.cdf(x + r) - normal.cdf(x), abs_tol=1e-9)
    else:
        assert p == (1.0 if x < fc.mean <= x + r else 0.0)


@given(forecasts, st.floats(min_value=-8, max_value=8), st.floats(min_value=0, max_value=5), confidence, slot)
def test_reference_slack_equals_spec(fc: SwmForecast, now: float, cost: float, f: float, r: float) -> None:
    assert math.isclose(ref_slack(fc, now, cost, f, r), expected_slack(fc, now, cost, f, r),
                        rel_tol=1e-6, abs_tol=1e-6)


@given(forecasts, st.floats(min_value=-8, max_value=8), st.floats(min_value=0, max_value=5),
       st.floats(min_value=0, max_value=5), confidence, slot)
def test_more_queued_work_never_raises_slack(
    fc: SwmForecast, now: float, a: float, b: float, f: float, r: float
) -> None:
    low, high = sorted((a, b))
    assert expected_slack(fc, now, high, f, r) <= expected_slack(fc, now, low, f, r) + 1e-9


@given(st.floats(min_value=-5, max_value=5), st.floats(min_value=-5, max_value=5), st.floats(min_value=0, max_value=3))
def test_certain_swm_gives_eq1(mean: float, now: float, cost: float) -> None:
    assume(mean >= now)
    assert expected_slack(SwmForecast(mean, 0.0), now, cost, 0.95, 0.1) == pytest.approx((mean - now) - cost)


def test_overdue_swm_has_slack_minus_cost() -> None:
    assert expected_slack(SwmForecast(0.0, 0.1), 10.0, 2.0, 0.95, 0.1) == -2.0
    assert ref_slack(SwmForecast(0.0, 0.1), 10.0, 2.0, 0.95, 0.1) == -2.0


def test_interval_and_accuracy() -> None:
    fc = SwmForecast(10.0, 1.0)
    low, high = interval(fc, 0.95)
    assert low == pytest.approx(10 - 1.959964, abs=1e-5) and high == pytest.approx(10 + 1.959964, abs=1e-5)
    assert accuracy([fc, fc, fc, fc], [10.0, 11.9, 12.1, 7.0], 0.95) == 0.5
    with pytest.raises(InputError):
        interval(fc, 1.0)
