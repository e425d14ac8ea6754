"""Klink against the baseline schedulers, the SWM estimator's accuracy, and Enorm fusion.

    python benchmarks/klink_policies.py            # everything (several minutes)
    python benchmarks/klink_policies.py --quick    # 1 seed, a short horizon, 50 jobs per size
    python benchmarks/klink_policies.py --only fusion    # one of: policies, sweep, fusion

Tables:

1. ``policies``: at the default load (64 queries on 4 cores, ~95% offered load, where the
   baselines' latency has started to climb), for uniform and Zipf network delays: each
   policy's mean / p99 output latency and mean / p99 memory, averaged over ``--seeds`` seeds,
   and how much lower Klink's figure is (Klink §6.2.1 reports ~50% lower mean latency than
   FCFS / RR and ~45% lower than HR). Then the SWM estimator's accuracy at f = 90% and 95%
   (Klink §6.2.5, Fig. 9c), with the mixture variance the scheduler uses and with Eq. 6
   taken literally.
2. ``sweep``: mean and p99 latency against the number of queries (the shape of Fig. 6a).
3. ``fusion``: Enorm §7.6: random jobs of 50, 100 and 150 operators over 30 partition
   attributes; average number of components and inter-component traffic (% of all traffic)
   for Alg. 1 with score = COMM, score = PA, and the §7.6 baseline; plus the average maximum
   parallelism: the median number of shared attributes |PA(C)| and how many components
   are limited to fewer than 100 nodes (PA^c < 100); how many are flexible / stateless.

The model behind the numbers is in docs/klink.md; everything is seeded and deterministic.
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference.fusion.baseline import baseline_fusion  # noqa: E402
from reference.fusion.greedy import automatic_fusion  # noqa: E402
from reference.fusion.random_jobs import random_job  # noqa: E402
from reference.klink.results import estimator_accuracy  # noqa: E402
from reference.klink.simulator import SimConfig, compare  # noqa: E402
from reference.klink.workload import WorkloadConfig  # noqa: E402
from spec.fusion.components import (  # noqa: E402
    component_pa,
    inter_component_percent,
    is_flexible,
    is_stateless,
    is_valid_fusion,
    max_parallelism,
)

POLICIES = ("klink", "fcfs", "rr", "hr", "klink-nomm", "sbox")


def _lower(klink: float, other: float) -> str:
    return "" if other <= 0 else f"{100 * (1 - klink / other):+.0f}%"


def policies_table(seeds: int, horizon: float, queries: int, cores: int) -> None:
    """Table 1: Klink vs each baseline, and the estimator's accuracy."""
    for delays in ("uniform", "zipf"):
        rows: dict[str, dict[str, list[float]]] = {p: {} for p in POLICIES}
        accuracy: dict[str, list[float]] = {}
        load = 0.0
        started = time.time()
        for seed in range(1, seeds + 1):
            result = compare(WorkloadConfig(queries=queries, delays=delays, seed=seed, horizon=horizon),
                             SimConfig(cores=cores), POLICIES)
            load = result.offered_load
            for name, run in result.results.items():
                for key, value in run.summary().items():
                    rows[name].setdefault(key, []).append(float(value))
            for mode in ("mixture", "eq6"):
                for f in (0.90, 0.95):
                    accuracy.setdefault(f"{mode} f={round(100 * f)}%", []).append(
                        estimator_accuracy(result.forecasts, f, mode))
        avg = {p: {k: statistics.fmean(v) for k, v in r.items()} for p, r in rows.items()}
        k = avg["klink"]
        print(f"\n## {delays} delays: {queries} queries, {cores} cores, offered load {100 * load:.1f}%, "
              f"{seeds} seed(s), {horizon:.0f} s measured ({time.time() - started:.0f} s wall)\n")
        print("| policy | mean s | p99 s | after-SWM mean s | memory mean | memory p99 | censored "
              "| Klink mean lower | Klink p99 lower | Klink memory lower |")
        print("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for name in POLICIES:
            r = avg[name]
            print(f"| {name} | {r['mean']:.3f} | {r['p99']:.3f} | {r['after_swm_mean']:.3f} "
                  f"| {r['memory_mean']:.0f} | {r['memory_p99']:.0f} | {r['censored']:.1f} "
                  f"| {'' if name == 'klink' else _lower(k['mean'], r['mean'])} "
                  f"| {'' if name == 'klink' else _lower(k['p99'], r['p99'])} "
                  f"| {'' if name == 'klink' else _lower(k['memory_mean'], r['memory_mean'])} |")
        print(f"\nSWM estimator accuracy ({delays}): " + ", ".join(
            f"{key} {100 * statistics.fmean(v):.1f}%" for key, v in accuracy.items()))


def sweep_table(horizon: float, cores: int, counts: list[int]) -> None:
    """Table 2: latency against the number of queries (uniform delays, seed 1)."""
    print(f"\n## mean / p99 output latency (s) against the number of queries ({cores} cores, uniform)\n")
    print("| queries | load | " + " | ".join(POLICIES) + " |")
    print("| ---: | ---: | " + " | ".join("---:" for _ in POLICIES) + " |")
    for queries in counts:
        result = compare(WorkloadConfig(queries=queries, horizon=horizon), SimConfig(cores=cores), POLICIES)
        cells = []
        for name in POLICIES:
            s = result.results[name].summary()
            censored = f" ({s['censored']} censored)" if s["censored"] else ""
            cells.append(f"{s['mean']:.2f} / {s['p99']:.2f}{censored}")
        print(f"| {queries} | {100 * result.offered_load:.0f}% | " + " | ".join(cells) + " |")


def fusion_table(jobs: int, seed: int) -> None:
    """Table 3: Enorm §7.6 on random jobs."""
    print(f"\n## Enorm fusion on random jobs (30 partition attributes, {jobs} jobs per size, seed {seed})\n")
    print("| operators | heuristic | components | inter-component traffic % | median PA(C) size "
          "| components with PA^c < 100 | flexible | stateless |")
    print("| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    rng = random.Random(seed)
    for size in (50, 100, 150):
        stats: dict[str, dict[str, list[float]]] = {}
        for _ in range(jobs):
            job = random_job(size, rng)
            runs = {
                "Alg. 1, score = COMM": automatic_fusion(job, "comm"),
                "Alg. 1, score = PA": automatic_fusion(job, "pa"),
                "baseline (§7.6)": baseline_fusion(job, rng),
            }
            for name, components in runs.items():
                assert is_valid_fusion(job, components), name
                par = [max_parallelism(job, c) for c in components]
                s = stats.setdefault(name, {})
                for key, value in (
                    ("components", len(components)),
                    ("traffic", inter_component_percent(job, components)),
                    ("shared", statistics.median(len(component_pa(job, c)) for c in components)),
                    ("limited", sum(1 for p in par if p < 100)),
                    ("flexible", sum(is_flexible(job, c) for c in components)),
                    ("stateless", sum(is_stateless(job, c) for c in components)),
                ):
                    s.setdefault(key, []).append(float(value))
        for name, s in stats.items():
            m = {k: statistics.fmean(v) for k, v in s.items()}
            print(f"| {size} | {name} | {m['components']:.1f} | {m['traffic']:.1f} | {m['shared']:.1f} "
                  f"| {m['limited']:.1f} | {m['flexible']:.1f} | {m['stateless']:.1f} |")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 seed, 60 s horizon, 50 jobs per size")
    parser.add_argument("--only", choices=("policies", "sweep", "fusion"))
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=200, help="random jobs per size (the paper uses 500)")
    parser.add_argument("--queries", type=int, default=64)
    parser.add_argument("--cores", type=int, default=4)
    args = parser.parse_args()
    seeds, horizon, jobs = (1, 60.0, 50) if args.quick else (args.seeds, 100.0, args.jobs)
    if args.only in (None, "policies"):
        policies_table(seeds, horizon, args.queries, args.cores)
    if args.only in (None, "sweep"):
        sweep_table(horizon, args.cores, [48, 56, 60, 62, 64, 66, 68])
    if args.only in (None, "fusion"):
        fusion_table(jobs, 1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
