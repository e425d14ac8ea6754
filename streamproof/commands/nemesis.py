"""``streamproof nemesis``: real faults on a Spark standalone cluster on 127.0.0.1 while Fries,
O+ and DGS jobs run, every run judged by the conformance oracles.

Starts a master and two workers (:class:`conformance.cluster.standalone.LocalCluster`), runs
:class:`conformance.cluster.nemesis.Nemesis` for ``--minutes`` of faults (``--faults``, default
all of :data:`conformance.cluster.nemesis_faults.FAULTS`), lets the last round finish, stops
every process (also on Ctrl-C, SIGTERM or an error) and reports.

``--json`` prints ``{"runs", "faults": {"NAME": count, ...}, "lost", "duplicated",
"serializable", "violations": [...], "recovery_ms": {"p50", "max"}}`` plus extra keys
(:mod:`conformance.cluster.nemesis_report`). Exit 0 iff no oracle failed and nothing was lost
or duplicated, 1 otherwise, 2 on bad input (an unknown fault: one line listing the valid
ones), 3 on an internal error (the cluster or the driver could not start, a process left
behind).
"""

from __future__ import annotations

import argparse
import json
import os
import sys

from spec.errors import InputError


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``nemesis`` sub-command."""
    from conformance.cluster.nemesis_faults import FAULTS  # noqa: PLC0415 - loaded when the command runs, not by --help

    parser = subparsers.add_parser(
        "nemesis", help="inject real process faults into a local Spark cluster while conformance-checked jobs run",
        description="Kill executors, Python workers and the driver, pause executors past the heartbeat timeout, "
        "restart workers and damage checkpoint state files while Fries (reconfigured), O+ (rescaled) and DGS jobs "
        "run on a standalone cluster on 127.0.0.1; judge every run. Faults: "
        + "; ".join(f"{name}: {text}" for name, text in FAULTS.items()))
    parser.add_argument("--minutes", type=float, default=2.0, help="minutes of fault injection (default 2)")
    parser.add_argument("--faults", default=None, help="comma-separated fault names (default all)")
    parser.add_argument("--seed", type=int, default=0, help="seed of faults, moments and cases (default 0)")
    parser.add_argument("--cases", type=int, default=3, help="random cases per round (default 3)")
    parser.add_argument("--jobs", default="fries,oplus,dgs",
                        help="the jobs the rounds cycle through (default fries,oplus,dgs)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def validate(args: argparse.Namespace) -> tuple[str, ...]:
    """The selected faults; InputError on bad input."""
    from conformance.cluster.nemesis_faults import parse_faults  # noqa: PLC0415 - loaded when the command runs, not by --help

    if not 0 < args.minutes <= 24 * 60:
        raise InputError(f"must be more than 0 and at most 1440, got {args.minutes}", "--minutes")
    if not 1 <= args.cases <= 50:
        raise InputError(f"must be between 1 and 50, got {args.cases}", "--cases")
    jobs = [job.strip() for job in args.jobs.split(",") if job.strip()]
    if not jobs or any(job not in ("fries", "oplus", "dgs") for job in jobs):
        raise InputError(f"expected a comma-separated list of fries, oplus, dgs, got {args.jobs!r}", "--jobs")
    args.jobs = ",".join(jobs)
    return parse_faults(args.faults)


def run(args: argparse.Namespace) -> int:
    """Start the cluster, run the nemesis, stop everything, report (module docstring)."""
    faults = validate(args)
    from conformance.cluster.nemesis import Nemesis, NemesisConfig  # noqa: PLC0415 - loads hypothesis (via conformance.core.cases)
    from conformance.cluster.nemesis_report import build_report, exit_code, plain  # noqa: PLC0415 - loaded when the command runs, not by --help
    from conformance.cluster.processes import sigterm_unwinds  # noqa: PLC0415 - loaded when the command runs, not by --help
    from conformance.cluster.standalone import ClusterError, LocalCluster  # noqa: PLC0415 - loaded when the command runs, not by --help

    def say(text: str) -> None:
        if not args.json:
            print(text, file=sys.stderr, flush=True)

    cluster = LocalCluster(2)
    nemesis: Nemesis | None = None
    try:
        with sigterm_unwinds():
            try:
                cluster.start()
                say(f"cluster {cluster.master_url} up in {cluster.started_s:.1f} s")
                nemesis = Nemesis(cluster, NemesisConfig(args.minutes, faults, args.seed, args.cases,
                                                             tuple(args.jobs.split(","))), say)
                nemesis.run()
                results = list(nemesis.events.results)
            finally:
                cluster.stop()
    except (ClusterError, RuntimeError) as error:
        print(f"streamproof nemesis: error: {error}".splitlines()[0], file=sys.stderr)
        return 3
    leftovers = cluster.leftovers()
    assert nemesis is not None
    report = build_report(results, nemesis.injections, nemesis.problems, minutes=args.minutes, seed=args.seed,
                          load_average=[round(x, 2) for x in os.getloadavg()], leftovers=leftovers)
    print(json.dumps(report, indent=2) if args.json else plain(report))
    if leftovers:
        print(f"streamproof nemesis: error: processes left behind: {leftovers}", file=sys.stderr)
        return 3
    return exit_code(report)
