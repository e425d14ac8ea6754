"""Klink on several nodes with per-operator scheduling and memory contention (Klink §3.4, §4,
§6.2.4). A discrete-event simulator beside :mod:`reference.klink.simulator` (which schedules
whole queries on one node); the workload is the same (:mod:`reference.klink.workload`).

Model (docs/klink.md, "Distributed Klink and memory contention"):

* **Operators.** Each query is split into two operators, the unit of scheduling: a *filter*
  ``F`` (``pre_share`` of the query's per-event cost, selectivity ``S``) that ingests the
  query's input streams from the network, and a *window* operator ``W`` (the rest of the
  cost, spread over the events that pass the filter) that fires each window once every input's
  watermark has passed its deadline. ``F`` forwards each processed batch (``S`` of its
  events) and each watermark to ``W`` over a FIFO channel.
* **Placement.** Query ``q``'s ``F`` runs on node ``q mod N`` and its ``W`` on node
  ``(q + 1) mod N`` (every query spans two nodes when ``N > 1``, as in Klink's Fig. 5); a
  channel between two nodes adds ``hop`` seconds. Each node has ``cores`` cores and its own
  scheduler; whenever a core is free it picks one runnable operator of its node for one
  quantum (work-conserving, as in the single-node simulator).
* **What a node knows (§4).** An operator's own queue and the SWM estimator of the streams it
  ingests are local. Distributed Klink forwards the rest every ``exchange_period`` seconds
  ("the scheduler collects information from other Klink instances as part of its main
  loop"): *network delay forwarding*, the filter node's SWM forecast and backlog to the
  window's node, and *cost forwarding*, the window's backlog cost to the filter's node. So a
  filter's slack is the time until its SWM is ingested minus the cost of everything queued
  before the window can fire (its own queue, the hop, the window's queue as last reported),
  and a window's slack is the forwarded SWM forecast plus the filter's reported backlog and
  the hop, minus its own queue. ``klink-local`` is Klink with no forwarding (each node runs
  single-node Klink on what it sees: a window estimates SWM arrivals from the watermarks that
  reach it); on one node both are the same. The baselines (FCFS, RR, HR, StreamBox) use only
  local information.
* **Memory contention.** A node's memory is the events queued at its operators plus the
  join state of its windows. Above the memory-stress bound ``b`` (Klink §3.4: where Klink's
  memory policy starts) each event costs more, growing linearly to ``1 + contention`` times
  its cost at ``memory_capacity`` and staying there (garbage collection and spilling in a
  JVM-based engine); ``memory_capacity=None`` turns contention off. Without it the memory
  policy cannot change latency.

Latency, censoring and memory samples are measured as in :mod:`reference.klink.simulator`.
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass, field
from typing import Callable

from spec.errors import InputError
from spec.klink.estimator import VARIANCE_MIXTURE, SwmForecast
from spec.klink.watermarks import swm_generation_time
from reference.klink.estimator import SwmEstimator, expected_slack
from reference.klink.policies import POLICIES, Policy, make_policy
from reference.klink.results import PolicyResult
from reference.klink.workload import QueryModel, WorkloadConfig, build_workload

CLUSTER_POLICIES = ("klink", "klink-local", "klink-nomm", "fcfs", "rr", "hr", "sbox")


@dataclass(frozen=True)
class ClusterConfig:
    """Nodes, scheduler and contention parameters (seconds; memory in seconds of input)."""

    nodes: int = 2
    cores: int = 4
    quantum: float = 0.1
    history: int = 400
    confidence: float = 0.95
    hop: float = 0.005
    exchange_period: float = 0.2
    pre_share: float = 0.3
    memory_bound_seconds: float = 2.0
    memory_capacity_seconds: float | None = None
    contention: float = 3.0
    warmup: float = 10.0
    sample_interval: float = 0.1

    def __post_init__(self) -> None:
        if self.nodes < 1 or self.cores < 1:
            raise InputError(f"need at least one node and core, got {self.nodes} and "
                             f"{self.cores}", "nodes")
        if not (self.quantum > 0 and self.hop >= 0 and self.exchange_period > 0
                and 0 < self.pre_share < 1 and self.contention >= 0):
            raise InputError("quantum and exchange period must be positive, hop and "
                             "contention non-negative, pre_share in (0, 1)", "cluster")
        cap = self.memory_capacity_seconds
        if cap is not None and not cap > self.memory_bound_seconds:
            raise InputError(f"memory capacity ({cap} s) must exceed the stress bound "
                             f"({self.memory_bound_seconds} s)", "memory")


@dataclass
class _Channel:
    """One input of an operator: items (arrival, generation time, events; 0 = watermark)."""

    arrival: list[float] = field(default_factory=list)
    generated: list[float] = field(default_factory=list)
    size: list[float] = field(default_factory=list)
    processed: int = 0
    ingested: int = 0
    head_left: float = -1.0
    queued: float = 0.0
    watermark: float = -math.inf
    estimator: SwmEstimator | None = None
    pending: int = 1
    swm_time: dict[int, float] = field(default_factory=dict)
    forecast: SwmForecast | None = None


@dataclass
class _Operator:
    query: QueryModel
    kind: str  # "filter" | "window"
    node: int
    cost: float
    channels: list[_Channel]
    running: bool = False
    next_fire: int = 1
    join_state: float = 0.0

    def deadline(self, k: int) -> float:
        return self.query.window.deadline(k)


@dataclass
class _Report:
    """What an operator's node last forwarded about it (§4), refreshed every exchange."""

    queued: float = 0.0
    next_fire: int = 1
    forecasts: list[tuple[SwmForecast | None, float | None]] = field(default_factory=list)


class ClusterSimulation:
    """One run of one policy (per node) over one workload on ``config.nodes`` nodes."""

    def __init__(self, workload: list[QueryModel], wconfig: WorkloadConfig,
                 config: ClusterConfig, policy: str) -> None:
        if policy not in CLUSTER_POLICIES:
            raise InputError(f"unknown policy {policy!r} (expected one of "
                             f"{list(CLUSTER_POLICIES)})", "policy")
        if not wconfig.horizon > config.warmup:
            raise InputError(f"the horizon must be longer than the {config.warmup:g} s warm-up",
                             "--horizon")
        self.wconfig, self.config, self.name = wconfig, config, policy
        self.forwarding = policy == "klink"
        self.ops: list[_Operator] = []
        for q in workload:
            node_f = q.index % config.nodes
            node_w = (q.index + 1) % config.nodes
            filt = _Operator(q, "filter", node_f, q.cost * config.pre_share, [
                _Channel(list(s.arrival), list(s.generated), [float(z) for z in s.size],
                         estimator=SwmEstimator(config.history, VARIANCE_MIXTURE))
                for s in q.inputs])
            window = _Operator(q, "window", node_w,
                               q.cost * (1 - config.pre_share) / q.selectivity,
                               [_Channel(estimator=SwmEstimator(config.history, VARIANCE_MIXTURE))
                                for _ in q.inputs])
            self.ops += [filt, window]
        self.local = [[i for i, op in enumerate(self.ops) if op.node == n]
                      for n in range(config.nodes)]
        rates = [sum(self.ops[i].query.rate for i in ids if self.ops[i].kind == "filter")
                 + sum(self.ops[i].query.rate * self.ops[i].query.selectivity
                       for i in ids if self.ops[i].kind == "window") for ids in self.local]
        self.bound = [config.memory_bound_seconds * r for r in rates]
        cap = config.memory_capacity_seconds
        self.capacity = [None if cap is None else cap * r for r in rates]
        self.policies: list[Policy] = [
            make_policy(_base(policy), self.bound[n]) for n in range(config.nodes)]
        self.memory_of = [0.0] * config.nodes
        self.reports = [_Report() for _ in self.ops]
        self.next_exchange = 0.0
        self.end = wconfig.horizon + wconfig.drain
        self.outputs: list[tuple[float, float]] = []
        self.memory_samples: list[float] = []
        self.decisions = 0
        self.slowdowns: list[float] = []
        self._node = 0

    # --- SchedulerView over the operators of the node deciding (indices into self.ops) ------

    def slack(self, index: int, now: float) -> float:
        op = self.ops[index]
        if op.kind == "filter":
            window = self.ops[index + 1]
            remote = window.node != op.node
            if remote and not self.forwarding:
                downstream = 0.0
                k = self._known_next_fire(op)
            else:
                report = self.reports[index + 1] if remote else None
                queued_w = report.queued if report else sum(c.queued for c in window.channels)
                downstream = (self.config.hop if remote else 0.0) + queued_w * window.cost
                k = report.next_fire if report else window.next_fire
            return min(self._swm_slack(op, c, k, now, c.queued * op.cost + downstream)
                       for c in op.channels)
        filt = self.ops[index - 1]
        own = sum(c.queued for c in op.channels) * op.cost
        if filt.node == op.node or self.forwarding:
            report = self.reports[index - 1] if filt.node != op.node else None
            hop = self.config.hop if filt.node != op.node else 0.0
            values = []
            for n, channel in enumerate(filt.channels):
                forecast: SwmForecast | None
                if report is None:
                    pending = channel.pending == op.next_fire
                    forecast = channel.forecast if pending else None
                    known = channel.swm_time.get(op.next_fire)
                    queued_f = sum(c.queued for c in filt.channels)
                elif report.next_fire == op.next_fire and n < len(report.forecasts):
                    forecast, known = report.forecasts[n]
                    queued_f = report.queued
                else:  # the last report is about an earlier window: nothing known yet
                    forecast, known, queued_f = None, None, report.queued
                if op.channels[n].swm_time.get(op.next_fire) is not None:
                    values.append(op.channels[n].swm_time[op.next_fire] - now - own)
                    continue
                cost = own + hop + queued_f * filt.cost
                values.append(self._forecast_slack(filt, forecast, known, op.next_fire, now, cost))
            return min(values)
        return min(self._swm_slack(op, c, op.next_fire, now, own) for c in op.channels)

    def _known_next_fire(self, op: _Operator) -> int:
        """The next window a filter without forwarded information assumes: the first whose
        SWM it has not yet forwarded."""
        return min(c.pending for c in op.channels)

    def _swm_slack(self, op: _Operator, channel: _Channel, k: int, now: float,
                   cost: float) -> float:
        return self._forecast_slack(op, channel.forecast if channel.pending == k else None,
                                    channel.swm_time.get(k), k, now, cost)

    def _forecast_slack(self, op: _Operator, forecast: SwmForecast | None, known: float | None,
                        k: int, now: float, cost: float) -> float:
        if known is not None:
            return (known - now) - cost
        if forecast is None:
            generated = swm_generation_time(op.deadline(k), self.wconfig.watermark_period)
            return (generated - now) - cost
        return expected_slack(forecast, now, cost, self.config.confidence, self.config.quantum)

    def head_arrival(self, index: int) -> float:
        return min((c.arrival[c.processed] for c in self.ops[index].channels
                    if c.processed < c.ingested), default=math.inf)

    def rate_priority(self, index: int) -> float:
        op = self.ops[index]
        out = op.query.selectivity if op.kind == "filter" else 1.0
        return out / op.cost

    def releasable(self, index: int) -> float:
        op = self.ops[index]
        size = min(sum(c.queued for c in op.channels), self.config.quantum / op.cost)
        if op.kind == "filter":
            return size * (1.0 - op.query.selectivity)
        return 0.0 if op.query.is_join else size

    def memory(self) -> float:
        return self.memory_of[self._node]

    def next_deadline(self, index: int) -> float:
        op = self.ops[index]
        window = op if op.kind == "window" else self.ops[index + 1]
        return window.deadline(window.next_fire)

    # --- ingestion and forwarding ---------------------------------------------------------

    def _ingest(self, op: _Operator, now: float) -> None:
        """Items that have arrived by ``now`` join the queues and feed the estimators."""
        for channel in op.channels:
            while channel.ingested < len(channel.arrival) and channel.arrival[channel.ingested] <= now:
                j = channel.ingested
                channel.ingested += 1
                arrival, generated, size = channel.arrival[j], channel.generated[j], channel.size[j]
                if size > 0:
                    assert channel.estimator is not None
                    channel.estimator.observe(arrival - generated, size)
                    channel.queued += size
                    self.memory_of[op.node] += size
                    continue
                swept = False
                while generated >= op.deadline(channel.pending):
                    channel.swm_time[channel.pending] = arrival
                    channel.pending += 1
                    swept = True
                if swept and channel.estimator is not None:
                    channel.estimator.close_epoch()
                    g = swm_generation_time(op.deadline(channel.pending),
                                            self.wconfig.watermark_period)
                    channel.forecast = channel.estimator.forecast(g)

    def _exchange(self, now: float) -> None:
        """§4's periodic forwarding: every node reports each of its operators' queue and,
        for a filter, its window's next deadline with the SWM forecast (or ingestion time)
        of every input for that window, as of now."""
        while self.next_exchange <= now:
            for i, op in enumerate(self.ops):
                if op.kind == "window":
                    self.reports[i] = _Report(sum(c.queued for c in op.channels), op.next_fire)
                    continue
                k = self.ops[i + 1].next_fire
                self.reports[i] = _Report(
                    sum(c.queued for c in op.channels), k,
                    [(c.forecast if c.pending == k else None, c.swm_time.get(k))
                     for c in op.channels])
            self.next_exchange += self.config.exchange_period

    # --- processing -----------------------------------------------------------------------

    def _slowdown(self, node: int) -> float:
        capacity = self.capacity[node]
        if capacity is None:
            return 1.0
        over = (self.memory_of[node] - self.bound[node]) / (capacity - self.bound[node])
        return 1.0 + self.config.contention * min(max(over, 0.0), 1.0)

    def _run(self, index: int, start: float) -> tuple[float, list[float]]:
        """Run operator ``index`` for one quantum; the end time and the events processed per
        channel (committed when the core frees)."""
        op = self.ops[index]
        factor = self._slowdown(op.node)
        self.slowdowns.append(factor)
        cost = op.cost * factor
        limit = start + self.config.quantum
        done = [0.0] * len(op.channels)
        tau = start
        while tau < limit:
            pick, pick_arrival = -1, math.inf
            for n, c in enumerate(op.channels):
                if c.processed < c.ingested and c.arrival[c.processed] < pick_arrival:
                    pick, pick_arrival = n, c.arrival[c.processed]
            if pick < 0:
                break
            c = op.channels[pick]
            j = c.processed
            size = c.size[j]
            if size > 0:
                left = c.head_left if c.head_left >= 0 else size
                if tau + left * cost <= limit:
                    tau += left * cost
                    amount, c.head_left = left, -1.0
                    c.processed += 1
                else:
                    amount = (limit - tau) / cost
                    c.head_left, tau = left - amount, limit
                done[pick] += amount
                if op.kind == "filter" and c.head_left < 0:
                    self._forward(index, pick, tau, c.generated[j], size * op.query.selectivity)
                elif op.kind == "window" and op.query.is_join:
                    op.join_state += amount * op.query.selectivity
                    self.memory_of[op.node] += amount * op.query.selectivity
                continue
            c.processed += 1
            c.watermark = max(c.watermark, c.generated[j])
            if op.kind == "filter":
                self._forward(index, pick, tau, c.generated[j], 0.0)
                continue
            low = min(ch.watermark for ch in op.channels)
            while op.deadline(op.next_fire) <= low:
                tau += self.wconfig.fire_cost
                self.outputs.append((op.deadline(op.next_fire), tau))
                op.next_fire += 1
                self.memory_of[op.node] -= op.join_state
                op.join_state = 0.0
        return tau, done

    def _forward(self, index: int, n: int, at: float, generated: float, size: float) -> None:
        """The filter's output item reaches its window over the (FIFO) channel."""
        window = self.ops[index + 1]
        channel = window.channels[n]
        hop = self.config.hop if window.node != self.ops[index].node else 0.0
        last = channel.arrival[-1] if channel.arrival else -math.inf
        channel.arrival.append(max(last, at + hop))
        channel.generated.append(generated)
        channel.size.append(size)

    def _commit(self, index: int, done: list[float]) -> None:
        op = self.ops[index]
        for channel, amount in zip(op.channels, done):
            channel.queued -= amount
            self.memory_of[op.node] -= amount
        op.running = False

    # --- main loop ------------------------------------------------------------------------

    def run(self) -> PolicyResult:
        """Simulate until ``horizon + drain``; latencies of windows due in the measured span."""
        cores = [(0.0, n, c, -1) for n in range(self.config.nodes)
                 for c in range(self.config.cores)]
        heapq.heapify(cores)
        commits: dict[tuple[int, int], list[float]] = {}
        next_sample = self.config.warmup
        while cores:
            now, node, core, running = heapq.heappop(cores)
            if now > self.end:
                break
            if running >= 0:
                self._commit(running, commits.pop((node, core)))
            while next_sample <= min(now, self.wconfig.horizon):
                self.memory_samples.append(sum(self.memory_of))
                next_sample += self.config.sample_interval
            for i in self.local[node]:
                self._ingest(self.ops[i], now)
            self._exchange(now)
            candidates = [i for i in self.local[node] if not self.ops[i].running and any(
                c.processed < c.ingested for c in self.ops[i].channels)]
            if not candidates:
                upcoming = min((ch.arrival[ch.ingested] for i in self.local[node]
                                for ch in self.ops[i].channels if ch.ingested < len(ch.arrival)),
                               default=math.inf)
                wake = min(now + self.config.quantum / 10, max(upcoming, now + 1e-6))
                heapq.heappush(cores, (wake, node, core, -1))
                continue
            self.decisions += 1
            self._node = node
            chosen = self.policies[node].choose(self, now, candidates)
            self.ops[chosen].running = True
            finish, done = self._run(chosen, now)
            commits[(node, core)] = done
            heapq.heappush(cores, (max(finish, now), node, core, chosen))
        return self._result()

    def _result(self) -> PolicyResult:
        lo, hi = self.config.warmup, self.wconfig.horizon
        latencies = [emit - d for d, emit in self.outputs if lo <= d <= hi]
        censored = 0
        for op in self.ops:
            if op.kind != "window":
                continue
            k = op.next_fire
            while op.deadline(k) <= hi:
                if op.deadline(k) >= lo:
                    latencies.append(self.end - op.deadline(k))
                    censored += 1
                k += 1
        mm = sum(getattr(p, "memory_mode_decisions", 0) for p in self.policies)
        return PolicyResult(self.name, latencies, [], censored, self.memory_samples, int(mm),
                            self.decisions)

    def mean_slowdown(self) -> float:
        """The mean cost factor memory contention imposed on the quanta run."""
        return sum(self.slowdowns) / len(self.slowdowns) if self.slowdowns else 1.0


def _base(policy: str) -> str:
    """The single-node policy object each node runs (``klink-local`` is Klink's code with no
    forwarded information)."""
    base = "klink" if policy == "klink-local" else policy
    assert base in POLICIES
    return base


@dataclass(frozen=True)
class ClusterComparison:
    """Each policy's result on one workload and cluster, with its mean contention slowdown."""

    offered_load: float
    results: dict[str, PolicyResult]
    slowdown: dict[str, float]


def compare_cluster(wconfig: WorkloadConfig, config: ClusterConfig,
                    policies: tuple[str, ...] = CLUSTER_POLICIES,
                    progress: Callable[[str], None] | None = None) -> ClusterComparison:
    """Run each policy on the same workload (built once)."""
    workload = build_workload(wconfig)
    offered = sum(m.rate * m.cost for m in workload) / (config.cores * config.nodes)
    results: dict[str, PolicyResult] = {}
    slowdown: dict[str, float] = {}
    for name in policies:
        sim = ClusterSimulation(workload, wconfig, config, name)
        results[name] = sim.run()
        slowdown[name] = sim.mean_slowdown()
        if progress:
            progress(name)
    return ClusterComparison(offered, results, slowdown)
