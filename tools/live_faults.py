"""Seeded faults on the live path, per fault and per case.

    python tools/live_faults.py [--cases N] [--seed S] [--faults none,naive,...]

Runs the Fries suite's live engine (``conformance.fries.live_suite``: every case through
the Structured Streaming front end) on the same ``N`` cases once per fault (``none`` = no
fault), in one SparkSession, and prints per fault the failed cases with their oracles, so a
failure caught only because of the machine (a case that also fails without the fault) can be
told from a catch. ``streamproof conformance --engine spark-streaming --suite fries
--inject-fault F`` runs the same cases; it prints counts, not which case.
"""

from __future__ import annotations

import argparse
import time

from conformance.fries.engines.live import StreamingEngine
from conformance.fries.engines.paths import prepare
from conformance.fries.oracles import judge
from spark_impl.session import get_or_create_session


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=8)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--faults", default="none,naive,missing-alignment,double-transform,duplicate-after-restart")
    args = parser.parse_args()

    from conformance.fries.suite import streaming_cases  # noqa: PLC0415 - loads hypothesis

    spark = get_or_create_session(app_name="live-faults")
    cases = streaming_cases(args.cases, args.seed)
    restarts = [i for i, c in enumerate(cases) if c.timing.restarts]
    print(f"{len(cases)} cases (seed {args.seed}); with a driver restart: {restarts}")
    print(f"{'fault':<26} {'failed':>6} {'seconds':>8}  failed cases (oracles)")
    for fault in args.faults.split(","):
        faults = frozenset() if fault == "none" else frozenset({fault})
        start = time.monotonic()
        outcomes = StreamingEngine("fries", faults, spark=spark).run(cases)
        failed = [(i, judge(prepare("streaming", c), o).failed_oracles) for i, (c, o) in enumerate(zip(cases, outcomes))]
        failed = [(i, oracles) for i, oracles in failed if oracles]
        shown = ", ".join(f"{i} ({'/'.join(o)})" for i, o in failed) or "-"
        print(f"{fault:<26} {len(failed):>6} {time.monotonic() - start:>8.0f}  {shown}", flush=True)
    spark.stop()


if __name__ == "__main__":
    main()
