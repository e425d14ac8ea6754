"""Delay, straggler, control-message and restart profiles for Fries scenarios (issue 8, 1).

A scenario's :class:`~spec.fries.scenario.Timing` never changes what a serial order computes,
only which serial order a correct run is equivalent to - so every profile is a legal test of
the same oracles. The profiles aim at the places schedulers go wrong:

* ``calm``         no delays: the baseline;
* ``jitter``       random per-tuple channel delays (FIFO per channel);
* ``stragglers``   some workers much slower than the rest (skewed alignment);
* ``slow-control`` control messages (FCMs) delayed far beyond data tuples: where naive
  scheduling breaks serializability;
* ``restarts``     stop and restart from the last checkpoint after some source tuples,
  possibly during a reconfiguration: where outputs get lost or duplicated;
* ``mixed``        all of the above at once.

:func:`timings` draws a Timing for one scenario (costs and stragglers name its operators and
objects); :func:`with_timing` adds a drawn Timing to every scenario of a strategy.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from spec.fries.dataflow import OperatorKind
from spec.fries.scenario import Scenario, Timing

PROFILES = ("calm", "jitter", "stragglers", "slow-control", "restarts", "mixed")

#: How often each profile is drawn: the profiles that hit known failure modes (control delays,
#: restarts, everything at once) twice as often as the others.
WEIGHTS = {"calm": 1, "jitter": 1, "stragglers": 1, "slow-control": 2, "restarts": 2, "mixed": 2}


def _interval(hi: int) -> st.SearchStrategy[tuple[float, float]]:
    return st.tuples(st.integers(0, hi), st.integers(0, hi)).map(
        lambda pair: (float(min(pair)), float(max(pair))))


def timings(scenario: Scenario, profile: str | None = None) -> st.SearchStrategy[Timing]:
    """A Timing for ``scenario`` in ``profile`` (drawn from :data:`PROFILES` when None)."""
    if profile is None:
        weighted = [name for name in PROFILES for _ in range(WEIGHTS[name])]
        return st.sampled_from(weighted).flatmap(lambda name: timings(scenario, name))
    operators = [n for n in scenario.dataflow.names if scenario.dataflow.kind(n) is not OperatorKind.SOURCE]
    objects = [obj for name in operators for obj in scenario.objects(name)]
    total = sum(len(tuples) for tuples in scenario.sources.values())
    seed = st.integers(0, 2**16)
    base = st.builds(Timing, seed=seed, ingest_interval=st.sampled_from([0.5, 1.0, 2.0]))
    jitter = _interval(6)
    control = _interval(40).map(lambda pair: (pair[0], pair[1] + 10.0))
    stragglers = (st.dictionaries(st.sampled_from(objects), st.sampled_from([3.0, 5.0, 10.0]), max_size=2)
                  if objects else st.just({}))
    costs = (st.dictionaries(st.sampled_from(operators), st.sampled_from([0.5, 1.0, 2.0]), max_size=3)
             if operators else st.just({}))
    restarts = (st.lists(st.integers(1, max(1, total - 1)), min_size=1, max_size=2, unique=True).map(
        lambda xs: tuple(sorted(xs))) if total >= 2 else st.just(()))
    if profile == "calm":
        return base
    if profile == "jitter":
        return st.builds(lambda t, d: replace(t, channel_delay=d), base, jitter)
    if profile == "stragglers":
        return st.builds(lambda t, s, c: replace(t, stragglers=s, operator_cost=c), base, stragglers, costs)
    if profile == "slow-control":
        return st.builds(lambda t, f, d: replace(t, fcm_delay=f, channel_delay=d), base, control, jitter)
    if profile == "restarts":
        return st.builds(lambda t, r, d: replace(t, restarts=r, channel_delay=d), base, restarts, jitter)
    if profile == "mixed":
        return st.builds(
            lambda t, d, f, s, c, r: replace(t, channel_delay=d, fcm_delay=f, stragglers=s, operator_cost=c,
                                             restarts=r),
            base, jitter, control, stragglers, costs, restarts)
    raise ValueError(f"unknown timing profile {profile!r} (expected one of {PROFILES})")


def with_timing(scenarios: st.SearchStrategy[Scenario], profile: str | None = None) -> st.SearchStrategy[Scenario]:
    """``scenarios`` with a Timing drawn by :func:`timings` for each."""
    return scenarios.flatmap(lambda s: timings(s, profile).map(lambda t: replace(s, timing=t)))
