"""A deterministic discrete-event simulator of windowed queries on ``k`` cores (Klink §6).

Mechanics (identical for every policy; docs/klink.md):

* Items are *ingested* at their network arrival time (:mod:`reference.klink.workload`).
  Ingestion is policy-independent: it feeds each input's SWM estimator (Eq. 3/4 delays; an
  epoch closes at each SWM ingestion, then Eq. 5/6 forecast the next SWM) and its queue.
* Whenever a core is free, the policy picks a runnable query (queued items, not running
  elsewhere); it runs for one quantum ``r`` or until its queue is empty, whichever is first
  (work-conserving). A query processes its inputs' items in ingestion order; an event costs
  ``cost`` seconds; a watermark costs nothing, but once every input has processed a
  watermark at or past the next deadline the window fires (``fire_cost``) and its result is
  output. Output latency = output time - window deadline (event time = generation time).
* Memory = queued (and in-service) events + the events a join buffers until its window
  fires (selectivity * processed events); sampled every ``sample_interval``.
* Windows with a deadline in ``[warmup, horizon]`` are measured; sources keep producing
  until ``horizon + drain``; a measured window still unfired then counts as censored with
  latency ``horizon + drain - deadline``.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field

from spec.errors import InputError, cut
from spec.klink.estimator import VARIANCE_EQ6, VARIANCE_MIXTURE, VARIANCE_MODES, SwmForecast
from spec.klink.watermarks import swm_generation_time
from reference.klink.estimator import SwmEstimator, expected_slack
from reference.klink.policies import Policy, make_policy
from reference.klink.results import Forecasted, PolicyResult
from reference.klink.workload import InputStream, QueryModel, WorkloadConfig, build_workload


MAX_CORES = 1024
"""Most cores simulated (a query runs on one core at a time, so cores beyond the number of
queries stay idle; the scheduler keeps one entry per core)."""


@dataclass(frozen=True)
class SimConfig:
    """Scheduler and measurement parameters (Klink §6.2: h = 400, r = 120 ms, f = 95)."""

    cores: int = 4
    quantum: float = 0.1
    history: int = 400
    confidence: float = 0.95
    variance: str = VARIANCE_MIXTURE
    memory_bound_seconds: float = 2.0
    warmup: float = 10.0
    sample_interval: float = 0.1

    def __post_init__(self) -> None:
        if not 1 <= self.cores <= MAX_CORES:
            raise InputError(f"need 1 to {MAX_CORES} cores, got {cut(str(self.cores), 30)}", "--cores")
        if not self.quantum > 0:
            raise InputError(f"quantum r must be positive, got {self.quantum}", "quantum")
        if not 0 < self.confidence < 1:
            raise InputError(f"confidence f must be in (0, 1), got {self.confidence}", "f")
        if self.variance not in VARIANCE_MODES:
            raise InputError(f"unknown variance mode {self.variance!r}", "variance")


@dataclass
class _Input:
    stream: InputStream
    estimator: SwmEstimator
    ingested: int = 0
    processed: int = 0
    head_left: float = -1.0
    watermark: float = -math.inf
    queued: float = 0.0
    pending: int = 1
    forecast: SwmForecast | None = None
    forecast_eq6: SwmForecast | None = None
    swm_time: dict[int, float] = field(default_factory=dict)
    processed_swm: dict[int, float] = field(default_factory=dict)
    processed_next: int = 1


@dataclass
class _Query:
    model: QueryModel
    inputs: list[_Input]
    next_fire: int = 1
    running: bool = False
    join_state: float = 0.0
    backlog: int = 0

    def deadline(self, k: int) -> float:
        return self.model.window.deadline(k)


def check_horizon(wconfig: WorkloadConfig, config: SimConfig) -> None:
    """A horizon within the warm-up is bad input: nothing would be measured (every latency
    and accuracy would print as 0)."""
    if not wconfig.horizon > config.warmup:
        raise InputError(f"the horizon must be longer than the {config.warmup:g} s warm-up "
                         f"(windows due before it are not measured), got {wconfig.horizon:g}",
                         "--horizon")


class Simulation:
    """One run of one policy over one workload (implements ``SchedulerView``)."""

    def __init__(self, workload: list[QueryModel], wconfig: WorkloadConfig, config: SimConfig,
                 policy: Policy) -> None:
        check_horizon(wconfig, config)
        self.wconfig = wconfig
        self.config = config
        self.policy = policy
        self.queries = [
            _Query(model, [_Input(s, SwmEstimator(config.history, config.variance)) for s in model.inputs])
            for model in workload
        ]
        self.queued_total = 0.0
        self.join_total = 0.0
        self.end = wconfig.horizon + wconfig.drain
        self.outputs: list[tuple[int, float, float, float]] = []
        self.forecasts: list[Forecasted] = []
        self.memory_samples: list[float] = []
        self.decisions = 0

    # --- SchedulerView --------------------------------------------------------------------

    def slack(self, query: int, now: float) -> float:
        q = self.queries[query]
        k = q.next_fire
        cfg = self.config
        best = math.inf
        for inp in q.inputs:
            cost = inp.queued * q.model.cost
            known = inp.swm_time.get(k)
            if known is not None:
                value = (known - now) - cost
            elif inp.forecast is None or inp.pending != k:
                generated = swm_generation_time(q.deadline(k), self.wconfig.watermark_period)
                value = (generated - now) - cost
            else:
                value = expected_slack(inp.forecast, now, cost, cfg.confidence, cfg.quantum)
            best = min(best, value)
        return best

    def head_arrival(self, query: int) -> float:
        return min(
            (i.stream.arrival[i.processed] for i in self.queries[query].inputs if i.processed < i.ingested),
            default=math.inf,
        )

    def rate_priority(self, query: int) -> float:
        model = self.queries[query].model
        return model.selectivity / model.cost

    def releasable(self, query: int) -> float:
        q = self.queries[query]
        size = min(sum(i.queued for i in q.inputs), self.config.quantum / q.model.cost)
        return size * (1.0 - q.model.selectivity)

    def memory(self) -> float:
        return self.queued_total + self.join_total

    def next_deadline(self, query: int) -> float:
        q = self.queries[query]
        return q.deadline(q.next_fire)

    # --- ingestion ------------------------------------------------------------------------

    def _ingest(self, q: _Query, inp: _Input) -> None:
        stream = inp.stream
        j = inp.ingested
        inp.ingested += 1
        arrival, generated, size = stream.arrival[j], stream.generated[j], stream.size[j]
        q.backlog += 1
        if size > 0:
            inp.estimator.observe(arrival - generated, size)
            inp.queued += size
            self.queued_total += size
            return
        swept = False
        while generated >= q.deadline(inp.pending):
            inp.swm_time[inp.pending] = arrival
            if inp.forecast is not None and inp.forecast_eq6 is not None and \
                    self.config.warmup <= q.deadline(inp.pending) <= self.wconfig.horizon:
                self.forecasts.append(Forecasted(inp.forecast.mean, inp.forecast.sd,
                                                 inp.forecast_eq6.sd, arrival))
            inp.pending += 1
            swept = True
        if swept:
            inp.estimator.close_epoch()
            g = swm_generation_time(q.deadline(inp.pending), self.wconfig.watermark_period)
            inp.forecast = inp.estimator.forecast(g, VARIANCE_MIXTURE)
            inp.forecast_eq6 = inp.estimator.forecast(g, VARIANCE_EQ6)
            if self.config.variance == VARIANCE_EQ6:
                inp.forecast, inp.forecast_eq6 = inp.forecast_eq6, inp.forecast

    # --- processing -----------------------------------------------------------------------

    def _run(self, q: _Query, start: float) -> tuple[float, list[float]]:
        """Run ``q`` from ``start`` for one quantum; return the end time and the events
        processed per input (committed when the core frees)."""
        limit = start + self.config.quantum
        cost = q.model.cost
        done = [0.0] * len(q.inputs)
        tau = start
        processed_before = sum(i.processed for i in q.inputs)
        while tau < limit:
            pick = -1
            pick_arrival = math.inf
            for n, inp in enumerate(q.inputs):
                j = inp.processed
                if j < len(inp.stream.arrival):
                    a = inp.stream.arrival[j]
                    if a <= tau and a < pick_arrival:
                        pick, pick_arrival = n, a
            if pick < 0:
                break
            inp = q.inputs[pick]
            j = inp.processed
            size = inp.stream.size[j]
            if size > 0:
                left = inp.head_left if inp.head_left >= 0 else float(size)
                if tau + left * cost <= limit:
                    tau += left * cost
                    amount = left
                    inp.processed += 1
                    inp.head_left = -1.0
                else:
                    amount = (limit - tau) / cost
                    inp.head_left = left - amount
                    tau = limit
                done[pick] += amount
                if q.model.is_join:
                    q.join_state += amount * q.model.selectivity
                    self.join_total += amount * q.model.selectivity
            else:
                inp.watermark = max(inp.watermark, inp.stream.generated[j])
                while q.deadline(inp.processed_next) <= inp.watermark:
                    inp.processed_swm[inp.processed_next] = inp.stream.arrival[j]
                    inp.processed_next += 1
                inp.processed += 1
                low = min(i.watermark for i in q.inputs)
                while q.deadline(q.next_fire) <= low:
                    tau += self.wconfig.fire_cost
                    swept_at = max(i.processed_swm.pop(q.next_fire) for i in q.inputs)
                    for i in q.inputs:
                        i.swm_time.pop(q.next_fire, None)
                    self.outputs.append((q.model.index, q.deadline(q.next_fire), tau, swept_at))
                    q.next_fire += 1
                    self.join_total -= q.join_state
                    q.join_state = 0.0
        q.backlog -= sum(i.processed for i in q.inputs) - processed_before
        return tau, done

    # --- main loop ------------------------------------------------------------------------

    def run(self) -> PolicyResult:
        """Simulate until ``horizon + drain``."""
        arrivals = sorted(
            (a, qi, n, j)
            for qi, q in enumerate(self.queries)
            for n, inp in enumerate(q.inputs)
            for j, a in enumerate(inp.stream.arrival)
        )
        cores: list[tuple[float, int, int]] = [(0.0, c, -1) for c in range(self.config.cores)]
        commits: dict[int, list[float]] = {}
        cursor = 0
        next_sample = self.config.warmup
        horizon = self.wconfig.horizon
        while cores:
            now, core, running = heapq.heappop(cores)
            if now > self.end:
                heapq.heappush(cores, (now, core, running))
                break
            while cursor < len(arrivals) and arrivals[cursor][0] <= now:
                a, qi, n, _ = arrivals[cursor]
                while next_sample <= min(a, horizon):
                    self.memory_samples.append(self.memory())
                    next_sample += self.config.sample_interval
                q = self.queries[qi]
                self._ingest(q, q.inputs[n])
                cursor += 1
            while next_sample <= min(now, horizon):
                self.memory_samples.append(self.memory())
                next_sample += self.config.sample_interval
            if running >= 0:
                self._commit(self.queries[running], commits.pop(core))
            candidates = [
                qi for qi, q in enumerate(self.queries) if q.backlog > 0 and not q.running
            ]
            if not candidates:
                if cursor < len(arrivals):
                    heapq.heappush(cores, (arrivals[cursor][0], core, -1))
                continue
            self.decisions += 1
            chosen = self.policy.choose(self, now, candidates)
            q = self.queries[chosen]
            q.running = True
            finish, done = self._run(q, now)
            commits[core] = done
            heapq.heappush(cores, (max(finish, now), core, chosen))
        # Settle the runs still in progress so the final state is consistent.
        last = max((t for t, _, _ in cores), default=now)
        while cursor < len(arrivals) and arrivals[cursor][0] <= last:
            _, qi, n, _ = arrivals[cursor]
            q = self.queries[qi]
            self._ingest(q, q.inputs[n])
            cursor += 1
        for _, core, running in cores:
            if running >= 0:
                self._commit(self.queries[running], commits.pop(core))
        return self._result()

    def _commit(self, q: _Query, done: list[float]) -> None:
        """A run of ``q`` ended: its processed events leave the queues."""
        for inp, amount in zip(q.inputs, done):
            inp.queued -= amount
            self.queued_total -= amount
        q.running = False

    def _result(self) -> PolicyResult:
        lo, hi = self.config.warmup, self.wconfig.horizon
        latencies = [emit - d for _, d, emit, _ in self.outputs if lo <= d <= hi]
        after_swm = [emit - w for _, d, emit, w in self.outputs if lo <= d <= hi]
        censored = 0
        for q in self.queries:
            k = q.next_fire
            while q.deadline(k) <= hi:
                if q.deadline(k) >= lo:
                    latencies.append(self.end - q.deadline(k))
                    censored += 1
                k += 1
        mm = getattr(self.policy, "memory_mode_decisions", 0)
        return PolicyResult(self.policy.name, latencies, after_swm, censored,
                            self.memory_samples, int(mm), self.decisions)


@dataclass
class Comparison:
    """Every policy's result on one workload, plus the estimator's forecasts."""

    offered_load: float
    memory_bound: float
    results: dict[str, PolicyResult]
    forecasts: list[Forecasted]


def compare(wconfig: WorkloadConfig, config: SimConfig, policies: tuple[str, ...]) -> Comparison:
    """Run each policy on the same workload (built once from ``wconfig.seed``)."""
    check_horizon(wconfig, config)  # before the workload is built
    workload = build_workload(wconfig)
    offered = sum(m.rate * m.cost for m in workload) / config.cores
    results: dict[str, PolicyResult] = {}
    forecasts: list[Forecasted] = []
    bound = config.memory_bound_seconds * sum(m.rate for m in workload)
    for name in policies:
        sim = Simulation(workload, wconfig, config, make_policy(name, bound))
        results[name] = sim.run()
        if not forecasts:
            forecasts = sim.forecasts
    return Comparison(offered, bound, results, forecasts)
