"""``streamproof check-dgs FILE.py:NAME``: is a DGS program consistent (C1-C3, DGS Def. 2.3)?

Checks C1, C2 and C3 each (a violated condition does not stop the others): Z3 first within
``--prove-budget`` seconds per condition (:mod:`streamproof.sandbox.budgeted`), then the
small-scope enumeration and hypothesis, and prints, per condition, ``holds`` or ``violated`` with the shrunk counterexample: the states,
predicates and events, and both sides of the equation. Exit 0 consistent, 1 inconsistent,
2 bad input (unloadable file, missing member, asymmetric ``depends``, a fork given dependent
predicates, an exception inside the user's code - named, a time limit hit), 3 a bug in
streamproof. ``--json`` prints ``{"consistent": bool, "violations": [{"condition":
"C1"|"C2"|"C3", "counterexample": {...}}], ..., "output": {...}}``. The program format is in
``spec.dgs.loader`` and docs/dgs.md.

The user's code runs in a sandboxed child process with a per-call and a total time limit
(:mod:`streamproof.sandbox`); what it prints is captured and shown after the verdict.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from streamproof.sandbox_limits import add_limit_arguments, limits_from_args, run_and_print
from spec.errors import InputError

EXIT_CONSISTENT = 0
EXIT_INCONSISTENT = 1
MAX_EXAMPLES = 1_000_000
DEFAULT_PROVE_BUDGET = 2.0
MAX_PROVE_BUDGET = 3600.0


def register(subparsers: Any) -> None:
    """Add the ``check-dgs`` sub-command."""
    parser = subparsers.add_parser(
        "check-dgs",
        help="check a DGS program's consistency conditions C1-C3",
        description="Check the consistency conditions C1, C2, C3 (DGS Def. 2.3) of the program "
        "NAME in FILE.py: Z3 first within --prove-budget, then an exhaustive small-scope enumeration "
        "and hypothesis; print a shrunk counterexample per violated condition. "
        "The program runs in a separate process with time limits; what it prints is shown after "
        "the verdict (in --json: \"output\").",
    )
    parser.add_argument("target", metavar="FILE.py:NAME", help="the program: a Python file and a name in it")
    parser.add_argument(
        "--examples", type=int, default=None, metavar="N",
        help=f"hypothesis examples per condition (default 200, at most {MAX_EXAMPLES:,})",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="hypothesis seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser.add_argument("--prove", action="store_true",
                        help="prove C1-C3 with Z3 where possible; each condition says what was "
                        "proved (docs/proofs.md)")
    parser.add_argument(
        "--prove-budget", type=float, default=DEFAULT_PROVE_BUDGET, metavar="SECONDS",
        help=f"without --prove: first try Z3 on each condition for at most SECONDS (default "
        f"{DEFAULT_PROVE_BUDGET:g}; 0 disables); a condition Z3 proves is reported as proved, a "
        "Z3 counterexample is confirmed by the spec; otherwise the enumeration and hypothesis "
        "decide and the output says the prover did not answer",
    )
    add_limit_arguments(parser)
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check the program in the sandbox, print the verdict; return the exit code."""
    from streamproof.sandbox.check import Request  # noqa: PLC0415 - loaded when the command runs, not by --help
    from reference.dgs.checker import DEFAULT_EXAMPLES  # noqa: PLC0415 - loads hypothesis

    examples = DEFAULT_EXAMPLES if args.examples is None else args.examples
    if not 1 <= examples <= MAX_EXAMPLES:
        shown = examples if len(str(examples)) <= 20 else f"a {len(str(examples))}-digit number"
        raise InputError(f"--examples must be between 1 and {MAX_EXAMPLES:,}, got {shown}")
    budget = args.prove_budget
    if not 0 <= budget <= MAX_PROVE_BUDGET:  # also refuses nan
        raise InputError(f"--prove-budget must be between 0 and {MAX_PROVE_BUDGET:g} seconds, got {budget:g}")
    limits, memory_mb = limits_from_args(args)
    request = Request(args.target, examples, args.seed, args.prove, memory_mb, 0.0 if args.prove else budget)
    holds = run_and_print(request, limits, as_json=args.json, progress=sys.stderr.isatty())
    return EXIT_CONSISTENT if holds else EXIT_INCONSISTENT
