"""``streamproof oplus SCENARIO.json [--mode sequential|sn|vsn] [--engine reference|spark]
[--json]``: run an O+ scenario (STRETCH; format in spec/oplus/scenario.py, docs/oplus.md).

Prints one line per output (``ts key value``) and a summary line (mode, outputs, tuples,
copies delivered, duplicated tuples, reconfigurations applied, SN's state transfer), then one
line per requested reconfiguration that was not applied and why; ``--json`` prints the list of
``{"ts", "key", "value"}`` sorted by (ts, key). Exit 0 on success, 2 on a bad scenario or an
unavailable engine (one line on stderr).

``--engine spark`` calls ``spark_impl.oplus.run_scenario(scenario) -> list[dict]``, imported
here so ``streamproof --help`` never loads Spark.
"""

from __future__ import annotations

import argparse
import json
from typing import Any

from spec.errors import InputError
from spec.oplus.scenario import MODES, parse_scenario, sort_output
from spec.jsonio import load_json
from streamproof.output import print_json


def register(subparsers: Any) -> None:
    """Add the ``oplus`` sub-command."""
    parser = subparsers.add_parser(
        "oplus", help="run a STRETCH O+ scenario (sequential, SN or elastic VSN)",
        description="Run an O+ scenario through the reference (or the Spark engine) and "
        "print its outputs: one per key and window instance, timestamped with the "
        "window's right boundary. See docs/oplus.md for the scenario format.")
    parser.add_argument("scenario", metavar="SCENARIO.json", help="the scenario file")
    parser.add_argument("--mode", choices=MODES, default="sequential",
                        help="sequential (one instance), sn (shared-nothing, Alg. 1-2) or "
                        "vsn (virtual shared-nothing with elastic reconfigurations, Alg. 3-6); "
                        "default sequential; reference engine only")
    parser.add_argument("--engine", choices=("reference", "spark"), default="reference",
                        help="reference (default) or spark (spark_impl.oplus)")
    parser.add_argument("--seed", type=int, default=0,
                        help="interleaving seed of the sn / vsn simulation (outputs do not "
                        "depend on it)")
    parser.add_argument("--json", action="store_true",
                        help='print the outputs as a JSON list of {"ts", "key", "value"}')
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Load, validate and run the scenario; print the outputs."""
    scenario = parse_scenario(load_json(args.scenario), args.scenario)
    summary = ""
    if args.engine == "spark":
        rows = sort_output(_spark_rows(scenario))
        summary = f"engine spark: {len(rows)} outputs"
    else:
        from reference.oplus.operators.catalogue import to_row  # noqa: PLC0415 - loaded when the command runs, not by --help
        from reference.oplus.run import execute  # noqa: PLC0415 - loaded when the command runs, not by --help

        result = execute(scenario, args.mode, args.seed)
        rows = sort_output([to_row(o) for o in result.outputs])
        summary = (f"mode {args.mode}: {len(rows)} outputs from {result.tuples} tuples; "
                   f"{result.copies} tuple copies delivered, {result.duplicated} duplicated; "
                   f"{len(result.reconfigurations)} reconfigurations applied")
        if result.transferred_keys or result.rerouted:
            summary += (f"; state transfer moved {result.transferred_keys} keys "
                        f"({result.transferred_sets} window sets) and re-forwarded "
                        f"{result.rerouted} buffered tuples")
        for rejected in result.rejected:
            summary += (f"\nreconfiguration to parallelism {rejected.parallelism} at watermark "
                        f"{rejected.watermark} not applied: {rejected.reason}")
    if args.json:
        print_json(rows)
        return 0
    for row in rows:
        print(f"{row['ts']}\t{row['key']}\t{json.dumps(row['value'], sort_keys=True)}")
    print(summary)
    return 0


def _spark_rows(scenario: Any) -> list[dict[str, Any]]:
    """The Spark engine's rows, or a one-line InputError when it does not exist yet."""
    try:
        # an optional engine: without spark_impl.oplus, --engine spark is bad input (docs/oplus.md)
        from spark_impl import oplus as spark_oplus  # type: ignore[attr-defined, unused-ignore]  # noqa: PLC0415
    except ImportError as error:
        if getattr(error, "name", None) in ("spark_impl.oplus", "spark_impl"):
            raise InputError("the spark engine for oplus is not available yet "
                             "(spark_impl.oplus does not exist)", "--engine") from None
        raise
    rows: list[dict[str, Any]] = spark_oplus.run_scenario(scenario)
    return rows
