"""``streamproof vectors``: export and check language-neutral test vectors (docs/vectors.md).

    streamproof vectors export DIR [--cases N] [--oplus-cases N] [--seed S] [--json]
    streamproof vectors check DIR --engine spark|reference [--json]

``check`` exits 0 when every vector it could check matches (and at least one was checked),
1 when one does not (each mismatch named, with why), 2 on bad input (missing directory,
malformed vector). Vectors an engine cannot run (e.g. O+ on Spark while spark_impl has no O+
executor) are listed as skipped, never counted as matches.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from streamproof.output import print_json
from spec.errors import cut, InputError

MAX_CASES = 10_000
"""Most vectors of one suite ``export`` writes (each runs the reference once)."""


def register(subparsers: Any) -> None:
    """Add the ``vectors`` sub-command with ``export`` and ``check``."""
    parser = subparsers.add_parser("vectors", help="export / check language-neutral conformance vectors")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    export = actions.add_parser("export", help="write vectors (scenario + reference outputs) into DIR")
    export.add_argument("directory", metavar="DIR")
    export.add_argument("--cases", type=int, default=50, metavar="N", help="Fries vectors (default 50)")
    export.add_argument("--oplus-cases", type=int, default=50, metavar="N", help="O+ vectors (default 50)")
    export.add_argument("--seed", type=int, default=0, metavar="S")
    export.add_argument("--json", action="store_true")
    check = actions.add_parser("check", help="replay the vectors in DIR on an engine")
    check.add_argument("directory", metavar="DIR")
    check.add_argument("--engine", required=True, choices=["spark", "reference"])
    check.add_argument("--json", action="store_true")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle ``streamproof vectors``."""
    from conformance.output import vectors  # noqa: PLC0415 - loads hypothesis (via conformance.core.cases)

    if args.action == "export":
        for flag, value in (("--cases", args.cases), ("--oplus-cases", args.oplus_cases)):
            if not 0 <= value <= MAX_CASES:
                raise InputError(f"must be 0 to {MAX_CASES:,}, got {cut(str(value), 20)}", flag)
        try:
            Path(args.directory).mkdir(parents=True, exist_ok=True)
            written = vectors.export(args.directory, fries_cases=args.cases,
                                     oplus_cases=args.oplus_cases, seed=args.seed)
        except (FileExistsError, NotADirectoryError):
            raise InputError("is not a directory (or a part of its path is a file)",
                             args.directory) from None
        except OSError as error:
            raise InputError(f"cannot write there ({error.strerror})", args.directory) from None
        if args.json:
            print_json({"directory": args.directory, "vectors": len(written)})
        else:
            print(f"wrote {len(written)} vectors to {args.directory} (index.json lists them)")
        return 0
    if args.action == "check":
        from conformance.output.vector_shape import validate_directory  # noqa: PLC0415 - loaded when the command runs, not by --help

        validate_directory(args.directory)
        report = vectors.check(args.directory, args.engine)
        ok = not report.mismatched and bool(report.matched)
        if args.json:
            print_json({"passed": ok, **report.to_json()})
        else:
            print(f"{len(report.matched)} matched, {len(report.mismatched)} mismatched, "
                  f"{len(report.skipped)} skipped ({args.engine} engine)")
            for name, why in report.mismatched:
                print(f"MISMATCH {name}: {why}")
            reasons = sorted({why for _, why in report.skipped})
            for why in reasons:
                print(f"skipped {sum(1 for _, w in report.skipped if w == why)} vector(s): {why}")
            if not report.matched and not report.mismatched:
                print("no vector could be checked on this engine")
        return 0 if ok else 1
    raise InputError("expected an ACTION: export or check (see 'streamproof vectors --help')")
