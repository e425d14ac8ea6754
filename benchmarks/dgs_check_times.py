"""How long ``streamproof check-dgs`` takes on each shipped DGS example (target: each
shipped example checks in under 20 s by default).

Runs the ``streamproof`` command as a subprocess per example with default settings (200
examples per condition, seed 0) and prints wall-clock and user CPU seconds, the exit code and
the verdict line. Usage: ``python benchmarks/dgs_check_times.py [--examples N] [--seed S]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from reference.dgs.examples import CONSISTENT, INCONSISTENT, target  # noqa: E402

PROGRAMS = (*CONSISTENT, *INCONSISTENT)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--examples", type=int, default=None)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    command = [sys.executable, "-m", "streamproof.main", "check-dgs"]
    extra = ["--seed", str(args.seed)] + (["--examples", str(args.examples)] if args.examples is not None else [])
    print(f"load average before: {os.getloadavg()[0]:.1f}")
    print(f"{'program':42} {'wall s':>7} {'user s':>7} {'exit':>4} {'expected':>8}  verdict")
    for program in PROGRAMS:
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime
        start = time.perf_counter()
        done = subprocess.run([*command, target(program), *extra], capture_output=True, text=True, cwd=ROOT)
        wall = time.perf_counter() - start
        user = resource.getrusage(resource.RUSAGE_CHILDREN).ru_utime - before
        lines = done.stdout.strip().splitlines() or [done.stderr.strip()]
        expected = 1 if program in INCONSISTENT else 0
        agrees = "yes" if done.returncode == expected else "NO"
        print(f"{program:42} {wall:7.2f} {user:7.2f} {done.returncode:>4} {agrees:>8}  {lines[-1]}")


if __name__ == "__main__":
    main()
