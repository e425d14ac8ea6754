"""The simulator (reference.klink.simulator): determinism by seed, the invariants every run
must satisfy, and the spec's SWM and slack inside real runs, on small workloads; and that
Klink beats the baselines under load."""

from __future__ import annotations

import math
from typing import Sequence

import pytest

from hypothesis import given, settings, strategies as st

from reference.klink.results import estimator_accuracy, percentile
from reference.klink.simulator import SimConfig, Simulation, compare
from reference.klink.workload import WorkloadConfig, build_workload
from reference.klink.policies import POLICIES, Klink, SchedulerView, make_policy
from spec.klink.estimator import expected_slack
from spec.klink.slack import join_slack, slack
from spec.klink.watermarks import Watermark, sweeping_watermark, swm_generation_time


def small(queries: int, seed: int, delays: str = "uniform") -> WorkloadConfig:
    return WorkloadConfig(queries=queries, seed=seed, delays=delays, horizon=12.0, drain=4.0)


@settings(max_examples=5)
@given(st.integers(min_value=0, max_value=10_000), st.sampled_from(["uniform", "zipf"]))
def test_same_seed_same_result(seed: int, delays: str) -> None:
    wconfig = small(4, seed, delays)
    config = SimConfig(cores=1, warmup=2.0)
    one = compare(wconfig, config, ("klink", "fcfs"))
    two = compare(wconfig, config, ("klink", "fcfs"))
    for name in ("klink", "fcfs"):
        assert one.results[name].summary() == two.results[name].summary()
        assert one.results[name].latencies == two.results[name].latencies
    assert one.forecasts == two.forecasts


def test_different_seeds_give_different_workloads() -> None:
    a = build_workload(small(3, 1))
    b = build_workload(small(3, 2))
    assert [q.inputs[0].arrival for q in a] != [q.inputs[0].arrival for q in b]


@settings(max_examples=6)
@given(st.integers(min_value=0, max_value=10_000), st.sampled_from(POLICIES),
       st.integers(min_value=1, max_value=3))
def test_run_invariants(seed: int, policy: str, cores: int) -> None:
    wconfig = small(5, seed, "zipf" if seed % 2 else "uniform")
    workload = build_workload(wconfig)
    sim = Simulation(workload, wconfig, SimConfig(cores=cores, warmup=2.0), make_policy(policy, 3000.0))
    result = sim.run()
    # a window is output only after its SWM was ingested, and never before its deadline
    for _, deadline, emitted, swept_at in sim.outputs:
        assert emitted >= swept_at >= deadline
    # windows fire in deadline order per query and every measured window is accounted for
    expected = sum(
        len([d for d in q.window.deadlines_until(wconfig.horizon) if d >= 2.0]) for q in workload
    )
    assert len(result.latencies) == expected
    assert all(lat >= 0 for lat in result.latencies)
    assert sim.queued_total >= -1e-6 and all(m >= -1e-6 for m in result.memory_samples)
    # no events are lost: queued counters agree with the queues
    for q in sim.queries:
        for inp in q.inputs:
            waiting: float = sum(inp.stream.size[inp.processed:inp.ingested])
            if inp.head_left >= 0:
                waiting -= inp.stream.size[inp.processed] - inp.head_left
            assert abs(inp.queued - waiting) < 1e-6 * max(1.0, waiting)


@pytest.mark.parametrize("delays", ["uniform", "zipf"])
def test_eq6_under_covers_and_the_mixture_is_near_nominal(delays: str) -> None:
    """docs/klink.md's Eq. 6 correction, measured: the literal Eq. 6 interval (the variance of
    an *average* of m epoch delays) holds far fewer SWMs than its nominal confidence - the
    benchmark measures ~30% for "95%", here 34-45% over 200-260 SWMs per run - while the
    mixture variance (one delay drawn from the last h epochs) is close to nominal."""
    for seed in (1, 2, 3):
        workload = WorkloadConfig(queries=10, seed=seed, delays=delays, horizon=60.0, drain=4.0)
        result = compare(workload, SimConfig(cores=2, warmup=2.0), ("fcfs",))
        assert len(result.forecasts) >= 150
        mixture90 = estimator_accuracy(result.forecasts, 0.90, "mixture")
        mixture95 = estimator_accuracy(result.forecasts, 0.95, "mixture")
        eq6_90 = estimator_accuracy(result.forecasts, 0.90, "eq6")
        eq6_95 = estimator_accuracy(result.forecasts, 0.95, "eq6")
        assert 0.80 <= mixture90 <= mixture95 and 0.90 <= mixture95 <= 1.0, (mixture90, mixture95)
        assert eq6_90 <= eq6_95 <= 0.60, (eq6_90, eq6_95)  # nominal 95%: far below
        assert eq6_95 < mixture90
        # Eq. 6's interval is never wider: it is the mixture's with the within-epoch spread
        # divided by m (and without the spread of the epoch means)
        assert all(fc.sd_eq6 <= fc.sd_mixture + 1e-12 for fc in result.forecasts)
        assert any(fc.sd_eq6 < fc.sd_mixture for fc in result.forecasts)


def test_percentile() -> None:
    assert percentile([], 99) == 0.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.0
    assert percentile([float(i) for i in range(1, 101)], 99) == 99.0


@settings(max_examples=4)
@given(st.integers(min_value=0, max_value=10_000), st.sampled_from(["klink", "fcfs", "hr"]))
def test_windows_fire_on_the_spec_swm(seed: int, policy: str) -> None:
    # Every output's SWM ingestion time is the one spec.klink.watermarks defines: per input,
    # the first ingested watermark at or past the deadline; a join waits for all inputs.
    wconfig = small(5, seed, "zipf")
    workload = build_workload(wconfig)
    sim = Simulation(workload, wconfig, SimConfig(cores=1, warmup=2.0), make_policy(policy, 3000.0))
    sim.run()
    fired = {(query, deadline): swept_at for query, deadline, _, swept_at in sim.outputs}
    checked = 0
    for q in workload:
        for d in q.window.deadlines_until(wconfig.horizon):
            expected = []
            for stream in q.inputs:
                marks = [Watermark(g, a) for g, a, n in zip(stream.generated, stream.arrival, stream.size) if n == 0]
                index = sweeping_watermark(d, marks)
                assert index is not None
                expected.append(marks[index].ingested_at)
            assert fired[(q.index, d)] == max(expected)
            checked += 1
    assert checked > 0


class _CheckingKlink(Klink):
    """Klink that recomputes every slack with the spec's equations before choosing."""

    def __init__(self, sim_ref: list[Simulation]) -> None:
        super().__init__(None)
        self.sim_ref = sim_ref
        self.checked = 0

    def choose(self, view: SchedulerView, now: float, candidates: Sequence[int]) -> int:
        sim = self.sim_ref[0]
        for qi in candidates:
            q = sim.queries[qi]
            per_input = []
            for inp in q.inputs:
                cost = inp.queued * q.model.cost
                k = q.next_fire
                if k in inp.swm_time:
                    per_input.append(slack(inp.swm_time[k], now, cost))
                elif inp.forecast is None or inp.pending != k:
                    g = swm_generation_time(q.deadline(k), sim.wconfig.watermark_period)
                    per_input.append(slack(g, now, cost))
                else:
                    per_input.append(expected_slack(inp.forecast, now, cost, sim.config.confidence, sim.config.quantum))
            assert math.isclose(view.slack(qi, now), join_slack(per_input), rel_tol=1e-6, abs_tol=1e-6)
            self.checked += 1
        return super().choose(view, now, candidates)


def test_simulator_slack_is_the_spec_slack() -> None:
    wconfig = small(6, 11, "zipf")
    holder: list[Simulation] = []
    policy = _CheckingKlink(holder)
    sim = Simulation(build_workload(wconfig), wconfig, SimConfig(cores=1, warmup=2.0), policy)
    holder.append(sim)
    sim.run()
    assert policy.checked > 100
    assert any(q.model.is_join for q in sim.queries)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_klink_beats_the_baselines_under_load(seed: int) -> None:
    """The headline (Klink §6.2.1): at 96% offered load Klink's mean output
    latency is well below FCFS, RR and HR (measured 43-56% lower on these seeds; 25% is the
    bar). Guards the policy code, not just the simulator's bookkeeping."""
    result = compare(WorkloadConfig(queries=16, seed=seed, horizon=40.0), SimConfig(cores=1),
                     ("klink", "fcfs", "rr", "hr"))
    assert result.offered_load == pytest.approx(0.96)
    klink = result.results["klink"].summary()["mean"]
    for name in ("fcfs", "rr", "hr"):
        assert klink < 0.75 * result.results[name].summary()["mean"], name
