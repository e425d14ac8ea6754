"""``streamproof cluster run``: one conformance-checked job on a real Spark standalone cluster
on 127.0.0.1.

Starts a master and ``--workers`` workers from the pip-installed PySpark
(:class:`conformance.cluster.standalone.LocalCluster`), submits
:mod:`conformance.cluster.job` with ``spark-submit --deploy-mode client``, prints what ran
where (the driver's and every executor's pids) and the verdict, and stops every process it
started (also on an error, Ctrl-C or SIGTERM).

``--json`` prints ``{"job", "workers", "master", "start_s", "submit_s", "job_s", "driver",
"executors", "cases", "failed", "failures", "conformed", "leftovers"}``. Exit 0 iff every case
of the job conformed, 1 if one did not, 2 on bad input, 3 when the cluster or the driver
failed (no Java, a daemon died, a timeout) or a process was left behind.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from typing import Any

from spec.errors import InputError
from spec.jsonio import load_json

JOBS = ("fries", "oplus", "dgs")


def register(subparsers: "argparse._SubParsersAction[argparse.ArgumentParser]") -> None:
    """Add the ``cluster`` sub-command (``cluster run``)."""
    parser = subparsers.add_parser(
        "cluster", help="run a conformance-checked job on a Spark standalone cluster on 127.0.0.1",
        description="A real multi-process Spark cluster on this machine: a standalone master, workers, "
        "executors in their own JVMs, the driver under spark-submit.")
    actions = parser.add_subparsers(dest="action", metavar="ACTION")
    run_parser = actions.add_parser(
        "run", help="start the cluster, run one conformance-checked job, stop everything",
        description="Start a master and --workers workers on 127.0.0.1, submit one job (client mode), judge it "
        "with the conformance oracles, print which processes ran it, stop every process.")
    run_parser.add_argument("--workers", type=int, default=2, help="workers, 1 core and 1g each (default 2)")
    run_parser.add_argument("--job", default="fries", help="fries (default), oplus or dgs")
    run_parser.add_argument("--cases", type=int, default=3, help="random cases in the job (default 3)")
    run_parser.add_argument("--seed", type=int, default=0, help="seed of the cases (default 0)")
    run_parser.add_argument("--timeout", type=float, default=900.0, help="seconds the job may take (default 900)")
    run_parser.add_argument("--json", action="store_true", help="machine-readable output")
    run_parser.set_defaults(handler=run)
    parser.set_defaults(handler=_no_action)


def _no_action(args: argparse.Namespace) -> int:
    raise InputError("expected an action: run", "streamproof cluster")


def run(args: argparse.Namespace) -> int:
    """Start, submit, judge, stop (module docstring)."""
    if not 1 <= args.workers <= 8:
        raise InputError(f"must be between 1 and 8, got {args.workers}", "--workers")
    if args.job not in JOBS:
        raise InputError(f"unknown job {args.job!r} (expected fries, oplus or dgs)", "--job")
    if not 1 <= args.cases <= 200:
        raise InputError(f"must be between 1 and 200, got {args.cases}", "--cases")
    if not args.timeout > 0:
        raise InputError(f"must be positive, got {args.timeout}", "--timeout")
    from conformance.cluster.processes import sigterm_unwinds  # noqa: PLC0415 - loaded when the command runs, not by --help
    from conformance.cluster.standalone import ClusterError, LocalCluster  # noqa: PLC0415 - loaded when the command runs, not by --help

    cluster = LocalCluster(args.workers)
    try:
        with sigterm_unwinds():  # so the cluster is stopped on SIGTERM too
            try:
                report = _run_job(cluster, args)
            finally:
                cluster.stop()
    except ClusterError as error:
        print(f"streamproof cluster run: error: {error}".splitlines()[0], file=sys.stderr)
        return 3
    report["leftovers"] = cluster.leftovers()
    if report.get("driver_failed"):
        print(f"streamproof cluster run: error: the driver failed ({report['driver_failed']}); "
              f"its output ended with: {report['driver_tail']!r}"[:2000], file=sys.stderr)
        return 3
    print(json.dumps(report, indent=2) if args.json else _plain(report))
    if report["leftovers"]:
        print(f"streamproof cluster run: error: processes left behind: {report['leftovers']}", file=sys.stderr)
        return 3
    return 0 if report["conformed"] else 1


def _run_job(cluster: Any, args: argparse.Namespace) -> dict[str, Any]:
    """Start the cluster, submit the job, read the driver's report (before the cluster stops
    and its directory goes)."""
    import conformance.cluster.job as job  # noqa: PLC0415 - loads hypothesis (via conformance.core.cases)

    cluster.start()
    out = os.path.join(cluster.shared_dir, "report.json")
    submission = cluster.submit(job.__file__, [
        "--job", args.job, "--cases", str(args.cases), "--seed", str(args.seed),
        "--executors", str(args.workers), "--checkpoint", os.path.join(cluster.shared_dir, "checkpoints"),
        "--out", out], timeout_s=args.timeout)
    report: dict[str, Any] = {"job": args.job, "workers": args.workers, "master": cluster.master_url,
                              "start_s": round(cluster.started_s, 1), "submit_s": round(submission.elapsed_s, 1)}
    if submission.timed_out or submission.returncode != 0 or not os.path.exists(out):
        why = "timed out" if submission.timed_out else f"exit code {submission.returncode}"
        report.update(driver_failed=why, driver_tail=submission.tail(5))
        return report
    driven = load_json(out)
    failures = [{"case": c["index"], "oracles": c["failures"]} for c in driven["cases"] if c["failures"]]
    report.update(job_s=driven["job_s"], driver=driven["driver"],
                  executors=_executors(driven["before"] + driven["after"]),
                  cases=len(driven["cases"]), failed=len(failures), failures=failures,
                  conformed=not failures and bool(driven["cases"]))
    return report


def _executors(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One entry per executor JVM: id, host, pid, the PySpark daemons and workers seen in it."""
    merged: dict[Any, dict[str, Any]] = {}
    for row in rows:
        entry = merged.setdefault(row["executor_pid"], {
            "executor_id": row["executor_id"], "host": row["host"], "jvm_pid": row["executor_pid"],
            "daemon_pids": [], "python_pids": []})
        for key, value in (("daemon_pids", row["daemon_pid"]), ("python_pids", row["python_pid"])):
            if value is not None and value not in entry[key]:
                entry[key].append(value)
    return sorted(merged.values(), key=lambda e: str(e["executor_id"]))


def _plain(report: dict[str, Any]) -> str:
    driver = report["driver"]
    lines = [f"cluster: {report['master']}, {report['workers']} worker(s), started in {report['start_s']} s",
             f"driver: python pid {driver['python_pid']}, JVM pid {driver['jvm_pid']} (client mode)"]
    for entry in report["executors"]:
        lines.append(f"executor {entry['executor_id']}: JVM pid {entry['jvm_pid']} on {entry['host']}, "
                     f"PySpark daemon {entry['daemon_pids']}, Python workers {entry['python_pids']}")
    lines.append(f"job {report['job']}: {report['cases']} case(s), {report['failed']} failed "
                 f"(job {report['job_s']} s, spark-submit {report['submit_s']} s)")
    for failure in report["failures"]:
        lines.append(f"  case {failure['case']}: " + "; ".join(failure["oracles"]))
    lines.append("verdict: " + ("conformed" if report["conformed"] else "VIOLATION"))
    return "\n".join(lines)
