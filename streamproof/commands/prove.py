"""``streamproof prove``: run the Z3 proofs of the papers' lemmas and theorems.

Prints one row per claim: name, paper reference, bound, status (proved / counterexample /
timeout) and seconds, then the row's scope (what was quantified over, which model, which bound,
what is assumed); ``--json`` prints ``{"results": [{"name", "reference", "bound",
"status", "seconds", ..., "scope"}]}``. Exit 0 only when every claim expected to be proved is proved and
every expected counterexample (the naive FCM scheduler, Alg. 2 on one-to-many dataflows, f_U
emitting under WT multi) is found; 1 otherwise. See docs/proofs.md.
"""

from __future__ import annotations

import argparse
from typing import Any

from spec.errors import InputError, cut
from streamproof.output import print_json

MAX_BOUND = 12
"""Largest --max-operators accepted (a larger bound cannot finish)."""
MAX_TIMEOUT = 1_000_000.0
"""Largest ``--timeout`` in seconds (11.6 days): Z3 takes its time limit as an unsigned 32-bit
number of milliseconds (at most about 49.7 days)."""


def register(subparsers: Any) -> None:
    """Add the ``prove`` sub-command."""
    parser = subparsers.add_parser(
        "prove", help="prove the papers' lemmas and theorems with Z3 (bounded, exhaustive)",
        description="Prove Fries Lemmas 5.5-6.3 and Theorems 5.8/6.4 on every DAG up to "
        "--max-operators operators, and STRETCH O+ window arithmetic and Lemma 2 over all "
        "integers. Exit 0 iff every result is the expected one.")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.add_argument("--max-operators", type=int, default=None, metavar="N",
                        help="bound of the Fries proofs: every DAG with at most N operators "
                        "(default 10)")
    parser.add_argument("--timeout", type=float, default=300.0, metavar="SECONDS",
                        help=f"Z3 time limit per query (default 300, at most {MAX_TIMEOUT:,.0f})")
    parser.add_argument("--only", default=None, metavar="TEXT",
                        help="run only the claims whose name or reference contains TEXT")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the selected claims; print the table or JSON; return the exit code."""
    from proofs.catalogue import DEFAULT_MAX_OPERATORS, all_items  # noqa: PLC0415 - loads z3 (via proofs.z3util)
    from proofs.result import run_item  # noqa: PLC0415 - loads z3 (via proofs.z3util)

    bound = DEFAULT_MAX_OPERATORS if args.max_operators is None else args.max_operators
    if not 1 <= bound <= MAX_BOUND:
        raise InputError(f"must be 1 to {MAX_BOUND} (at 12 one claim already runs for more "
                         f"than 8 minutes; docs/proofs.md), got {cut(str(bound), 20)}",
                         "--max-operators")
    if not (0 < args.timeout <= MAX_TIMEOUT):  # also rejects nan
        raise InputError(f"must be a positive number of seconds, at most {MAX_TIMEOUT:,.0f}, got {args.timeout:g}",
                         "--timeout")
    items = all_items(bound)
    if args.only:
        needle = args.only.lower()
        items = [i for i in items if needle in i.name.lower() or needle in i.reference.lower()]
        if not items:
            raise InputError(f"no claim matches {args.only!r}", "--only")
    widths = [max(len(h), *(len(getattr(i, f)) for i in items))
              for h, f in (("name", "name"), ("reference", "reference"), ("bound", "bound"))]

    def row(cells: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths + [14, 8])).rstrip()

    if not args.json:
        print(row(["name", "reference", "bound", "status", "seconds"]), flush=True)
    results = []
    for item in items:
        result = run_item(item, max(1, int(args.timeout * 1000)))  # 0 ms would mean no limit to Z3
        results.append(result)
        if not args.json:
            mark = "" if result.as_expected else f"  <-- expected {result.expected}"
            print(row([result.name, result.reference, result.bound, result.status,
                       f"{result.seconds:.2f}"]) + mark, flush=True)
            if result.status == "counterexample" and result.detail:
                print(f"    {result.detail}", flush=True)
            if result.scope:
                print(f"    scope: {result.scope}", flush=True)
    ok = all(r.as_expected for r in results)
    if args.json:
        print_json({"results": [r.to_json() for r in results]})
    else:
        total = sum(r.seconds for r in results)
        good = sum(r.as_expected for r in results)
        print(f"{good}/{len(results)} as expected in {total:.1f}s", flush=True)
    return 0 if ok else 1
