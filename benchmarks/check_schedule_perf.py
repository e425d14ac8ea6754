"""End-to-end speed and memory of ``streamproof check-schedule`` on large schedules.

Generated SCHEDULE.json files: N data transactions over 10 objects, transaction i visits
objects i, i+1, ..., i+4 (mod 10) (about 5N operations, 18 bytes each). Shapes:

* ``serializable`` - one update transaction R on every object between transaction N/2 - 1
  and N/2 (what a correct scheduler produces): exit 0, a serial order of N + 1 transactions;
* ``one violation`` - the same, but on one object R comes one transaction later: exit 1;
* ``U random updates`` - update transactions R0..R(U-1), each on every object at a random
  position (seeded): not serializable, many cycles.

Each file is checked by running the ``streamproof`` command as a subprocess (process start,
reading, validation, checking and printing included); wall time, CPU time (user + system)
and the peak resident memory of that process are reported.

Usage: ``python benchmarks/check_schedule_perf.py [--transactions N] [--keep DIR]`` (the
four classic runs), ``--ratios`` (100k + 1,000 updates against 100k + 1 update,
3M against 1M; ``--memory`` adds the 10M-transaction file, ~900 MB on disk).
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

OBJECTS = 10
VISITS = 5
UPDATE = '{"txn":"R","update":true}'


def _visitors(obj: int, transactions: int) -> Iterator[int]:
    """The transactions visiting ``obj``, ascending: i with (obj - i) mod 10 < 5."""
    for base in range(0, transactions, OBJECTS):
        for k in range(VISITS):
            i = base + (obj - k) % OBJECTS
            if i < transactions:
                yield i


def _write_log(handle: "object", ops: Iterator[str]) -> int:
    count = 0
    batch: list[str] = []
    for op in ops:
        batch.append(op)
        if len(batch) == 100_000:
            handle.write(("," if count else "") + ",".join(batch))  # type: ignore[attr-defined]
            count += len(batch)
            batch = []
    if batch:
        handle.write(("," if count else "") + ",".join(batch))  # type: ignore[attr-defined]
        count += len(batch)
    return count


def write_schedule(path: Path, transactions: int, late_object: int | None = None,
                   updates: int = 0, seed: int = 17) -> int:
    """Write one schedule (module docstring; ``updates`` > 0 is the random-updates shape);
    return its number of operations. Streams, so 10M transactions need little memory."""
    cut = transactions // 2
    rng = random.Random(seed)
    total = 0
    with open(path, "w", encoding="utf-8") as handle:
        handle.write('{"logs": {')
        for obj in range(OBJECTS):
            visitors = sorted(_visitors(obj, transactions))
            handle.write(("," if obj else "") + f'\n"O{obj}": [')
            if updates:
                cuts = sorted(rng.randrange(len(visitors) + 1) for _ in range(updates))
                ops = _with_updates(visitors, cuts)
            else:
                at = next((k for k, i in enumerate(visitors) if i >= cut), len(visitors))
                at += 1 if obj == late_object else 0
                ops = _with_updates(visitors, [at], single=True)
            total += _write_log(handle, ops)
            handle.write("]")
        handle.write("}}\n")
    return total


def _with_updates(visitors: list[int], cuts: list[int], single: bool = False) -> Iterator[str]:
    j = 0
    for k, i in enumerate(visitors):
        while j < len(cuts) and cuts[j] == k:
            yield UPDATE if single else f'{{"txn":"R{j}","update":true}}'
            j += 1
        yield f'{{"txn":"t{i}"}}'
    while j < len(cuts):
        yield UPDATE if single else f'{{"txn":"R{j}","update":true}}'
        j += 1


def command() -> list[str]:
    """The installed ``streamproof`` next to this interpreter, else ``python -m``."""
    script = Path(sys.executable).with_name("streamproof")
    if script.exists():
        return [str(script)]
    return [sys.executable, "-m", "streamproof.main"]


def timed(args: list[str]) -> tuple[float, float, float, int, int]:
    """(wall seconds, CPU seconds, peak RSS MB, exit code, bytes printed) of one run of
    ``args``. CPU time is reported too because wall time on a shared machine also counts
    the time other processes hold the cores."""
    with tempfile.TemporaryFile() as out:
        start = time.perf_counter()
        child = subprocess.Popen(args, stdout=out, stderr=subprocess.PIPE)
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = os.waitstatus_to_exitcode(status)
        err = child.stderr.read().decode() if child.stderr else ""
        if child.stderr:
            child.stderr.close()
        printed = out.tell()
    if child.returncode not in (0, 1):
        raise SystemExit(f"check-schedule failed: {err.strip()}")
    return (elapsed, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024,
            child.returncode, printed)


Row = tuple[str, str, float, int, float, float, float, int, int]


def run_case(folder: Path, name: str, rows: list[Row], flags: list[str], transactions: int,
             **shape: int | None) -> Row:
    path = folder / f"{name.replace(' ', '-')}.json"
    ops = write_schedule(path, transactions, **shape)  # type: ignore[arg-type]
    size = os.path.getsize(path) / 1e6
    row: Row = (name, " ".join(flags) or "(text)", size, ops,
                *timed([*command(), "check-schedule", str(path), *flags]))
    rows.append(row)
    path.unlink()
    return row


def print_rows(rows: list[Row]) -> None:
    header = (f"{'case':<28} {'output':<7} {'file MB':>8} {'operations':>11} {'wall s':>7} "
              f"{'CPU s':>6} {'peak MB':>8} {'exit':>4} {'stdout bytes':>12}")
    print(header)
    print("-" * len(header))
    for case, shown, size, ops, seconds, cpu, peak, code, printed in rows:
        print(f"{case:<28} {shown:<7} {size:>8.1f} {ops:>11,} {seconds:>7.2f} {cpu:>6.2f} "
              f"{peak:>8.0f} {code:>4} {printed:>12,}")


def ratios(folder: Path, memory: bool) -> None:
    """The scaling targets, measured in one run (CPU seconds, so the machine's load matters
    less)."""
    rows: list[Row] = []
    one = run_case(folder, "100k, 1 update (violation)", rows, ["--json"], 100_000,
                   late_object=3)
    many = run_case(folder, "100k, 1,000 random updates", rows, ["--json"], 100_000,
                    updates=1000)
    small = run_case(folder, "1M, 1 update (violation)", rows, ["--json"], 1_000_000,
                     late_object=3)
    big = run_case(folder, "3M, 1 update (violation)", rows, ["--json"], 3_000_000,
                   late_object=3)
    huge = None
    if memory:
        huge = run_case(folder, "10M, 1 update (violation)", rows, ["--json"], 10_000_000,
                        late_object=3)
        run_case(folder, "10M, serializable", rows, ["--json"], 10_000_000)
    print_rows(rows)
    print()
    print(f"{'ratio':<44} {'wall':>6} {'CPU':>6} {'target':>7}")
    for label, a, b, target in (("100k+1,000 updates / 100k+1 update", many, one, 3),
                                ("3M / 1M (one violation)", big, small, 4)):
        print(f"{label:<44} {a[4] / b[4]:>6.2f} {a[5] / b[5]:>6.2f} {'<= ' + str(target):>7}")
    if huge is not None:
        peak = max(r[6] for r in rows if r[0].startswith("10M"))
        print(f"{'peak memory, 10M transactions (MB)':<44} {peak:>13.0f} {'< 2048':>7}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--transactions", type=int, default=1_000_000)
    parser.add_argument("--keep", metavar="DIR", help="write the files here")
    parser.add_argument("--ratios", action="store_true", help="the scaling ratio table")
    parser.add_argument("--memory", action="store_true", help="with --ratios: 10M too")
    args = parser.parse_args()
    folder = Path(args.keep) if args.keep else Path(tempfile.mkdtemp(prefix="sp-bench-"))
    folder.mkdir(parents=True, exist_ok=True)
    try:
        if args.ratios:
            ratios(folder, args.memory)
        else:
            rows: list[Row] = []
            for case, late in (("serializable", None), ("one violation", 3)):
                for flags in ([], ["--json"]):
                    run_case(folder, case, rows, flags, args.transactions, late_object=late)
            print_rows(rows)
    finally:
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"load average during the run: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
