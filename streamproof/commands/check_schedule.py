"""``streamproof check-schedule SCHEDULE.json [--json]``.

Is the schedule (per-object logs, Fries Def. 4.7) conflict-serializable (Def. 4.9)? Exit 0
yes (prints an equivalent serial order), 1 no (prints a shortest cycle of the precedence graph
explained edge by edge), 2 bad input. ``--json`` prints the contract
``{"serializable": bool, "cycle": [txn ids] or null, "serial_order": [txn ids] or null}``.
Linear time; the file is read as a stream (reference/fries/schedule_stream.py), so a 900 MB
schedule of 10M transactions fits in under 2 GB (benchmarks/check_schedule_perf.py).
Format: docs/fries.md.
"""

from __future__ import annotations

import argparse

from spec.jsonio import is_regular_file, load_json
from streamproof.output import print_json


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``check-schedule`` sub-command."""
    parser = subparsers.add_parser(
        "check-schedule",
        help="is a schedule conflict-serializable? (Fries Def. 4.9)",
        description="Check a schedule (per-object operation logs) for conflict-"
        "serializability; explain a shortest cycle when it is not.",
    )
    parser.add_argument("schedule", metavar="SCHEDULE.json",
                        help="the schedule (see docs/fries.md)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Check and print; 0 serializable, 1 not, 2 (InputError) bad input."""
    from reference.fries.compact import compact_from_json  # noqa: PLC0415 - loaded when the command runs, not by --help
    from reference.fries.schedule_stream import read_schedule  # noqa: PLC0415 - loaded when the command runs, not by --help
    from reference.fries.serializability import check_compact  # noqa: PLC0415 - loaded when the command runs, not by --help

    if is_regular_file(args.schedule):
        schedule = read_schedule(args.schedule)
    else:  # a FIFO, a device, a missing file...: the size-capped whole-file reader
        schedule = compact_from_json(load_json(args.schedule), args.schedule)
    verdict = check_compact(schedule)
    if args.json:
        print_json(verdict.to_json())
    else:
        print(verdict.explain())
    return 0 if verdict.serializable else 1
