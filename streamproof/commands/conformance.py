"""``streamproof conformance``: the differential suite (docs/conformance.md).

    streamproof conformance [--suite fries|dgs|oplus|all] [--cases N] [--seed S] [--json]
                            [--report DIR] [--inject-fault NAME] [--list-faults]
                            [--engine auto|spark|reference|spark-streaming] [--scheduler fries|epoch]
                            [--batch-size B]
                            [--save-dir DIR] [--shrink-budget N] [--replay FILE]
                            [--coverage] [--job FILE.py:NAME] [--load-timeout SECONDS]
                            [--call-timeout SECONDS]
                            [--operator FILE.py:NAME [--fields NAME[:str|int|float|bool[?]],...]]
                            [--spark-log-level LEVEL]

Exit 0: every case of every check that ran passed; 1: a discrepancy (the shrunk case is
printed, and saved as a replayable JSON file plus a pytest regression file); 2: bad input
(unknown suite, fault or engine; a fault that no available engine can inject; ``--cases``
above :data:`MAX_CASES`; a ``--report`` or ``--save-dir`` that cannot be written - checked
before the run; ``--job ''``; a damaged or invalid ``--replay`` file, named with its field;
a ``--spark-log-level`` that is not a log4j level); 3: the connection to Spark's JVM was lost
during the run (one line; no case is reported as a violation).
A check that cannot run here (e.g. "spark engine not available") is shown as NOT RUN, never
as a pass. Progress goes to stderr, the summary to stdout (``--json``: one JSON object); the
product's own ``streamproof.*`` WARNING lines of the suite's engine runs do not (:func:`run`),
nor do Spark's and py4j's log lines (``--spark-log-level``, default ``OFF``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from conformance.core.crashes import SparkGone
from conformance.core.product_logs import product_logs_quiet
from conformance.core.spark_logs import ENV as SPARK_LOG_ENV, LEVELS as SPARK_LOG_LEVELS, resolve_level, spark_logs_quiet
from streamproof.conformance_operator import run_operator
from streamproof.job_probe import probe_job
from streamproof.output import print_json
from streamproof.output_paths import check_output_dir
from streamproof.stdout_kept import stdout_kept
from streamproof.summary import print_summary
from spec.errors import InputError, cut, one_line

EXIT_OK, EXIT_VIOLATION, EXIT_BAD_INPUT, EXIT_INTERNAL = 0, 1, 2, 3
MAX_CASES = 100_000
"""Largest ``--cases`` (per suite): the default runs 100-200; 10^5 Spark cases already take
hours, more would never finish."""
MAX_SHRINK_BUDGET = 1_000_000
MAX_BATCH_SIZE = 100_000
MAX_SECONDS = 86_400
"""The largest --load-timeout / --call-timeout (a day; a NaN or 1e308 is refused)."""


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
    parser.add_argument("--load-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="--job: seconds loading the job (import, NAME(), its source's count) may take, in "
                        "a child process (default 60)")
    parser.add_argument("--call-timeout", type=float, default=60.0, metavar="SECONDS",
                        help="--job: seconds one case's reference run of the job's code may take (default 60)")
    parser.add_argument("--operator", metavar="FILE.py:NAME",
                        help="judge YOUR O+ operator: NAME in FILE.py is a spec.oplus.model.OPlus; random inputs "
                        "on the reference (sequential, SN, VSN) and spark_impl's live O+ front end "
                        "(docs/conformance.md, 'Your own O+ operator'); default 30 cases")
    parser.add_argument("--fields", default=None, metavar="NAME[:str|int|float|bool[?]],...",
                        help="with --operator: the stream columns the payload is made of (default key,value: "
                        "key a string, value an integer); a type's ? makes the field nullable (None)")
    parser.add_argument("--coverage", action="store_true",
                        help="measure branch coverage of spark_impl (driver and Spark's Python workers) "
                        "with coverage.py; shown in the summary, --json and --report")
    parser.add_argument("--spark-log-level", default=None, metavar="LEVEL",
                        help="while the suite runs, Spark's (log4j) and py4j's log level: "
                        f"{', '.join(SPARK_LOG_LEVELS)} (default ${SPARK_LOG_ENV}, else OFF: the suite's injected "
                        "crashes are not news; the suite reports real failures itself); the level of a "
                        "session that was already running is put back afterwards")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Handle ``streamproof conformance``. While the suite runs its own engines (every mode:
    the suites, ``--replay``, ``--job``, ``--operator``), the product's ``streamproof.*``
    loggers log only ERROR and above (:mod:`conformance.core.product_logs`): their WARNING
    lines are the suite's injected crashes and restarts, not news for the user, and would
    otherwise be printed to stderr. Spark's JVM and Python loggers log at ``--spark-log-level``
    (default ``OFF``; :mod:`conformance.core.spark_logs`): Spark's ERROR lines and tracebacks
    there describe the crashes the suite injects, and a real infrastructure failure still ends
    the run with the command's own one-line error. The user's own loggers and output are left
    as they are.

    A lost connection to Spark's JVM (it died) is not a finding about spark_impl: the run stops
    with one stderr line saying so, exit 3 (:class:`conformance.core.crashes.SparkGone`)."""
    level = resolve_level(getattr(args, "spark_log_level", None))
    try:
        with product_logs_quiet(), spark_logs_quiet(level):
            return _run(args)
    except SparkGone as gone:
        print(one_line(f"streamproof conformance: error: {gone}"), file=sys.stderr)
        return EXIT_INTERNAL


def _run(args: argparse.Namespace) -> int:
    from conformance.run import (  # noqa: PLC0415 - loads hypothesis (via conformance.dgs.cases)
        RunConfig, fault_catalogue, parse_suites, resolve_engine, run_streaming_suites, run_suites, streaming_faults,
    )

    if args.cases is not None and not 0 <= args.cases <= MAX_CASES:
        raise InputError(f"must be >= 0 and <= {MAX_CASES:,}, got {cut(str(args.cases), 40)}", "--cases")
    if not 0 <= args.shrink_budget <= MAX_SHRINK_BUDGET:
        raise InputError(f"must be >= 0 and <= {MAX_SHRINK_BUDGET:,}, got {cut(str(args.shrink_budget), 40)}",
                         "--shrink-budget")
    if not 1 <= args.batch_size <= MAX_BATCH_SIZE:
        raise InputError(f"must be >= 1 and <= {MAX_BATCH_SIZE:,}, got {cut(str(args.batch_size), 40)}",
                         "--batch-size")
    for flag, seconds in (("--load-timeout", args.load_timeout), ("--call-timeout", args.call_timeout)):
        if not 0 < seconds <= MAX_SECONDS:
            raise InputError(f"must be > 0 and <= {MAX_SECONDS} seconds, got {seconds}", flag)
    if args.fields is not None and args.operator is None:
        raise InputError("--fields describes the payload of --operator; give --operator FILE.py:NAME too", "--fields")
    if args.operator is not None and args.job is not None:
        raise InputError("--operator judges an O+ operator, --job a Fries job: give one of them", "--operator")
    if args.operator is not None:  # also --operator '': bad input, not "no operator"
        if not args.operator:
            raise InputError("expected FILE.py:NAME, got ''", "--operator")
        return run_operator(args)
    if args.job is not None:  # also --job '': an empty FILE.py:NAME is bad input, not "no job"
        from streamproof.conformance_job import run_job  # noqa: PLC0415 - loaded when the command runs, not by --help

        return run_job(args)
    suites = parse_suites(args.suite)
    if args.replay:
        return _replay(args)
    live = args.engine == "spark-streaming"
    if args.list_faults:
        catalogue = streaming_faults() if live else fault_catalogue(args.engine)
        if args.json:
            print_json(sorted(catalogue))
        else:
            print(f"seeded faults of the {args.engine if live else resolve_engine(args.engine)} engine "
                  "(inject with --inject-fault NAME):")
            for name, what in sorted(catalogue.items()):
                print(f"  {name:<26} {what}")
        return EXIT_OK
    # checked before the run: a run whose report or saved cases cannot be written is lost
    # ('' is a path given, and refused, not "no path")
    if args.report is not None:
        check_output_dir(args.report, "--report")
    if args.save_dir is not None:
        check_output_dir(args.save_dir, "--save-dir")
    save_dir = next(d for d in (args.save_dir, args.report, "conformance-failures") if d is not None)
    if save_dir == "conformance-failures":
        check_output_dir(save_dir, "--save-dir (default ./conformance-failures)")
    config = RunConfig(suites=suites, cases=args.cases, seed=args.seed, engine=args.engine,
                       faults=frozenset(args.inject_fault), batch_size=args.batch_size, save_dir=save_dir,
                       shrink_budget=args.shrink_budget, scheduler=args.scheduler)

    run_all = run_streaming_suites if live else run_suites

    def progress_for(suite: str) -> Any:
        from conformance.core.progress import ProgressBar  # noqa: PLC0415 - loaded when the command runs, not by --help

        return ProgressBar(f"{suite:<6}")

    figure = None
    if args.coverage:
        from conformance.output.coverage import measuring  # noqa: PLC0415 - loaded when the command runs, not by --help

        with measuring(Path(args.report) / "coverage" if args.report else None) as box:
            results = run_all(config, progress_for)
        figure = box.figure
    else:
        results = run_all(config, progress_for)
    failed = sum(r.failed for r in results)
    if args.report:
        from conformance.output.report import write_report  # noqa: PLC0415 - loaded when the command runs, not by --help

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
    from conformance.replay import replay_file  # noqa: PLC0415 - loads hypothesis (via conformance.dgs.cases)

    faults = frozenset(args.inject_fault) if args.inject_fault else None
    job = _job_of(args.replay)
    if job is None:
        outcome = replay_file(args.replay, faults=faults)
    else:  # a user-job case: its job is loaded first in a child, as with --job (streamproof.job_probe)
        probe_job(job, args.load_timeout)
        with stdout_kept():
            outcome = replay_file(args.replay, faults=faults)
    if args.json:
        print_json({"passed": outcome.ok, "explanation": outcome.explanation})
    else:
        print("passes: every oracle holds" if outcome.ok else f"still fails:\n{outcome.explanation}")
    return EXIT_OK if outcome.ok else EXIT_VIOLATION


def _job_of(path: str) -> str | None:
    """The job ``FILE.py:NAME`` a saved user-job case names (after the file's validation), else None."""
    from conformance.core.saved_case import load_case  # noqa: PLC0415 - loaded when the command runs, not by --help
    from conformance.replay_checks import check_record  # noqa: PLC0415 - loads hypothesis (via conformance.dgs.cases)

    record = load_case(path)
    if record["suite"] != "userjob":
        return None
    check_record(record, path)
    return str(record["case_data"]["job"])
