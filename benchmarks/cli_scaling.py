"""How the CLI's answer time grows with the input's size: ``fuse`` on a chain of N operators,
``dgs-plan`` (with and without ``--optimize``) on k single-event streams of the event-window
program, each a separate ``python -m streamproof`` process, wall-clock seconds (a run past
``--limit`` is shown as ``> limit``).

    python benchmarks/cli_scaling.py [--root DIR] [--limit SECONDS] [--only fuse|dgs-plan]

``--root`` runs another checkout's code (e.g. an older one, to compare before and after a
change); default: this checkout.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent.parent
FUSE_SIZES = (20_000, 60_000)
STREAM_COUNTS = (100, 300, 1000)


def fuse_chain(count: int) -> dict[str, object]:
    """A chain of ``count`` map operators sharing one attribute."""
    return {"domains": {"k": 10},
            "operators": [{"name": f"o{i}", "kind": "map", "pa": ["k"]} for i in range(count)],
            "edges": [{"from": f"o{i}", "to": f"o{i + 1}", "rate": 1} for i in range(count - 1)]}


def single_event_streams(count: int) -> dict[str, object]:
    """``count`` streams, each one value event at ts 1 and a heartbeat at ts 2."""
    return {"streams": {f"s{i}": [{"ts": 1, "event": ["value", i]}, {"ts": 2, "heartbeat": True}]
                        for i in range(count)}}


def timed(root: Path, argv: list[str], limit: float) -> str:
    """Seconds one CLI run takes (and its exit code), or ``> limit``."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    started = time.monotonic()
    try:
        done = subprocess.run([sys.executable, "-m", "streamproof", *argv], env=env, capture_output=True,
                              timeout=limit, check=False, cwd=root)  # -m puts the cwd first on the path
    except subprocess.TimeoutExpired:
        return f"> {limit:g}"
    return f"{time.monotonic() - started:.2f} (exit {done.returncode})"


def main() -> None:
    """Print the table (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", type=Path, default=HERE)
    parser.add_argument("--limit", type=float, default=300.0)
    parser.add_argument("--only", choices=("fuse", "dgs-plan"), default=None)
    args = parser.parse_args()
    program = f"{args.root / 'reference' / 'dgs' / 'examples' / 'windowing.py'}:EventWindow"
    print(f"{'command':<34} {'size':>8} {'seconds':>18}")
    with tempfile.TemporaryDirectory(prefix="streamproof-bench-cli-") as work:
        if args.only in (None, "fuse"):
            for count in FUSE_SIZES:
                path = Path(work) / f"chain{count}.json"
                path.write_text(json.dumps(fuse_chain(count)))
                print(f"{'fuse (chain)':<34} {count:>8} {timed(args.root, ['fuse', str(path), '--json'], args.limit):>18}",
                      flush=True)
        if args.only in (None, "dgs-plan"):
            for optimize in (False, True):
                for count in STREAM_COUNTS:
                    path = Path(work) / f"streams{count}.json"
                    path.write_text(json.dumps(single_event_streams(count)))
                    argv = ["dgs-plan", program, "--streams", str(path), "--json", "--timeout", str(args.limit)]
                    label = "dgs-plan" + (" --optimize" if optimize else "")
                    print(f"{label:<34} {count:>8} "
                          f"{timed(args.root, argv + (['--optimize'] if optimize else []), args.limit):>18}", flush=True)


if __name__ == "__main__":
    main()
