"""Speed of ``streamproof mcs`` on large DAGs: a wide DAG (N sources, each
through its own one-to-many operator, into one merge) for N = 10k and 40k, and a dense
random DAG of 2,000 operators (~78k edges, seeded) with 1 and 50 reconfigured operators.

Each DAG.json is checked by running the ``streamproof mcs ... --json`` command as a
subprocess; the table gives wall and CPU seconds and the ratio time(40k) / time(10k)
(target <= 6: linear would be 4).

Usage: ``python benchmarks/mcs_perf.py [--sizes 10000,40000] [--dense 2000]``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import tempfile
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from check_schedule_perf import command, timed  # noqa: E402


def wide_dag(sources: int) -> tuple[dict[str, Any], list[str]]:
    """S_i -> X_i (one-to-many) -> M (one-to-one) -> K; reconfigure M."""
    ops: list[dict[str, Any]] = []
    edges: list[list[str]] = []
    for i in range(sources):
        ops += [{"name": f"S{i}", "kind": "source"}, {"name": f"X{i}", "kind": "one-to-many"}]
        edges += [[f"S{i}", f"X{i}"], [f"X{i}", "M"]]
    ops += [{"name": "M", "kind": "one-to-one"}, {"name": "K", "kind": "one-to-one"}]
    edges.append(["M", "K"])
    return {"operators": ops, "edges": edges}, ["M"]


def dense_dag(size: int, reconfigured: int, seed: int = 17) -> tuple[dict[str, Any], list[str]]:
    """``size`` operators in a random order; each pair (i < j) an edge with probability
    0.039 (~78k edges for 2,000); 20 sources; kinds drawn from one-to-one, one-to-many,
    replicate (some unique)."""
    rng = random.Random(seed)
    names = [f"V{i}" for i in range(size)]
    edges = [[names[i], names[j]] for i in range(size) for j in range(i + 1, size)
             if rng.random() < 0.039]
    fed = {b for _, b in edges}
    kinds = ["one-to-one", "one-to-one", "one-to-many", "replicate"]
    ops = []
    for name in names:
        if name not in fed:
            ops.append({"name": name, "kind": "source"})
        else:
            ops.append({"name": name, "kind": rng.choice(kinds), "unique": rng.random() < 0.1})
    chosen = rng.sample(sorted(fed), reconfigured)
    return {"operators": ops, "edges": edges}, chosen


def run(folder: Path, label: str, dag: dict[str, Any], targets: list[str],
        rows: list[tuple[str, int, int, float, float]]) -> float:
    path = folder / "dag.json"
    path.write_text(json.dumps(dag))
    seconds, cpu, _, code, _ = timed([*command(), "mcs", str(path), "--reconfigure",
                                      ",".join(targets), "--json"])
    assert code == 0
    rows.append((label, len(dag["operators"]), len(dag["edges"]), seconds, cpu))
    return cpu


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="10000,40000")
    parser.add_argument("--dense", type=int, default=2000)
    args = parser.parse_args()
    rows: list[tuple[str, int, int, float, float]] = []
    with tempfile.TemporaryDirectory(prefix="sp-mcs-") as tmp:
        folder = Path(tmp)
        sizes = [int(s) for s in args.sizes.split(",")]
        cpus = [run(folder, f"wide, {n:,} sources", *wide_dag(n), rows) for n in sizes]
        for k in (1, 50):
            run(folder, f"dense, {k} reconfigured", *dense_dag(args.dense, k), rows)
    header = f"{'case':<26} {'operators':>9} {'edges':>7} {'wall s':>7} {'CPU s':>6}"
    print(header)
    print("-" * len(header))
    for label, ops, edges, seconds, cpu in rows:
        print(f"{label:<26} {ops:>9,} {edges:>7,} {seconds:>7.2f} {cpu:>6.2f}")
    if len(cpus) == 2:
        print(f"CPU ratio {sizes[1]:,} / {sizes[0]:,} sources: {cpus[1] / cpus[0]:.2f} "
              f"(target <= 6)")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
