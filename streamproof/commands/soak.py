"""``streamproof soak``: does a live stream stay flat? A steady Structured Streaming query
through the reconfiguration executor (``spark_impl.workloads.soak``: string keys, a request
every few batches made while the query runs, bounded storage, an exactly-once Parquet sink).

``--front-end oplus`` soaks the O+ live front end instead (``spark_impl.workloads.soak_oplus``:
a sliding-sum rescaled every few batches while it runs); ``--front-end dgs`` the DGS live front
end (``spark_impl.workloads.soak_dgs``: a keyed DGS program re-planned 2 <-> 3 leaves every few
batches while it runs). ``--json`` prints exactly
``{"batches", "disk_bytes_start", "disk_bytes_end", "rss_bytes_start", "rss_bytes_end", "batch_ms_p50_start", "batch_ms_p50_end", "lost",
"duplicated"}`` (``_start`` after the first 10% of batches, ``_end`` over the last 10%; disk =
the checkpoint directory, RSS = the driver, its JVM and the Python workers). Exit 0 iff
nothing was lost or duplicated, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

from spec.errors import InputError, cut
from streamproof.output import print_json

MAX_BATCHES = 100_000
"""Largest ``--batches`` (the default 300 takes minutes; 100,000 about a day)."""
MAX_ROWS_PER_BATCH = 1_000_000
MAX_KEYS = 1_000_000
MARKER = "streamproof-soak.json"
"""Created (exclusively) in ``--dir`` when a soak starts there: a second soak, running or
later, finds the directory in use and refuses it."""


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``soak`` sub-command."""
    parser = subparsers.add_parser(
        "soak", help="run a steady live stream with reconfigurations; check disk, memory and latency stay flat",
        description="A Structured Streaming query on local Spark through the Fries executor, reconfigured "
        "every few batches while it runs; prints disk, RSS and batch latency at the start and the end, and "
        "the outputs lost or duplicated (read back from the Parquet sink).")
    parser.add_argument("--batches", type=int, default=300,
                        help=f"Structured Streaming batches (default 300, 10 to {MAX_BATCHES:,})")
    parser.add_argument("--rows-per-batch", type=int, default=200, help="input rows per batch (default 200)")
    parser.add_argument("--keys", type=int, default=50, help="distinct string keys (default 50)")
    parser.add_argument("--every", type=int, default=5, help="a reconfiguration every this many batches (default 5)")
    parser.add_argument("--scheduler", default="fries", help="fries (default), epoch or naive")
    parser.add_argument("--front-end", default="fries", choices=("fries", "oplus", "dgs"),
                        help="the live front end: fries (reconfigurations of a Fries job, default), oplus "
                        "(an O+ sliding-sum rescaled 2 <-> 3 while it runs) or dgs (a keyed DGS program "
                        "re-planned 2 <-> 3 leaves while it runs)")
    parser.add_argument("--dir", default=None, help="keep the checkpoint and the Parquet table here: a new "
                        "or empty directory (one used by another soak, running or finished, is refused; a soak "
                        "does not resume; default: a temporary directory, removed afterwards)")
    parser.add_argument("--json", action="store_true", help="machine-readable output")
    parser.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    """Run the soak; 0 if nothing was lost or duplicated, 1 otherwise."""
    if not 10 <= args.batches <= MAX_BATCHES:
        raise InputError(f"must be at least 10 (the first and last 10% are measured) and at most "
                         f"{MAX_BATCHES:,}, got {cut(str(args.batches), 40)}", "--batches")
    for name, most in (("rows_per_batch", MAX_ROWS_PER_BATCH), ("keys", MAX_KEYS), ("every", args.batches)):
        if not 1 <= getattr(args, name) <= most:
            raise InputError(f"must be at least 1 and at most {most:,}, got {cut(str(getattr(args, name)), 40)}",
                             "--" + name.replace("_", "-"))
    if args.scheduler not in ("fries", "epoch", "naive"):
        raise InputError(f"unknown scheduler {args.scheduler!r} (expected fries, epoch or naive)", "--scheduler")
    if args.front_end == "dgs":
        from spark_impl.workloads.soak_dgs_program import MAX_KEYS as DGS_KEYS  # noqa: PLC0415 - loaded when the command runs, not by --help

        if args.keys > DGS_KEYS:
            raise InputError(f"the DGS soak's program has {DGS_KEYS} keys, got {args.keys}", "--keys")
    if args.dir is not None:
        claim_dir(args.dir)
    from spark_impl.session import get_or_create_session  # noqa: PLC0415 - loaded when the command runs, not by --help
    from spark_impl.workloads.soak import LONG_RUNNING_CONF, run_soak  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)
    from spark_impl.workloads.soak_dgs import run_dgs_soak  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)
    from spark_impl.workloads.soak_oplus import run_oplus_soak  # noqa: PLC0415 - loads pyspark (via spark_impl.reconfig.layout)

    # glibc gives each JVM thread its own malloc arena; two keep native memory from creeping
    os.environ.setdefault("MALLOC_ARENA_MAX", "2")
    spark = get_or_create_session(app_name="streamproof-soak", conf=LONG_RUNNING_CONF)
    directory = args.dir or tempfile.mkdtemp(prefix="streamproof-soak-")

    def progress(done: int) -> None:
        if not args.json and sys.stderr.isatty():
            print(f"\r{done}/{args.batches} batches", end="", file=sys.stderr, flush=True)

    try:
        if args.front_end == "dgs":
            result = run_dgs_soak(spark, args.batches, directory, rows_per_batch=args.rows_per_batch,
                                  keys=args.keys, every=args.every, on_batch=progress)
        elif args.front_end == "oplus":
            result = run_oplus_soak(spark, args.batches, directory, rows_per_batch=args.rows_per_batch,
                                    keys=args.keys, every=args.every, on_batch=progress)
        else:
            result = run_soak(spark, args.batches, directory, rows_per_batch=args.rows_per_batch, keys=args.keys,
                              every=args.every, scheduler=args.scheduler, on_batch=progress)
    finally:
        if args.dir is None:
            shutil.rmtree(directory, ignore_errors=True)
    figures = result.contract()
    if args.json:
        print_json(figures)
    else:
        def ratio(a: float, b: float) -> str:
            return f"{b / a:.2f}x" if a else "n/a"

        what = {"oplus": "rescales (O+)", "dgs": "re-plans (DGS)"}.get(args.front_end,
                                                                      f"reconfigurations ({args.scheduler})")
        print(f"soak: {result.batches} batches of {args.rows_per_batch} rows, {args.keys} string keys, "
              f"{result.requests} {what}")
        print(f"{'':<14} {'start':>14} {'end':>14} {'end/start':>10}")
        for label, key, unit in (("disk", "disk_bytes", "B"), ("rss", "rss_bytes", "B"), ("batch p50", "batch_ms_p50", "ms")):
            a, b = figures[f"{key}_start"], figures[f"{key}_end"]
            print(f"{label:<14} {a:>12,.0f}{unit:>2} {b:>12,.0f}{unit:>2} {ratio(a, b):>10}")
        print(f"lost {result.lost}, duplicated {result.duplicated}")
    return 0 if result.lost == 0 and result.duplicated == 0 else 1


def claim_dir(path: str) -> None:
    """Make ``path`` this soak's directory, before Spark starts: it must be a new or empty
    directory (InputError otherwise), and it gets :data:`MARKER`, created exclusively, so
    that a second soak given the same directory - while this one runs or after it - is
    refused with one line instead of sharing its checkpoint (a soak never resumes)."""
    target = Path(path)
    if "\0" in path or not path:
        raise InputError("expected a directory path", "--dir")
    if target.exists() and not target.is_dir():
        raise InputError(f"{path!r} exists and is not a directory", "--dir")
    try:
        target.mkdir(parents=True, exist_ok=True)
        if (target / MARKER).exists():
            raise InputError(f"{path!r} already holds a soak (a running or finished one: {MARKER}); a soak does "
                             "not resume, give a new or empty directory", "--dir")
        if any(target.iterdir()):
            raise InputError(f"{path!r} is not empty; give a new or empty directory", "--dir")
        with open(target / MARKER, "x") as handle:  # exclusive: two soaks starting at once
            json.dump({"format": "streamproof.soak-dir/1", "pid": os.getpid()}, handle)
    except FileExistsError:
        raise InputError(f"{path!r} already holds a soak (a running or finished one: {MARKER}); give a new or "
                         "empty directory", "--dir") from None
    except OSError as error:
        raise InputError(f"cannot use {path!r} ({error.strerror})", "--dir") from None
