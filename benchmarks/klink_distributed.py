"""Distributed Klink (§4, §6.2.4) and memory contention (§3.4, §6.2.1) side by side.

    python benchmarks/klink_distributed.py                 # both tables (several minutes)
    python benchmarks/klink_distributed.py --quick         # small, for a smoke run
    python benchmarks/klink_distributed.py --only memory   # one of: distributed, memory

Both tables run :mod:`reference.klink.cluster` (operators scheduled per node; model in
docs/klink.md) on the workload of ``reference.klink.workload`` with uniform delays:

1. ``distributed``: N = 1, 2, 4 nodes with 4 cores each and ``--per-node`` queries per node
   (~96% offered load on every node; each query's filter and window on two different nodes
   when N > 1). Klink with §4's forwarding, Klink without it (``klink-local``: each node runs
   single-node Klink on what it sees), FCFS, RR and HR. The paper (Fig. 6e) reports Klink
   about 40% below the other policies at every cluster size. StreamBox is left out as in the
   paper (it needs the whole pipeline's state, which no node has).
2. ``memory``: one node, the same policies plus Klink without the memory policy, with memory
   contention off and on (events cost up to ``1 + contention`` times more as memory goes from
   the stress bound b to the capacity). The paper reports Klink's memory management cutting
   p99 latency by about 20% against Klink without it (§6.2.1, Fig. 6b).

Every run is deterministic (seeded); figures are simulated seconds, so machine load changes
only how long the script takes.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from reference.klink.cluster import ClusterConfig, compare_cluster  # noqa: E402
from reference.klink.workload import WorkloadConfig  # noqa: E402

DISTRIBUTED = ("klink", "klink-local", "fcfs", "rr", "hr")
MEMORY = ("klink", "klink-nomm", "fcfs", "rr", "hr")


def _lower(klink: float, other: float) -> str:
    return "" if other <= 0 else f"{100 * (1 - klink / other):+.0f}%"


def distributed_table(nodes: list[int], per_node: int, horizon: float, seed: int) -> None:
    print(f"\n## distributed: {per_node} queries per node, 4 cores per node, uniform delays, "
          f"{horizon:g} s measured, seed {seed}\n")
    print("| nodes | load | policy | mean s | p99 s | censored | Klink mean lower | Klink p99 lower |")
    print("| ---: | ---: | --- | ---: | ---: | ---: | ---: | ---: |")
    for n in nodes:
        started = time.time()
        result = compare_cluster(WorkloadConfig(queries=per_node * n, horizon=horizon, seed=seed),
                                 ClusterConfig(nodes=n), DISTRIBUTED)
        klink = result.results["klink"].summary()
        for name in DISTRIBUTED:
            s = result.results[name].summary()
            print(f"| {n} | {100 * result.offered_load:.0f}% | {name} | {s['mean']:.3f} "
                  f"| {s['p99']:.3f} | {s['censored']} "
                  f"| {'' if name == 'klink' else _lower(klink['mean'], s['mean'])} "
                  f"| {'' if name == 'klink' else _lower(klink['p99'], s['p99'])} |", flush=True)
        print(f"<!-- {n} node(s): {time.time() - started:.0f} s wall -->", flush=True)


def memory_table(queries: int, horizon: float, seed: int, bound: float, capacity: float,
                 contention: float) -> None:
    print(f"\n## memory contention: 1 node, 4 cores, {queries} queries, stress bound b = "
          f"{bound:g} s of input, capacity {capacity:g} s, up to {1 + contention:g}x cost, "
          f"seed {seed}\n")
    print("| contention | policy | mean s | p99 s | memory mean | memory p99 | mean cost factor "
          "| memory-policy decisions | censored |")
    print("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
    for label, cap in (("off", None), ("on", capacity)):
        result = compare_cluster(
            WorkloadConfig(queries=queries, horizon=horizon, seed=seed),
            ClusterConfig(nodes=1, memory_bound_seconds=bound, memory_capacity_seconds=cap,
                          contention=contention), MEMORY)
        for name in MEMORY:
            s = result.results[name].summary()
            print(f"| {label} | {name} | {s['mean']:.3f} | {s['p99']:.3f} "
                  f"| {s['memory_mean']:.0f} | {s['memory_p99']:.0f} "
                  f"| {result.slowdown[name]:.2f} | {100 * s['memory_mode_share']:.1f}% "
                  f"| {s['censored']} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small workloads, short horizon")
    parser.add_argument("--only", choices=("distributed", "memory"))
    parser.add_argument("--nodes", default="1,2,4")
    parser.add_argument("--per-node", type=int, default=64)
    parser.add_argument("--horizon", type=float, default=40.0)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args()
    nodes = [int(n) for n in args.nodes.split(",")]
    per_node, horizon = (16, 20.0) if args.quick else (args.per_node, args.horizon)
    if args.only in (None, "distributed"):
        distributed_table(nodes, per_node, horizon, args.seed)
    if args.only in (None, "memory"):
        memory_table(per_node, horizon, args.seed, bound=0.8, capacity=1.6, contention=0.5)


if __name__ == "__main__":
    main()
