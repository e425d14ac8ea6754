"""Delay, straggler, control-message and restart profiles for Fries scenarios.

A scenario's :class:`~spec.fries.scenario.Timing` never changes what a serial order computes,
only which serial order a correct run is equivalent to - so every profile is a legal test of
the same oracles. The profiles aim at the places schedulers go wrong:

* ``calm``         no delays: the baseline;
* ``jitter``       random per-tuple channel delays (FIFO per channel) and source reordering
  within a watermark bound of 0-3 positions (``reorder_bound``, spec.fries.reorder);
* ``stragglers``   some workers much slower than the rest (skewed alignment);
* ``slow-control`` control messages (FCMs) delayed far beyond data tuples: where naive
  scheduling breaks serializability;
* ``restarts``     stop and restart from the last checkpoint after some source tuples,
  possibly during a reconfiguration: where outputs get lost or duplicated;
* ``race``         every operator has a per-tuple cost and control messages are spread over
  seconds, so one object switches several micro-batches before another: the window in which
  an unaligned switch lets a transaction see both versions (on Spark, where a micro-batch is
  processed operator by operator, the profile that exposes naive scheduling; the suite runs
  it on stretched streams in small batches, see conformance.fries.suite);
* ``mixed``        all of the above at once.

:func:`draw_timing` / :func:`timings` draw a Timing for one scenario (costs and stragglers
name its operators and objects); :func:`with_timing` adds one to every scenario of a strategy.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from spec.fries.dataflow import OperatorKind
from spec.fries.scenario import Scenario, Timing

PROFILES = ("calm", "jitter", "stragglers", "slow-control", "restarts", "race", "mixed")

#: How often each profile is drawn when none is named: the profiles that hit known failure
#: modes (control delays, restarts, everything at once) twice as often as the others. ``race``
#: needs long streams to matter, so the suite draws it separately (conformance.fries.suite).
WEIGHTS = {"calm": 1, "jitter": 1, "stragglers": 1, "slow-control": 2, "restarts": 2, "race": 0, "mixed": 2}
_WEIGHTED = [name for name in PROFILES for _ in range(WEIGHTS[name])]


def _interval(draw: st.DrawFn, hi: int) -> tuple[float, float]:
    a, b = draw(st.integers(0, hi)), draw(st.integers(0, hi))
    return float(min(a, b)), float(max(a, b))


def draw_timing(draw: st.DrawFn, scenario: Scenario, profile: str | None = None) -> Timing:
    """Draw a Timing for ``scenario`` in ``profile`` (from :data:`PROFILES` by :data:`WEIGHTS`
    when None). Only the hooks of the profile are drawn (plain draws, no per-scenario
    strategy objects: drawing hundreds of cases stays fast)."""
    if profile is None:
        profile = draw(st.sampled_from(_WEIGHTED))
    if profile not in PROFILES:
        raise ValueError(f"unknown timing profile {profile!r} (expected one of {PROFILES})")
    operators = [n for n in scenario.dataflow.names if scenario.dataflow.kind(n) is not OperatorKind.SOURCE]
    objects = [obj for name in operators for obj in scenario.objects(name)]
    total = sum(len(tuples) for tuples in scenario.sources.values())
    timing = Timing(seed=draw(st.integers(0, 2**16)), ingest_interval=draw(st.sampled_from([0.5, 1.0, 2.0])))

    def pick(names: list[str], values: list[float], most: int) -> dict[str, float]:
        if not names:
            return {}
        chosen = draw(st.lists(st.sampled_from(names), max_size=most, unique=True))
        return {name: draw(st.sampled_from(values)) for name in chosen}

    if profile in ("jitter", "slow-control", "restarts", "mixed"):
        timing = replace(timing, channel_delay=_interval(draw, 6))
    if profile in ("jitter", "mixed"):
        timing = replace(timing, reorder_bound=draw(st.integers(0, 3)))
    if profile in ("slow-control", "mixed"):
        lo, hi = _interval(draw, 40)
        timing = replace(timing, fcm_delay=(lo, hi + 10.0))
    if profile in ("stragglers", "mixed"):
        timing = replace(timing, stragglers=pick(objects, [3.0, 5.0, 10.0], 2),
                         operator_cost=pick(operators, [0.5, 1.0, 2.0], 3))
    if profile in ("restarts", "mixed") and total >= 2:
        points = draw(st.lists(st.integers(1, total - 1), min_size=1, max_size=2, unique=True))
        timing = replace(timing, restarts=tuple(sorted(points)))
    if profile == "race":
        timing = replace(timing, operator_cost={n: draw(st.sampled_from([2.0, 5.0, 10.0])) for n in operators},
                         fcm_delay=draw(st.sampled_from([(0.0, 1500.0), (0.0, 3000.0), (500.0, 3000.0)])))
    return timing


def timings(scenario: Scenario, profile: str | None = None) -> st.SearchStrategy[Timing]:
    """A strategy of Timings for ``scenario`` in ``profile`` (see :func:`draw_timing`)."""
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"unknown timing profile {profile!r} (expected one of {PROFILES})")
    return st.composite(lambda draw: draw_timing(draw, scenario, profile))()


def with_timing(scenarios: st.SearchStrategy[Scenario], profile: str | None = None) -> st.SearchStrategy[Scenario]:
    """``scenarios`` with a Timing drawn by :func:`draw_timing` for each."""
    if profile is not None and profile not in PROFILES:
        raise ValueError(f"unknown timing profile {profile!r} (expected one of {PROFILES})")

    @st.composite
    def timed(draw: st.DrawFn) -> Scenario:
        scenario = draw(scenarios)
        return replace(scenario, timing=draw_timing(draw, scenario, profile))

    return timed()
