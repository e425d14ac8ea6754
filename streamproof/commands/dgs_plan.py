"""``streamproof dgs-plan FILE.py:NAME --streams STREAMS.json``: a synchronization plan for a
DGS program and its input, checked and run.

Builds (or, with ``--optimize``, optimizes) a P-valid synchronization plan for the program and
the input's event rates - or takes the plan the input file gives - prints the plan tree,
checks its validity (V1, V2; DGS Def. 3.2), runs it on the streams with the reference
executor and says whether its outputs equal the sequential program's (Def. 3.4), with each
worker's load (events processed) and synchronizations (joins, forks). Exit 0 the plan is
valid and the outputs equal, 1 an invalid plan or different outputs (the counterexample in
words), 2 bad input, 3 a bug in streamproof. ``--json`` prints one JSON document. The input
file's format is in :mod:`streamproof.sandbox.plan_input` and docs/dgs.md.

The program runs in the ``check-dgs`` sandbox (:mod:`streamproof.sandbox`, task
:mod:`~streamproof.sandbox.plan_task`) with the same limits; ``--engine spark`` also runs
the plan with the Spark executor in that process (without the memory limit: the JVM needs more
address space).
"""

from __future__ import annotations

import argparse
from typing import Any

from streamproof.sandbox_limits import add_limit_arguments, limits_from_args, run_and_print
from spec.errors import InputError
from spec.jsonio import load_json

EXIT_OK = 0
EXIT_FAILED = 1
MAX_WORKERS = 1024
DEFAULT_SYNC_COST = 10.0  # one synchronization costs as much as 10 events (docs/dgs.md: an assumption)
MAX_SYNC_COST = 1e9
"""Largest ``--sync-cost``: with at most 10^12 events per time unit a rate and a finite input,
every modelled cost stays a finite number (``--json`` never prints Infinity)."""


def register(subparsers: Any) -> None:
    """Add the ``dgs-plan`` sub-command."""
    parser = subparsers.add_parser(
        "dgs-plan",
        help="build or optimize a DGS synchronization plan, check it and run it on input streams",
        description="Build (or with --optimize, optimize) a P-valid synchronization plan for the DGS "
        "program NAME in FILE.py and the rates of the input streams (or take the plan the streams "
        "file gives), print it, check V1 and V2, run it and compare its outputs with the sequential "
        "program's; print each worker's load and synchronizations. Format: docs/dgs.md.",
    )
    parser.add_argument("target", metavar="FILE.py:NAME", help="the program: a Python file and a name in it")
    parser.add_argument("--streams", required=True, metavar="STREAMS.json",
                        help="the input streams (and optionally a plan, rates, stream locations)")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="at most N leaf workers in a built or optimized plan (default: as many as "
                        "the optimizer makes)")
    parser.add_argument("--optimize", action="store_true",
                        help="try every number of leaves up to --workers and every useful inline_below; "
                        "keep the cheapest by the Spark executor's cost model")
    parser.add_argument("--engine", choices=("reference", "spark"), default="reference",
                        help="spark: also run the plan on Spark (a local session in the sandbox's "
                        "process; --memory-limit does not apply) and compare its outputs too")
    parser.add_argument("--seed", type=int, default=0, metavar="S",
                        help="seed of the reference executor's message delays (default 0)")
    parser.add_argument("--sync-cost", type=float, default=DEFAULT_SYNC_COST, metavar="EVENTS",
                        help="cost of one synchronization in events processed, for the cost model "
                        f"(default {DEFAULT_SYNC_COST:g}, at most {MAX_SYNC_COST:g})")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    add_limit_arguments(parser, whole="run")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Plan, check and run in the sandbox, print the report; return the exit code."""
    from streamproof.sandbox.plan_input import parse_plan_input  # noqa: PLC0415 - loaded when the command runs, not by --help
    from streamproof.sandbox.plan_task import PlanRequest  # noqa: PLC0415 - loads hypothesis (via reference.dgs.strategies)

    if args.workers is not None and not 1 <= args.workers <= MAX_WORKERS:
        raise InputError(f"--workers must be between 1 and {MAX_WORKERS}, got {args.workers}")
    if not 0 <= args.sync_cost <= MAX_SYNC_COST:  # also refuses nan
        raise InputError(f"--sync-cost must be a number from 0 to {MAX_SYNC_COST:g}, got {args.sync_cost:g}")
    limits, memory_mb = limits_from_args(args)
    document = load_json(args.streams)
    try:
        inputs = parse_plan_input(document, "$")
    except InputError as error:
        raise error.located(args.streams) from None
    if inputs.plan is not None and (args.optimize or args.workers is not None):
        raise InputError("the streams file gives a plan: --optimize and --workers apply only to plans "
                         "dgs-plan builds (remove the file's \"plan\" or the flags)", args.streams)
    if args.engine == "spark":
        memory_mb = 0  # the JVM reserves more address space than any sensible limit: none applies
    request = PlanRequest(args.target, args.streams, document, args.workers, args.optimize, args.seed,
                          args.sync_cost, args.engine, memory_mb)
    holds = run_and_print(request, limits, as_json=args.json, progress=False)
    return EXIT_OK if holds else EXIT_FAILED
