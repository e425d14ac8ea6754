"""Plant realistic one-line bugs in spark_impl/dgs and spark_impl/oplus and check that the
default conformance suite catches each (bugs nobody planted).

Each bug is applied to a *copy* of the source tree (the working tree is never touched), and
``streamproof conformance --suite dgs|oplus --engine spark --shrink-budget 0 --json`` runs on
the copy (``PYTHONPATH`` first, so the driver and Spark's Python workers import the copy).
Prints one row per bug: failed cases / cases of the Spark check, and the failed oracles.

    python tools/planted_bugs_dgs_oplus.py [--cases N] [--seed S] [--only TEXT] [--suite dgs|oplus]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

# (suite, name, file, old text, new text): each a one-line change somebody could plausibly write
BUGS: list[tuple[str, str, str, str, str]] = [
    ("dgs", "fork sends the halves to the wrong children", "spark_impl/dgs/tasks.py",
     "return {**fork_down(program, topo, left.id, a), **fork_down(program, topo, right.id, b)}",
     "return {**fork_down(program, topo, left.id, b), **fork_down(program, topo, right.id, a)}"),
    ("dgs", "join takes its arguments right to left", "spark_impl/dgs/tasks.py",
     "return program.join(worker.join, join_up(program, topo, left.id, leaves),\n"
     "                        join_up(program, topo, right.id, leaves))",
     "return program.join(worker.join, join_up(program, topo, right.id, leaves),\n"
     "                        join_up(program, topo, left.id, leaves))"),
    ("dgs", "out sees the state after the update", "spark_impl/dgs/tasks.py",
     "        records.extend((run, \"out\", x) for x in program.out(state_type, state, event))\n"
     "        records.append((run, \"processed\", (worker_id, key, event)))\n"
     "        state = program.update(state_type, state, event)",
     "        state = program.update(state_type, state, event)\n"
     "        records.extend((run, \"out\", x) for x in program.out(state_type, state, event))\n"
     "        records.append((run, \"processed\", (worker_id, key, event)))"),
    ("dgs", "a leaf processes its events newest first", "spark_impl/dgs/tasks.py",
     "states[(run, leaf)], todo)", "states[(run, leaf)], todo[::-1])"),
    ("dgs", "synchronizing states not forked back down", "spark_impl/dgs/tasks.py",
     "            gathered.update(((run, leaf), s) for leaf, s in fork_down(program, topo, worker_id, state).items())",
     "            gathered.update(((run, leaf), s) for leaf, s in list(fork_down(program, topo, worker_id, state).items())[:1])"),
    ("dgs", "an event is released when any dependent stream has passed it", "spark_impl/dgs/release.py",
     "ok = [all(timers.get(s, far) >= e.key", "ok = [any(timers.get(s, far) >= e.key"),
    ("dgs", "a sync group merged across a leaf segment", "spark_impl/dgs/driver.py",
     "if not any(segment) and last is not None and last[0] == event.worker:",
     "if last is not None and last[0] == event.worker:"),
    ("dgs", "the event at a fork is dropped (last of a sync group)", "spark_impl/dgs/driver.py",
     "            last[1].append(entry)", "            pass"),
    ("dgs", "release streams forget the event's own stream", "spark_impl/dgs/topology.py",
     "{stream} | {s for t, s in owner if program.depends(tag, t)}",
     "{s for t, s in owner if program.depends(tag, t)}"),
    ("dgs", "inlined events processed after the second sync group", "spark_impl/dgs/driver.py",
     "(previous[0], previous[1] + inlined + sync[1])", "(previous[0], previous[1] + sync[1] + inlined)"),
    ("oplus", "ScaleJoin band boundary inclusive", "spark_impl/oplus/instance.py",
     "abs(other_ts - ts) < op.ws", "abs(other_ts - ts) <= op.ws"),
    ("oplus", "ScaleJoin band predicate strict", "spark_impl/oplus/operators.py",
     "abs(int(left[\"x\"]) - int(right[\"a\"])) <= op.band", "abs(int(left[\"x\"]) - int(right[\"a\"])) < op.band"),
    ("oplus", "WT multi expires one watermark late", "spark_impl/oplus/instance.py",
     "                if left + op.ws <= watermark:", "                if left + op.ws < watermark:"),
    ("oplus", "last window instance of a tuple skipped", "spark_impl/oplus/operators.py",
     "(ts // op.wa) * op.wa + 1, op.wa)", "(ts // op.wa) * op.wa, op.wa)"),
    ("oplus", "paircount distance off by one", "spark_impl/oplus/operators.py",
     "op.distance is None or j - i <= op.distance", "op.distance is None or j - i < op.distance"),
    ("oplus", "WT single purge keeps the boundary tuple out", "spark_impl/oplus/instance.py",
     "if ts >= left + op.wa]  # f_S: purge", "if ts > left + op.wa]  # f_S: purge"),
    ("oplus", "handover routes keys by the old parallelism", "spark_impl/oplus/driver.py",
     "target = index if size is None else instance_of(key, size)",
     "target = index if size is None else instance_of(key, before)"),
    ("oplus", "rescale applied one watermark early", "spark_impl/oplus/feed.py",
     "if change.watermark <= wm:", "if change.watermark <= wm + 1:"),
    ("oplus", "round watermark ignores the exhausted list", "spark_impl/oplus/feed.py",
     "math.inf if end >= len(prefix) else prefix[end - 1]", "math.inf if end > len(prefix) else prefix[min(end, len(prefix)) - 1]"),
    ("oplus", "forward emits at ts instead of ts + 1", "spark_impl/oplus/instance.py",
     "emitted.extend((ts + 1, key, fields[\"value\"]) for key in owned)",
     "emitted.extend((ts, key, fields[\"value\"]) for key in owned)"),
]


def run(suite: str, cases: int, seed: int, tree: Path) -> tuple[int, int, dict[str, int], float]:
    env = {**os.environ, "PYTHONPATH": f"{tree}{os.pathsep}{os.environ.get('PYTHONPATH', '')}"}
    start = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "streamproof.main", "conformance", "--suite", suite,
                           "--engine", "spark", "--cases", str(cases), "--seed", str(seed), "--shrink-budget", "0",
                           "--json", "--save-dir", str(tree / "failures")],
                          cwd=tree, env=env, capture_output=True, text=True, timeout=3600)
    elapsed = time.monotonic() - start
    if proc.returncode not in (0, 1):
        return -1, 0, {f"exit {proc.returncode}: {proc.stderr.strip()[-300:]}": 1}, elapsed
    summary = json.loads(proc.stdout)
    check = next(c for s in summary["suites"] for c in s["checks"] if c["name"].startswith("spark"))
    return check["failed"], check["cases"], check["oracle_failures"], elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=100)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--only", default="", help="run the bugs whose name contains TEXT")
    parser.add_argument("--suite", choices=["dgs", "oplus"], help="run only this suite's bugs")
    args = parser.parse_args()
    print(f"{'suite':<6} {'planted bug':<62} {'caught':>9} oracles")
    caught = total = 0
    for suite, name, path, old, new in BUGS:
        if args.only not in name or args.suite not in (None, suite):
            continue
        with tempfile.TemporaryDirectory(prefix="streamproof-planted-") as scratch:
            tree = Path(scratch)
            for part in ("spec", "reference", "proofs", "spark_impl", "conformance"):
                shutil.copytree(ROOT / part, tree / part, ignore=shutil.ignore_patterns("__pycache__"))
            source = (tree / path).read_text()
            if source.count(old) != 1:
                print(f"{suite:<6} {name:<62} {'NOT PLANTED (text not found once)':>9}")
                continue
            (tree / path).write_text(source.replace(old, new))
            failed, cases, oracles, elapsed = run(suite, args.cases, args.seed, tree)
        total += 1
        caught += failed > 0
        print(f"{suite:<6} {name:<62} {failed:>4}/{cases:<4} {dict(oracles)} ({elapsed:.0f} s)", flush=True)
    print(f"\ncaught {caught} of {total} planted bugs at --cases {args.cases}, seed {args.seed}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
