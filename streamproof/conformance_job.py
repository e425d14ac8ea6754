"""``streamproof conformance --job FILE.py:NAME`` (registered by the ``conformance`` command).

    streamproof conformance --job FILE.py:NAME [--cases N] [--seed S] [--engine spark]
                            [--inject-fault NAME] [--scheduler fries|epoch] [--batch-size B]
                            [--save-dir DIR] [--shrink-budget N] [--replay FILE] [--json]
                            [--load-timeout SECONDS] [--call-timeout SECONDS]

The job is loaded first in a child process within ``--load-timeout`` (:mod:`streamproof.job_probe`):
whatever it does there (any exception, ``sys.exit``, ``os._exit``, a signal, a write to fd 1, a
hang) is bad input. Then it is loaded here and run with fd 1 kept away from it
(:mod:`streamproof.stdout_kept`); each case's reference run is bounded by ``--call-timeout``.

Exit 0: every case passed; 1: a case failed (the shrunk case is printed and saved, replayable
with ``--replay``) - including a case in which the job's own code raised or hung (oracle
``user-code``: the user's fault, named with the call); 2: bad input (the file cannot be
loaded, NAME is missing or returns the wrong thing, an unknown fault, another engine).
"""

from __future__ import annotations

import argparse
import sys

from spec.errors import InputError

from streamproof.job_probe import probe_job
from streamproof.output import print_json
from streamproof.output_paths import check_output_dir
from streamproof.stdout_kept import stdout_kept
from streamproof.summary import print_summary
from conformance.core.progress import ProgressBar
from conformance.core.saved_case import load_case
from spark_impl.faults import FAULTS

DEFAULT_CASES = 60


def run_job(args: argparse.Namespace) -> int:
    """Handle ``conformance --job`` (module docstring): the job's code runs while fd 1 is kept
    away from it (:func:`streamproof.stdout_kept.stdout_kept`)."""
    with stdout_kept():
        return _run_job(args)


def _run_job(args: argparse.Namespace) -> int:
    from conformance.userjob.load import load_job, split_ref  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)
    from conformance.userjob.suite import UserJobConfig, check_faults, replay, run_userjob_suite  # noqa: PLC0415 - loads hypothesis (via conformance.core.cases)

    split_ref(args.job)  # FILE.py:NAME well formed and the file there, before anything runs
    if args.engine not in ("auto", "spark"):
        raise InputError(f"a user job runs on the spark engine only, not {args.engine!r}", "--engine")
    if args.list_faults:
        from spark_impl.reconfig.api import RECONFIG_FAULTS  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)

        if args.json:
            print_json(sorted(RECONFIG_FAULTS))
        else:
            print("seeded faults for user jobs (inject with --inject-fault NAME):")
            for name in sorted(RECONFIG_FAULTS):
                print(f"  {name:<26} {FAULTS[name]}")
        return 0
    faults = frozenset(args.inject_fault)
    check_faults(faults)
    if args.replay:
        from conformance.replay_checks import check_record  # noqa: PLC0415 - loads hypothesis (via conformance.dgs.cases)

        record = load_case(args.replay)
        check_record(record, args.replay)
        if record["suite"] != "userjob":
            raise InputError(f"not a user-job case (suite {record['suite']!r}); replay it without --job", "--replay")
        record["case_data"] = {**record["case_data"], "job": args.job}
        probe_job(args.job, args.load_timeout)
        ok, explanation = replay(record, faults if args.inject_fault else None)
        if args.json:
            print_json({"passed": ok, "explanation": explanation})
        else:
            print("passes: every oracle holds" if ok else f"still fails:\n{explanation}")
        return 0 if ok else 1
    save_dir = "conformance-failures" if args.save_dir is None else args.save_dir
    check_output_dir(save_dir, "--save-dir")  # before the run: saved failures must not be lost
    probe_job(args.job, args.load_timeout)
    under = load_job(args.job)
    config = UserJobConfig(ref=args.job, cases=DEFAULT_CASES if args.cases is None else args.cases, seed=args.seed,
                           scheduler=args.scheduler, faults=faults, batch_size=args.batch_size,
                           save_dir=save_dir, shrink_evaluations=args.shrink_budget,
                           call_limit_s=args.call_timeout)
    result = run_userjob_suite(config, progress=ProgressBar("userjob"), under=under)
    printed = under.printed
    if args.json:
        print_json({"passed": result.failed == 0, "cases": result.cases, "failed": result.failed, "seed": args.seed,
                    "job": args.job, "dependence": under.dependence, "suites": [result.to_json()],
                    "printed_while_loading": printed or None})
    else:
        print_summary([result])
        print(f"job: {args.job}; output dependence: {under.dependence}")
        if printed:
            print(f"the job printed while loading (captured): {printed[-300:].strip()}")
        for check in result.checks:
            if check.note:
                print(check.note)
        if result.failures:
            print(f"replay: streamproof conformance --replay {result.failures[0].replay_file}")
    sys.stdout.flush()
    return 1 if result.failed else 0

