"""``streamproof modelcheck``: model-check the Fries protocol over every interleaving.

For every dataflow with at most ``--max-operators`` objects (every kind, unique flag,
reconfiguration set and worker assignment that fits, up to isomorphism) and every
interleaving of the source tuple(s), FIFO channel deliveries, FCM deliveries, epoch markers
and alignment steps, every complete schedule is checked for conflict-serializability
(docs/proofs.md, "Model checking the protocol"). One row per scheduler: dags, states visited,
violations (configurations with a non-serializable complete schedule), seconds and the
shortest counterexample trace.

``--json`` prints exactly ``{"results": [{"scheduler", "max_operators", "dags", "states",
"violations", "seconds", "counterexample"}]}``. Exit codes: 0 when every row is as expected -
no violation for ``fries``, ``fries-alg3``, ``fries-alg2`` (on one-to-one dataflows, Thm 5.8's
domain) and ``epoch``, at least one for ``naive`` (so ``--scheduler naive`` exits 0 iff the
naive scheduler's violation is found, ``--scheduler fries`` iff Fries has none); 1 otherwise;
2 bad input.
"""

from __future__ import annotations

import argparse
from typing import Any

from spec.errors import InputError, cut
from streamproof.output import print_json

MIN_BOUND = 3
"""Smallest ``--max-operators``: no dataflow of 2 objects lets the naive scheduler go wrong, so
a run at 2 could only exit 1 (naive's expected violation missing)."""
MAX_BOUND = 4
"""Largest ``--max-operators``: 4 takes about 30 s (the default); 5 enumerates ~530,000
dataflows and takes about 2.5 hours, beyond what a command-line run should start (the
checker's Python entry point, ``proofs.fries.modelcheck.run.check``, still takes any bound)."""


def register(subparsers: Any) -> None:
    """Add the ``modelcheck`` sub-command."""
    parser = subparsers.add_parser(
        "modelcheck", help="model-check the Fries protocol over every interleaving (small DAGs)",
        description="Explore every interleaving of one reconfiguration with the source "
        "tuples, channel deliveries, FCMs, epoch markers and alignment, on every dataflow with "
        "at most N objects, for the naive, epoch and Fries schedulers; check every complete "
        "schedule for conflict-serializability. Exit 0 iff Fries and epoch have no violation "
        "and naive has one.")
    parser.add_argument("--max-operators", type=int, default=4, metavar="N",
                        help=f"dataflows with at most N objects (operators x workers; {MIN_BOUND} or {MAX_BOUND}, "
                        "default 4)")
    parser.add_argument("--scheduler", default="all",
                        choices=["all", "fries", "fries-alg3", "fries-alg2", "epoch", "naive"],
                        help="the scheduler to check (default all)")
    parser.add_argument("--tuples", type=int, default=1, metavar="T",
                        help="source tuples per run (default 1, enough: see docs/proofs.md)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check the selected schedulers; print the table or JSON; return the exit code."""
    from proofs.fries.modelcheck.control import SCHEDULERS  # noqa: PLC0415 - loaded when the command runs, not by --help
    from proofs.fries.modelcheck.run import EXPECTED_VIOLATION, check  # noqa: PLC0415 - loaded when the command runs, not by --help

    if not MIN_BOUND <= args.max_operators <= MAX_BOUND:
        raise InputError(f"must be {MIN_BOUND} or {MAX_BOUND} (at 2 the naive scheduler has no counterexample to "
                         f"find; 5 takes about 2.5 hours), got {cut(str(args.max_operators), 20)}",
                         "--max-operators")
    if not 1 <= args.tuples <= 3:
        raise InputError(f"must be between 1 and 3, got {cut(str(args.tuples), 20)}", "--tuples")
    if args.tuples > 1 and args.max_operators > MIN_BOUND:
        raise InputError(f"more than one tuple only with --max-operators {MIN_BOUND} (at {MAX_BOUND} objects two "
                         "tuples ran for more than 400 s without an answer; one is enough: docs/proofs.md)", "--tuples")
    chosen = SCHEDULERS if args.scheduler == "all" else (args.scheduler,)
    rows = []
    if not args.json:
        print(f"{'scheduler':<11} {'dags':>7} {'states':>10} {'violations':>10} {'seconds':>8}",
              flush=True)
    for name in chosen:
        row = check(name, args.max_operators, tuples=args.tuples)
        rows.append(row)
        if args.json:
            continue
        expected = "violation" if name in EXPECTED_VIOLATION else "no violation"
        mark = "" if row.as_expected else f"  <-- expected {expected}"
        print(f"{name:<11} {row.dags:>7} {row.states:>10} {row.violations:>10} "
              f"{row.seconds:>8.2f}{mark}", flush=True)
        if row.counterexample is not None and row.config is not None:
            config = row.config
            edges = ", ".join(f"{a}->{b}" for a, b in config.flow.edges)
            kinds = ", ".join(f"{op.name}:{op.kind.value}{' unique' if op.unique else ''}"
                              for op in config.flow.operators)
            workers = "".join(f", {n} has {c} workers" for n, c in sorted(config.workers.items()))
            print(f"  shortest counterexample on {kinds} with edges {edges}{workers}, "
                  f"reconfiguring {', '.join(sorted(config.reconfigured))}:")
            for step in row.counterexample.steps:
                print(f"    {step}")
            print(f"  {row.counterexample.to_json()['explanation']}")
    if args.json:
        print_json({"results": [row.to_json() for row in rows]})
    return 0 if all(row.as_expected for row in rows) else 1
