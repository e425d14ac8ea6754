"""The plain-text summary of a conformance run (shared by the catalogue run and ``--job``)."""

from __future__ import annotations

import json
import sys
from typing import Any


FRIES_SUITES = ("fries", "userjob")
"""The suites that run the Fries executor (the engine the summary's ``fries engine:`` names)."""


def print_summary(results: list[Any]) -> None:
    """Print the table of every suite's checks, then each shrunk failure (what
    ``streamproof conformance`` prints without ``--json``)."""
    rows = [("suite", "check", "cases", "failed", "time s", "cases/s", "status")]
    for result in results:
        for check in result.checks:
            if check.status != "ran":
                rows.append((result.suite, check.name, "-", "-", "-", "-", f"NOT RUN: {check.note}"))
                continue
            rate = f"{check.cases / check.elapsed_s:.1f}" if check.elapsed_s > 0 else "-"
            rows.append((result.suite, check.name, str(check.cases), str(check.failed),
                         f"{check.elapsed_s:.1f}", rate, "FAIL" if check.failed else "pass"))
    widths = [max(len(row[i]) for row in rows) for i in range(6)]
    for row in rows:
        print("  ".join(cell.ljust(widths[i]) if i < 2 else cell.rjust(widths[i])
                        for i, cell in enumerate(row[:6])) + "  " + row[6])
    # the engine the Fries executor ran on: the catalogue's Fries suite and a user job (--job)
    # run it; a run without either (--operator, --suite dgs) has no Fries engine to name
    engines = sorted({r.engine for r in results if r.suite in FRIES_SUITES})
    faults = sorted({f for r in results for f in r.faults})
    fries = f"fries engine: {', '.join(engines)}; " if engines else ""
    print(f"\nseed {results[0].seed if results else 0}; {fries}injected faults: {', '.join(faults) or 'none'}")
    for result in results:
        for failure in result.failures:
            print(f"\nFAILED {result.suite} / {failure.check}: case {failure.case_index} "
                  f"(shrunk from size {failure.original_size} to {failure.shrunk_size} in "
                  f"{failure.shrink_steps} steps)")
            print(failure.explanation)
            print("shrunk case: " + json.dumps(failure.shrunk_case, separators=(",", ":")))
            if failure.replay_file:
                print(f"saved: {failure.replay_file}\n       {failure.pytest_file}")
    sys.stdout.flush()
