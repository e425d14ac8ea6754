"""``streamproof conformance``: the differential suite (docs/conformance.md).

    streamproof conformance [--suite fries|dgs|oplus|all] [--cases N] [--seed S] [--json]
                            [--report DIR] [--inject-fault NAME] [--list-faults]
                            [--engine auto|spark|reference|spark-streaming] [--scheduler fries|epoch]
                            [--batch-size B]
                            [--save-dir DIR] [--shrink-budget N] [--replay FILE]
                            [--coverage] [--job FILE.py:NAME]
                            [--operator FILE.py:NAME [--fields NAME[:str|int],...]]

Exit 0: every case of every check that ran passed; 1: a discrepancy (the shrunk case is
printed, and saved as a replayable JSON file plus a pytest regression file); 2: bad input
(unknown suite, fault or engine; a fault that no available engine can inject).
A check that cannot run here (e.g. "spark engine not available") is shown as NOT RUN, never
as a pass. Progress goes to stderr, the summary to stdout (``--json``: one JSON object).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from streamproof.output import print_json
from streamproof.summary import print_summary

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT = 0, 1, 2


def register(subparsers: Any) -> None:
    """Add the ``conformance`` sub-command."""
    parser = subparsers.add_parser(
        "conformance", help="run the differential suite (spark_impl against the reference)",
        description="Run random scenarios through the engine under test and judge them against "
        "the reference: Fries (serializability, outputs of the witness serial order, exactly-once "
        "across restarts), DGS (outputs = spec(sort(u))), O+ (outputs = sequential reference).")
    parser.add_argument("--suite", default="all", help="fries, dgs, oplus or all (default all)")
    parser.add_argument("--cases", type=int, default=None, metavar="N",
                        help="cases per suite (default: fries 200, dgs 100, oplus 100)")
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary object")
    parser.add_argument("--report", metavar="DIR", help="write a Markdown report with SVG plots to DIR")
    parser.add_argument("--inject-fault", action="append", default=[], metavar="NAME",
                        help="run the engine with a seeded fault (repeatable); see --list-faults")
    parser.add_argument("--list-faults", action="store_true", help="list the seeded faults and exit")
    parser.add_argument("--engine", default="auto", choices=["auto", "spark", "reference", "spark-streaming"],
                        help="engine under test for the Fries suite (auto: spark when available); "
                        "spark-streaming: every suite through its live Structured Streaming front end")
    parser.add_argument("--scheduler", default="fries", choices=["fries", "epoch"],
                        help="scheduler the Fries engine is asked to use (default fries)")
    parser.add_argument("--batch-size", type=int, default=200, metavar="B",
                        help="Fries cases per engine call (one batch of Spark jobs; default 200)")
    parser.add_argument("--save-dir", metavar="DIR",
                        help="where to save shrunk failing cases (default: the --report DIR, else "
                        "./conformance-failures)")
    parser.add_argument("--shrink-budget", type=int, default=2000, metavar="N",
                        help="at most N candidate cases run while shrinking a failure (default 2000)")
    parser.add_argument("--replay", metavar="FILE", help="replay a saved failing case and exit")
    parser.add_argument("--job", metavar="FILE.py:NAME",
                        help="judge YOUR job instead of the catalogue: NAME() in FILE.py returns (job, requests"
                        "[, options]) built with spark_impl (docs/conformance.md, 'Your own job'); default 60 cases")
    parser.add_argument("--operator", metavar="FILE.py:NAME",
                        help="judge YOUR O+ operator: NAME in FILE.py is a spec.oplus.model.OPlus; random inputs "
                        "on the reference (sequential, SN, VSN) and spark_impl's live O+ front end "
                        "(docs/conformance.md, 'Your own O+ operator'); default 30 cases")
    parser.add_argument("--fields", default=None, metavar="NAME[:str|int],...",
                        help="with --operator: the stream columns the payload is made of (default key,value: "
                        "key a string, value an integer)")
    parser.add_argument("--coverage", action="store_true",
                        help="measure branch coverage of spark_impl (driver and Spark's Python workers) "
                        "with coverage.py; shown in the summary, --json and --report")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle ``streamproof conformance``."""
    from spec.errors import InputError

    from conformance.run import RunConfig, fault_catalogue, parse_suites, resolve_engine, run_suites

    if args.cases is not None and args.cases < 0:
        raise InputError(f"must be >= 0, got {args.cases}", "--cases")
    if args.shrink_budget < 0:
        raise InputError(f"must be >= 0, got {args.shrink_budget}", "--shrink-budget")
    if args.batch_size < 1:
        raise InputError(f"must be >= 1, got {args.batch_size}", "--batch-size")
    if getattr(args, "fields", None) is not None and not getattr(args, "operator", None):
        raise InputError("--fields describes the payload of --operator; give --operator FILE.py:NAME too", "--fields")
    if getattr(args, "operator", None):
        from streamproof.conformance_operator import run_operator

        return run_operator(args)
    if getattr(args, "job", None):
        from streamproof.conformance_job import run_job

        return run_job(args)
    suites = parse_suites(args.suite)
    if args.replay:
        return _replay(args)
    live = args.engine == "spark-streaming"
    if args.list_faults:
        if live:
            from conformance.run import streaming_faults
        catalogue = streaming_faults() if live else fault_catalogue(args.engine)
        if args.json:
            print_json(sorted(catalogue))
        else:
            print(f"seeded faults of the {args.engine if live else resolve_engine(args.engine)} engine "
                  "(inject with --inject-fault NAME):")
            for name, what in sorted(catalogue.items()):
                print(f"  {name:<26} {what}")
        return EXIT_OK
    save_dir = args.save_dir or args.report or "conformance-failures"
    config = RunConfig(suites=suites, cases=args.cases, seed=args.seed, engine=args.engine,
                       faults=frozenset(args.inject_fault), batch_size=args.batch_size, save_dir=save_dir,
                       shrink_budget=args.shrink_budget, scheduler=args.scheduler)

    if live:
        from conformance.run import run_streaming_suites as run_suites  # noqa: F811

    def progress_for(suite: str) -> Any:
        from conformance.core.progress import ProgressBar

        return ProgressBar(f"{suite:<6}")

    figure = None
    if args.coverage:
        from conformance.output.coverage import measuring

        with measuring(Path(args.report) / "coverage" if args.report else None) as box:
            results = run_suites(config, progress_for)
        figure = box.figure
    else:
        results = run_suites(config, progress_for)
    failed = sum(r.failed for r in results)
    if args.report:
        from conformance.output.report import write_report

        write_report(Path(args.report), results, coverage=figure)
    if args.json:
        print_json({"passed": failed == 0, "cases": sum(r.cases for r in results), "failed": failed,
                    "seed": args.seed, "suites": [r.to_json() for r in results],
                    "coverage": figure.to_json() if figure is not None else None,
                    "report": str(Path(args.report) / "report.md") if args.report else None})
    else:
        print_summary(results)
        if figure is not None:
            print(f"\ncoverage of spark_impl: {figure.covered_branches}/{figure.branches} branches "
                  f"({figure.branch_percent:.1f}%), {figure.covered_statements}/{figure.statements} statements "
                  f"({figure.statement_percent:.1f}%); {figure.worker_data_files} Spark worker data file(s)")
        if args.report:
            print(f"\nreport: {Path(args.report) / 'report.md'}")
    return EXIT_VIOLATION if failed else EXIT_OK


def _replay(args: argparse.Namespace) -> int:
    from conformance.replay import replay_file

    faults = frozenset(args.inject_fault) if args.inject_fault else None
    outcome = replay_file(args.replay, faults=faults)
    if args.json:
        print_json({"passed": outcome.ok, "explanation": outcome.explanation})
    else:
        print("passes: every oracle holds" if outcome.ok else f"still fails:\n{outcome.explanation}")
    return EXIT_OK if outcome.ok else EXIT_VIOLATION
