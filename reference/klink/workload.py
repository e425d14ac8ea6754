"""The simulated workload: windowed queries and their network-delayed input streams.

Model (documented in docs/klink.md; every number is a parameter of :class:`WorkloadConfig`):

* ``Q`` queries, deployed with a random phase (Klink §6.2.1 deploys each query at a random
  time so deadlines are spread). Each query is a filter (selectivity ``S``) feeding a tumbling
  event-time window of size 2, 3 or 4 s and an output operator; a fraction of them are
  windowed *joins* with two input streams (§3.3), the second one on a slower network path.
* Each input stream is a source that emits a batch of ``rate * batch_interval`` events every
  ``batch_interval`` seconds and a watermark stamped with its generation time every
  ``watermark_period`` seconds (an ordered source, so watermarks are exact, §2.2).
* Each item crosses the network with an i.i.d. delay (uniform, or Zipf with exponent 0.99 as
  in §6.2) through a FIFO channel: it is ingested at ``max(previous ingestion, generation +
  delay)``, so watermarks never overtake events.
* Load surges: every source's rate is multiplied by ``1 + A sin(2 pi t / T)`` (``A = 0.15``,
  ``T = 40`` s), the same for all queries, so the machine sees load spikes (Klink §1:
  "fluctuating or unpredictable load spikes") and latency climbs gradually with the mean
  load instead of jumping at 100%.
* Processing an event end-to-end costs ``cost`` seconds of one core (per-query costs and rates
  vary by +-50% around their means so the policies have something to tell apart); the
  offered load is exactly ``Q * load_per_query / cores`` of the machine.

The queries' parameters are drawn from ``random.Random(seed)`` and each input's delays from
its own generator seeded with ``(seed, query, input)``, so the queries do not change with the
horizon or the delay distribution: the workload, hence every policy's input, is a
deterministic function of the configuration.
"""

from __future__ import annotations

import bisect
import math
import random
from dataclasses import dataclass, field

from spec.errors import InputError, cut
from spec.klink.watermarks import WindowSpec

DELAYS = ("uniform", "zipf")

MAX_ITEMS = 600_000
"""Largest workload ``streamproof simulate klink`` simulates, in input-stream items (event
batches and watermarks, :meth:`WorkloadConfig.item_bound`; the default workload has
~215,000 and takes ~5 s of CPU). Every policy simulates every item at ~25 us of CPU each
(measured: 1.48M items took 44 s of CPU, 207 s on the loaded machine), so larger runs are
refused before anything is built."""


@dataclass(frozen=True)
class WorkloadConfig:
    """Parameters of the simulated workload (seconds, events per second)."""

    queries: int = 64
    delays: str = "uniform"
    seed: int = 1
    horizon: float = 100.0
    drain: float = 20.0
    batch_interval: float = 0.1
    watermark_period: float = 0.25
    rate: float = 1000.0
    load_per_query: float = 0.06
    window_sizes: tuple[float, ...] = (2.0, 3.0, 4.0)
    join_fraction: float = 0.25
    join_slow_path: float = 1.5
    delay_low: float = 0.05
    delay_high_uniform: float = 0.45
    delay_high_zipf: float = 1.05
    zipf_exponent: float = 0.99
    zipf_values: int = 50
    fire_cost: float = 0.002
    surge_amplitude: float = 0.15
    surge_period: float = 40.0

    def __post_init__(self) -> None:
        if self.queries < 1:
            raise InputError(f"need at least one query, got {self.queries}", "--queries")
        if self.delays not in DELAYS:
            raise InputError(f"unknown delay distribution {self.delays!r} (expected one of {DELAYS})", "--delays")
        if not self.horizon > 0 or self.drain < 0:
            raise InputError("horizon must be positive and drain non-negative", "workload")

    def check_size(self, limit: int | None = None) -> None:
        """Refuse a workload of more than ``limit`` (default :data:`MAX_ITEMS`) input items
        (:meth:`item_bound`) before anything is built: what ``streamproof simulate klink``
        calls; library users (benchmarks) choose their own sizes."""
        limit = MAX_ITEMS if limit is None else limit
        if self.item_bound() > limit:
            raise InputError(
                f"{cut(f'{self.queries:,}', 30)} queries over {self.horizon:g} s (+{self.drain:g} s drain) "
                f"are up to {_count(self.item_bound())} input items; at most {limit:,} are "
                "simulated (lower --queries or --horizon)", "--queries/--horizon")

    def item_bound(self) -> float:
        """An upper bound of the workload's input-stream items: every query with two inputs,
        each a batch every ``batch_interval`` and a watermark every ``watermark_period``
        seconds until ``horizon + drain``."""
        end = self.horizon + self.drain
        per_stream = end / self.batch_interval + end / self.watermark_period + 2
        if self.queries > 10**15:
            return math.inf
        return float(self.queries) * 2 * per_stream


def _count(number: float) -> str:
    if number == math.inf:
        return "more than 10^15"
    return f"{number:,.0f}" if number < 1e15 else f"{number:.1e}"


@dataclass
class InputStream:
    """One input stream's items in ingestion order: ingestion time, generation time, number
    of events (0 for a watermark, whose timestamp is its generation time)."""

    arrival: list[float] = field(default_factory=list)
    generated: list[float] = field(default_factory=list)
    size: list[int] = field(default_factory=list)
    delay_scale: float = 1.0


@dataclass
class QueryModel:
    """One windowed query: its window, per-event cost, selectivity and input streams."""

    index: int
    window: WindowSpec
    cost: float
    selectivity: float
    rate: float
    inputs: list[InputStream]

    @property
    def is_join(self) -> bool:
        """Two or more inputs: a windowed join (Klink §3.3)."""
        return len(self.inputs) > 1


class DelaySampler:
    """Network delays: uniform on ``[low, high]`` or Zipf(s) on ``zipf_values`` evenly spaced
    values from ``low`` to ``high``."""

    def __init__(self, config: WorkloadConfig, rng: random.Random) -> None:
        self.rng = rng
        self.kind = config.delays
        self.low = config.delay_low
        if self.kind == "uniform":
            self.high = config.delay_high_uniform
            self.cumulative: list[float] = []
        else:
            self.high = config.delay_high_zipf
            weights = [k ** -config.zipf_exponent for k in range(1, config.zipf_values + 1)]
            total = sum(weights)
            acc = 0.0
            self.cumulative = []
            for w in weights:
                acc += w / total
                self.cumulative.append(acc)

    def sample(self) -> float:
        """One delay in seconds."""
        u = self.rng.random()
        if self.kind == "uniform":
            return self.low + (self.high - self.low) * u
        k = min(bisect.bisect_left(self.cumulative, u), len(self.cumulative) - 1)
        return self.low + (self.high - self.low) * k / (len(self.cumulative) - 1)


def _stream(config: WorkloadConfig, rate: float, scale: float, phase: float,
            sampler: DelaySampler) -> InputStream:
    stream = InputStream(delay_scale=scale)
    end = config.horizon + config.drain
    emissions: list[tuple[float, int]] = []
    k = 0
    while (g := phase + k * config.batch_interval) <= end:
        surge = 1.0 + config.surge_amplitude * math.sin(2.0 * math.pi * g / config.surge_period)
        emissions.append((g, max(1, round(rate * config.batch_interval * surge))))
        k += 1
    k = 1
    while (g := k * config.watermark_period) <= end:
        emissions.append((g, 0))
        k += 1
    emissions.sort(key=lambda e: (e[0], e[1] == 0))
    last = 0.0
    for generated, size in emissions:
        last = max(last, generated + scale * sampler.sample())
        stream.arrival.append(last)
        stream.generated.append(generated)
        stream.size.append(size)
    return stream


def build_workload(config: WorkloadConfig) -> list[QueryModel]:
    """The ``Q`` queries of ``config``, deterministically from ``config.seed``.

    Per-query loads vary by +-50%, then are rescaled so the offered load is exactly
    ``Q * load_per_query / cores`` whatever the seed (seeds change which query is heavy, not
    how loaded the machine is)."""
    rng = random.Random(config.seed)
    drawn = []
    for _ in range(config.queries):
        size = rng.choice(config.window_sizes)
        window = WindowSpec(size=size, slide=size, offset=rng.uniform(0.0, size))
        rate = config.rate * rng.uniform(0.5, 1.5)
        load = rng.uniform(0.5, 1.5)
        selectivity = rng.uniform(0.1, 0.9)
        join = rng.random() < config.join_fraction
        scales = [1.0, config.join_slow_path] if join else [1.0]
        phases = [rng.uniform(0.0, config.batch_interval) for _ in scales]
        drawn.append((window, rate, load, selectivity, scales, phases))
    norm = config.queries / sum(d[2] for d in drawn)
    queries: list[QueryModel] = []
    for index, (window, rate, load, selectivity, scales, phases) in enumerate(drawn):
        inputs = [
            _stream(config, rate / len(scales), scale, phase,
                    DelaySampler(config, random.Random(f"{config.seed}/{index}/{n}")))
            for n, (scale, phase) in enumerate(zip(scales, phases))
        ]
        cost = config.load_per_query * load * norm / rate
        queries.append(QueryModel(index, window, cost, selectivity, rate, inputs))
    return queries
