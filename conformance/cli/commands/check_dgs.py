"""``streamproof check-dgs FILE.py:NAME``: is a DGS program consistent (C1-C3, DGS Def. 2.3)?

Checks C1, C2 and C3 each (a violated condition does not stop the others) with hypothesis and
prints, per condition, ``holds`` or ``violated`` with the shrunk counterexample: the states,
predicates and events, and both sides of the equation. Exit 0 consistent, 1 inconsistent,
2 bad input (unloadable file, missing member, asymmetric ``depends``, a fork given dependent
predicates, an exception inside the user's code - named). ``--json`` prints
``{"consistent": bool, "violations": [{"condition": "C1"|"C2"|"C3", "counterexample": {...}}],
...}``. The program format is in ``spec.dgs.loader`` and docs/dgs.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from conformance.cli.output import print_json
from spec.errors import InputError

EXIT_CONSISTENT = 0
EXIT_INCONSISTENT = 1


def register(subparsers: Any) -> None:
    """Add the ``check-dgs`` sub-command."""
    parser = subparsers.add_parser(
        "check-dgs",
        help="check a DGS program's consistency conditions C1-C3",
        description="Check the consistency conditions C1, C2, C3 (DGS Def. 2.3) of the program "
        "NAME in FILE.py with hypothesis; print a shrunk counterexample per violated condition.",
    )
    parser.add_argument("target", metavar="FILE.py:NAME", help="the program: a Python file and a name in it")
    parser.add_argument(
        "--examples", type=int, default=None, metavar="N", help="hypothesis examples per condition (default 200)"
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="hypothesis seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print the result as JSON on stdout")
    parser.add_argument("--prove", action="store_true",
                        help="prove C1-C3 with Z3 where possible; each condition says what was "
                        "proved (docs/proofs.md)")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Load the program, check C1-C3, print the verdicts; return the exit code."""
    from reference.dgs.checker import DEFAULT_EXAMPLES, check_consistency
    from spec.dgs.loader import load_program

    examples = DEFAULT_EXAMPLES if args.examples is None else args.examples
    if examples < 1:
        raise InputError(f"--examples must be at least 1, got {examples}")
    program = load_program(args.target)
    if args.prove:
        from proofs.dgs.cli import report_proofs

        return report_proofs(program, args.target, examples=examples, seed=args.seed, as_json=args.json)
    report = check_consistency(program, examples=examples, seed=args.seed)
    if args.json:
        document = report.to_json()
        document["program"] = args.target
        print_json(document)
    else:
        print(f"{args.target}: {examples} examples per condition, seed {args.seed}")
        for line in report.text_lines(
            lambda r: f"{r.condition} violated:" if r.counterexample is not None
            else f"{r.condition} holds ({r.checked} examples in its domain checked)"
        ):
            print(line)
    return EXIT_CONSISTENT if report.consistent else EXIT_INCONSISTENT
