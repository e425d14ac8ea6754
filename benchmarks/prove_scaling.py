"""How far the bounded-exhaustive Fries proofs scale.

Runs every Fries row of ``streamproof prove`` for N = --start, --start + 1, ... operators and
prints one line per N: the seconds of each row and the total. Stops after the first N whose
table takes longer than --budget seconds (default 600: 10 minutes) or whose rows
are not all as expected; the largest N within budget is printed last. Each row runs with a
Z3 time limit of --budget seconds. Timings depend heavily on machine load.

Usage: ``python benchmarks/prove_scaling.py [--start 5] [--stop 14] [--budget 600]``.
"""

from __future__ import annotations

import argparse
import time

from proofs.fries.items import fries_items
from proofs.result import run_item


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--start", type=int, default=5)
    parser.add_argument("--stop", type=int, default=14)
    parser.add_argument("--budget", type=float, default=600.0)
    args = parser.parse_args()
    largest = None
    print(f"{'N':>3}  {'total s':>8}  {'ok':>5}  slowest row")
    for n in range(args.start, args.stop + 1):
        start = time.perf_counter()
        results = []
        for item in fries_items(n):
            results.append(run_item(item, int(args.budget * 1000)))
            if time.perf_counter() - start > args.budget:
                break
        total = time.perf_counter() - start
        ok = len(results) == len(fries_items(n)) and all(r.as_expected for r in results)
        slowest = max(results, key=lambda r: r.seconds)
        print(f"{n:>3}  {total:8.1f}  {str(ok):>5}  {slowest.reference} ({slowest.seconds:.1f} s)",
              flush=True)
        if not ok or total > args.budget:
            break
        largest = n
    print(f"largest N (of those tried, up to --stop {args.stop}) within {args.budget:.0f} s: {largest}")


if __name__ == "__main__":
    main()
