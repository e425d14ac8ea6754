"""How often ``check-dgs``'s Z3-first step answers within ``--prove-budget`` on the shipped
examples, and what it costs: each example through the CLI (``--json``) with the default budget
and with ``--prove-budget 0``, side by side.

    .venv/bin/python benchmarks/dgs_prove_budget.py [--budget SECONDS]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time

from reference.dgs.examples import CONSISTENT, INCONSISTENT, target


def run(name: str, budget: str) -> tuple[int, float, dict[str, object]]:
    """Exit code, wall seconds and the --json document of one check-dgs run."""
    start = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "streamproof.main", "check-dgs", target(name), "--json",
                           "--prove-budget", budget], capture_output=True, text=True, check=False)
    return done.returncode, time.monotonic() - start, json.loads(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--budget", default="2")
    args = parser.parse_args()
    answered = total = 0
    walls = [0.0, 0.0]
    print(f"{'example':40} {'exit':>4} {'off':>4} {'wall s':>7} {'off s':>6} {'ratio':>5}  prover (status, s)")
    for name in (*CONSISTENT, *INCONSISTENT):
        code, wall, document = run(name, args.budget)
        code0, wall0, _ = run(name, "0")
        walls[0] += wall
        walls[1] += wall0
        conditions = document["conditions"]
        assert isinstance(conditions, dict)
        cells = []
        for condition, entry in conditions.items():
            prover = entry["prover"]
            total += 1
            answered += prover["status"] in ("proved", "violated")
            cells.append(f"{condition} {prover['status']} {prover['seconds']:.1f}")
        print(f"{name:40} {code:>4} {code0:>4} {wall:7.1f} {wall0:6.1f} {wall / wall0:5.2f}  {'; '.join(cells)}")
    print(f"answered within {args.budget} s: {answered}/{total}; wall {walls[0]:.0f} s vs {walls[1]:.0f} s "
          f"without ({walls[0] / walls[1]:.2f}x)")


if __name__ == "__main__":
    main()
