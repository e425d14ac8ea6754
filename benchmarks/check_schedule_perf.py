"""End-to-end speed of ``streamproof check-schedule`` on a large schedule (issue 2 §5).

Generates SCHEDULE.json files with N data transactions (default 1,000,000) and one update
transaction R over 10 objects; every data transaction visits 5 of the 10 objects (about 5N
operations, ~60 MB for N = 1M). Two cases:

* ``serializable`` - R updates every object between transaction N/2 - 1 and N/2 (what a
  correct scheduler produces): exit 0, a serial order of N + 1 transactions;
* ``one violation`` - the same, but on one object R comes one transaction later, so one
  transaction is processed both before and after the update: exit 1, the 2-cycle witness.

Each file is checked by running the ``streamproof`` command as a subprocess (process start,
JSON parsing, validation, checking and printing included), with and without ``--json``.
Usage: ``python benchmarks/check_schedule_perf.py [--transactions N] [--keep DIR]``.
"""

from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

OBJECTS = 10
VISITS = 5


def write_schedule(path: Path, transactions: int, late_object: int | None) -> int:
    """Write the schedule; return its number of operations. Transaction i visits objects
    i, i+1, ..., i+4 (mod 10); R updates each object just before transaction N/2 (on
    ``late_object``, just after it)."""
    cut = transactions // 2
    logs: list[list[str]] = [[] for _ in range(OBJECTS)]
    update = '{"txn":"R","update":true}'
    placed = [False] * OBJECTS
    for i in range(transactions):
        op = f'{{"txn":"t{i}"}}'
        for k in range(VISITS):
            obj = (i + k) % OBJECTS
            log = logs[obj]
            if i >= cut and not placed[obj]:
                placed[obj] = True
                if obj == late_object:  # the violation: R after this transaction here
                    log.append(op)
                    log.append(update)
                    continue
                log.append(update)
            log.append(op)
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"logs": {')
        for obj, log in enumerate(logs):
            handle.write(("," if obj else "") + f'\n"O{obj}": [')
            handle.write(",".join(log))
            handle.write("]")
        handle.write("}}\n")
    return sum(len(log) for log in logs)


def command() -> list[str]:
    """The installed ``streamproof`` next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).with_name("streamproof")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "conformance.cli.main"]


def timed(args: list[str]) -> tuple[float, float, int, int]:
    """(wall seconds, CPU seconds, exit code, bytes printed) of one run. CPU time (user +
    system of the child) is reported too because wall time on a shared machine also
    counts the time other processes hold the cores."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, check=False)
    elapsed = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    if done.returncode not in (0, 1):
        raise SystemExit(f"check-schedule failed: {done.stderr.decode().strip()}")
    return elapsed, cpu, done.returncode, len(done.stdout)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=1_000_000)
    parser.add_argument("--keep", metavar="DIR", help="write the files here and keep them")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="sp-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    rows: list[tuple[str, str, float, int, float, float, int, int]] = []
    try:
        for case, late in (("serializable", None), ("one violation", 3)):
            path = folder / f"schedule-{case.replace(' ', '-')}.json"
            ops = write_schedule(path, args.transactions, late)
            size = os.path.getsize(path) / 1e6
            for flags in ([], ["--json"]):
                seconds, cpu, code, printed = timed(
                    [*command(), "check-schedule", str(path), *flags])
                rows.append((case, " ".join(flags) or "(text)", size, ops, seconds, cpu, code,
                             printed))
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    header = f"{'case':<14} {'output':<7} {'file MB':>8} {'operations':>11} {'wall s':>7} " \
             f"{'CPU s':>6} {'ops/s (wall)':>12} {'exit':>4} {'stdout bytes':>12}"
    print(header)
    print("-" * len(header))
    for case, shown, size, ops, seconds, cpu, code, printed in rows:
        print(f"{case:<14} {shown:<7} {size:>8.1f} {ops:>11,} {seconds:>7.2f} {cpu:>6.2f} "
              f"{ops / seconds:>12,.0f} {code:>4} {printed:>12,}")
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
