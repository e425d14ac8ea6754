"""``streamproof conformance --operator FILE.py:NAME`` (registered by the ``conformance`` command).

    streamproof conformance --operator FILE.py:NAME [--fields key,value] [--cases N] [--seed S]
                            [--engine auto|spark|reference] [--save-dir DIR] [--shrink-budget N]
                            [--inject-fault window-off-by-one|drop-near-watermark] [--json]

Judges YOUR O+ operator (a module-level ``spec.oplus.model.OPlus`` named NAME in FILE.py):
random inputs whose tuples carry ``--fields`` (default ``key,value``: ``key`` a string, every
other field an integer; ``NAME:str``, ``NAME:int``, ``NAME:float`` or ``NAME:bool`` to say, with
``?`` after the type for a field that may be null: ``NAME:int?``), run on the reference's O+
semantics with the user's functions (sequential = the meaning; shared-nothing; elastic virtual
shared-nothing) and, unless ``--engine reference``, on spark_impl's live O+ front end
(``conformance.oplus.user_suite``: out-of-order files within the allowed lateness, explicit
watermarks, driver crashes and restarts). ``--inject-fault`` switches on a seeded O+ fault of
spark_impl's front end (it applies to a user's operator as to the catalogue's), so a correct
operator must then fail. Exit 0: every case passed; 1: a case failed (the shrunk
case is printed and saved, replayable with ``--replay``), including a case in which the
operator's own code raised (oracle ``user-code``, the function named; when it raised in the
sequential reference the run stops there, before any Spark query, with that one finding); 2: bad input (the file
cannot be loaded, NAME is missing or not an O+ operator, bad ``--fields``, a flag that does not
apply, a fault that is not one of spark_impl's O+ faults, a fault with ``--engine reference``).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from spec.errors import InputError
from spark_impl.faults import OPLUS_FAULTS

from streamproof.output import print_json
from streamproof.summary import print_summary

DEFAULT_CASES = 30


def spark_wanted(engine: str) -> bool:
    """``--engine``: spark (and spark-streaming) yes, reference no, auto when pyspark is installed."""
    if engine == "reference":
        return False
    if engine == "auto":
        return importlib.util.find_spec("pyspark") is not None
    return True


def run_operator(args: argparse.Namespace) -> int:
    """Handle ``conformance --operator`` (module docstring)."""
    from conformance.core.progress import ProgressBar  # noqa: PLC0415 - loaded when the command runs, not by --help
    from conformance.oplus.user_suite import load_under, run_operator_suite  # noqa: PLC0415 - loads hypothesis (via conformance.core.cases)

    if getattr(args, "job", None):
        raise InputError("give --job (a Fries job) or --operator (an O+ operator), not both", "--operator")
    if args.suite not in ("all", "oplus"):
        raise InputError(f"an O+ operator is judged by the oplus suite, not {args.suite!r}", "--suite")
    faults = frozenset(args.inject_fault or ())
    if faults:
        other = sorted(faults - OPLUS_FAULTS)
        if other:
            raise InputError(f"{other[0]!r} is not a seeded fault of the O+ front end (known: "
                             f"{', '.join(sorted(OPLUS_FAULTS))})", "--inject-fault")
        if not spark_wanted(args.engine):
            raise InputError("the seeded O+ faults are in spark_impl's live front end, which --engine reference "
                             "does not run", "--inject-fault")
    if args.replay or args.list_faults:
        raise InputError("--replay and --list-faults take no --operator (a saved case names its operator)",
                         "--operator")
    fields = args.fields or "key,value"
    under = load_under(args.operator, fields)
    result = run_operator_suite(under, cases=DEFAULT_CASES if args.cases is None else args.cases, seed=args.seed,
                                spark_check=spark_wanted(args.engine), save_dir=args.save_dir or "conformance-failures",
                                shrink_budget=args.shrink_budget, progress=ProgressBar("oplus"), faults=faults)
    if args.json:
        print_json({"passed": result.failed == 0, "cases": result.cases, "failed": result.failed, "seed": args.seed,
                    "operator": args.operator, "fields": fields, "suites": [result.to_json()]})
    else:
        print_summary([result])
        print(f"operator: {args.operator} ({under.op.name}); fields: {fields}")
        notes: set[str] = set()
        for check in result.checks:
            if check.note and check.note not in notes:  # a run stopped early gives its reason once
                notes.add(check.note)
                print(f"{check.name}: {check.note}")
        if result.failures and result.failures[0].replay_file:
            print(f"replay: streamproof conformance --replay {result.failures[0].replay_file}")
    sys.stdout.flush()
    return 1 if result.failed else 0
