"""Independent bugs against the default conformance suite (target: 19 of any 20 realistic
one-line bugs written independently of the suite).

Each ``tools/independent_bugs/NN-name.patch`` is a realistic one-line bug in
``spark_impl/``, written from ``spark_impl/`` and the docs only, before reading
``conformance/`` or ``tests/`` (``tools/independent_bugs/INDEX.md`` says what each one
breaks). For every patch this script

1. snapshots a commit (default HEAD) with ``git archive`` into ``RUN/NN-name/tree`` (never
   the shared working tree) and applies the patch there;
2. runs the suite of the patched package (``spark_impl/dgs`` -> ``dgs``, ``spark_impl/oplus``
   -> ``oplus``, everything else -> ``fries``) exactly as a user would, with the defaults
   (Spark engine, default case count, seed 0): ``streamproof conformance --suite S --json
   --shrink-budget 0`` (no shrinking: only the verdict counts), in a fresh process with the
   snapshot as working directory and first on ``PYTHONPATH``, so the driver AND Spark's
   Python workers import the patched module (``--verify`` checks that with a patch that
   breaks every Fries case); ``--fail-fast`` runs the same default suite through
   ``tools/mutation.py child-check`` instead, which stops at the first failing batch
   (same verdicts, faster for caught bugs);
3. with ``--tests``, also runs the relevant pytest files on a bug the suite missed: the tests
   mirroring the patched module (``tests/spark_impl/...``), then the suite's named files; the
   default suite and the default tests together are what must catch a bug; ``--tests-first``
   runs the Spark-free ones of those tests first, the suite on a bug they let through, the
   tests that start Spark last (the same verdict, much faster: most bugs of the shared layer
   and the front ends are caught by tests that need no Spark; ``tools/cost_order.py``).

It prints the table ``bug | suite | caught | cases failed | seconds`` and appends one JSON
line per bug to ``RUN/results.jsonl``.

Usage::

    python tools/independent_bugs.py --run /tmp/ib              # every patch, HEAD
    python tools/independent_bugs.py --run /tmp/ib --only 02 14 --jobs 2 [--tests]
    python tools/independent_bugs.py --run /tmp/ib --fail-fast --tests-first   # suite + tests, cheap side first
    python tools/independent_bugs.py --run /tmp/ib --verify     # the import check
    python tools/independent_bugs.py --run /tmp/ib --summary    # the table of every run so far
    python tools/independent_bugs.py --run /tmp/ib2 --set set-b  # another set (a sub-directory)
    python tools/independent_bugs.py --run /tmp/ib2 --set set-b --tests-only  # pytest column only

``--set NAME`` runs the patches of ``tools/independent_bugs/NAME/`` (for
example ``set-b``, the second set, written independently of the first; each set's
``generate.py`` makes its patches).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import subprocess
import sys
import tarfile
import time
from concurrent.futures import ThreadPoolExecutor
from io import BytesIO
from pathlib import Path
from typing import Any

from cost_order import mirror_tests, split_by_spark

ROOT = Path(__file__).resolve().parent.parent
PATCHES = ROOT / "tools" / "independent_bugs"
TIMEOUT_S = 1800.0
TESTS = {"dgs": ["tests/spark_impl/dgs/test_spark_dgs_executor.py", "tests/conformance/test_conformance_dgs_oplus_spark.py"],
         "oplus": ["tests/spark_impl/oplus/test_spark_oplus_executor.py", "tests/conformance/test_conformance_dgs_oplus_spark.py"],
         "fries": ["tests/spark_impl/reconfig/test_spark_reconfig.py", "tests/spark_impl/reconfig/test_spark_mcs.py", "tests/spark_impl/reconfig/test_spark_reorder.py",
                   "tests/spark_impl/reconfig/test_spark_layout_roles.py", "tests/spark_impl/test_spark_keys.py",
                   "tests/spark_impl/reconfig/test_spark_streaming_query.py", "tests/conformance/test_conformance_spark.py"]}
#: Extra test files for a patch of a module (prefix) whose own tests are not in :data:`TESTS`
#: (the live front ends, sinks, bounded storage).
MODULE_TESTS = {"spark_impl/dgs/streaming": ["tests/spark_impl/dgs/test_spark_dgs_streaming.py"],
                "spark_impl/oplus/streaming": ["tests/spark_impl/oplus/test_spark_oplus_streaming.py",
                                               "tests/conformance/oplus/test_spark_oplus_streaming_conformance.py"],
                "spark_impl/reconfig/sinks.py": ["tests/spark_impl/reconfig/test_spark_streaming_sink.py"],
                "spark_impl/reconfig/objectstore.py": ["tests/spark_impl/reconfig/test_spark_objectstore_sink.py"],
                "spark_impl/reconfig/retention.py": ["tests/spark_impl/reconfig/test_spark_bounded_storage.py"],
                "spark_impl/reconfig/streaming.py": ["tests/spark_impl/reconfig/test_spark_streaming_request_ids.py"]}
#: ``--verify``: every Fries case fails if (and only if) the snapshot is what Spark's workers run.
VERIFY_PATCH = """diff --git a/spark_impl/reconfig/task.py b/spark_impl/reconfig/task.py
--- a/spark_impl/reconfig/task.py
+++ b/spark_impl/reconfig/task.py
@@ -266,1 +266,1 @@
-                self.file.outputs.append((s, op, txn, key, value))
+                self.file.outputs.append((s, op, txn, key, 424242))
"""


def patched_files(patch: str) -> list[str]:
    """The files a patch changes (``+++ b/...`` lines)."""
    return [line[6:].strip() for line in patch.splitlines() if line.startswith("+++ b/")]


def suite_of(patch: str) -> str:
    """The suite exercising the patched package."""
    files = patched_files(patch)
    if any(f.startswith("spark_impl/dgs/") for f in files):
        return "dgs"
    if any(f.startswith("spark_impl/oplus/") for f in files):
        return "oplus"
    return "fries"


def changed_line(patch: str) -> str:
    """The first removed and added lines, ``before  ->  after``."""
    minus = next((line[1:].strip() for line in patch.splitlines() if line.startswith("-") and not line.startswith("---")), "")
    plus = next((line[1:].strip() for line in patch.splitlines() if line.startswith("+") and not line.startswith("+++")), "")
    return f"{minus}  ->  {plus}"


def fail_fast_argv(suite: str) -> list[str]:
    """The fail-fast run of ``suite``: ``mutation.py child-check`` of THIS checkout's tools (an
    absolute path), run with the snapshot as working directory and first on ``PYTHONPATH``, so a
    snapshot of any commit - one without ``tools/`` too - is judged by its own suite."""
    return [sys.executable, str(Path(__file__).resolve().parent / "mutation.py"), "child-check", "--suite", suite]


def snapshot(commit: str, tree: Path) -> None:
    """``git archive commit`` into ``tree``."""
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT, check=True,
                             capture_output=True).stdout
    tree.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")


def env_for(tree: Path) -> dict[str, str]:
    """The snapshot first on the import path (driver and Spark workers), no bytecode files."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(tree)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return env


def run_process(argv: list[str], tree: Path, log: Path, timeout_s: float,
                stdout: Path | None = None) -> tuple[int | None, float]:
    """Run ``argv`` in ``tree`` (own process group, killed on timeout), stderr (and stdout
    unless ``stdout`` is given) to ``log``; (exit code, seconds)."""
    start = time.monotonic()
    with open(log, "w", encoding="utf-8") as out, open(stdout or os.devnull, "w", encoding="utf-8") as data:
        proc = subprocess.Popen(argv, cwd=tree, env=env_for(tree), stdout=data if stdout else out,
                                stderr=out, start_new_session=True)
        try:
            code: int | None = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            code = None
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    return code, time.monotonic() - start


def summary_of(path: Path) -> dict[str, Any]:
    """The suite's ``--json`` summary object (its whole stdout), or {} if there is none."""
    try:
        found: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return found


def fail_fast_summary(path: Path) -> dict[str, Any]:
    """``tools/mutation.py child-check`` prints ``suite S: N cases, F failed, ran=B``."""
    found = re.search(r"suite \w+: (\d+) cases, (\d+) failed", path.read_text(encoding="utf-8", errors="replace"))
    return {"cases": int(found.group(1)), "failed": int(found.group(2))} if found else {}


def check(run: Path, commit: str, name: str, patch: str, with_tests: bool,
          fail_fast: bool = False, tests_first: bool = False) -> dict[str, Any]:
    """Snapshot, apply, run the suite (and maybe the tests) for one bug. ``tests_first``: the
    relevant tests first, the suite only on a bug they let through (``suite_run`` False when the
    tests caught it and the suite was not run)."""
    base = run / name
    tree = base / "tree"
    if tree.exists():
        subprocess.run(["rm", "-rf", str(tree)], check=True)
    snapshot(commit, tree)
    suite = suite_of(patch)
    applied = subprocess.run(["git", "apply", "--unidiff-zero", "-"], cwd=tree, input=patch,
                             capture_output=True, text=True)
    if applied.returncode != 0:  # the patched code changed since the patch was written
        stale: dict[str, Any] = {
            "bug": name, "suite": suite, "commit": commit, "exit": None, "seconds": 0.0, "caught": False,
            "cases": None, "failed": None, "line": changed_line(patch),
            "note": "patch does not apply: " + applied.stderr.strip().splitlines()[0]}
        with open(run / "results.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(stale) + "\n")
        return stale
    if tests_first:  # the default tests and the default suite together must catch a bug: cheap side first
        light, heavy = split_by_spark(tree, relevant_tests(tree, patch, suite))
        found = run_tests(tree, base, patch, suite, light)
        if found["tests_caught"]:
            by_tests: dict[str, Any] = {
                "bug": name, "suite": suite, "commit": commit, "exit": None, "seconds": 0.0, "caught": False,
                "cases": None, "failed": None, "line": changed_line(patch), "fail_fast": fail_fast,
                "suite_run": False, **found}
            with open(run / "results.jsonl", "a", encoding="utf-8") as out:
                out.write(json.dumps(by_tests) + "\n")
            return by_tests
    if fail_fast:  # the same default suite, stopping at its first failing batch
        argv = fail_fast_argv(suite)
        code, seconds = run_process(argv, tree, base / "suite.log", TIMEOUT_S, stdout=base / "suite.out")
        summary = fail_fast_summary(base / "suite.out")
    else:
        argv = [sys.executable, "-m", "streamproof.main", "conformance", "--suite", suite, "--json",
                "--shrink-budget", "0", "--save-dir", str(base / "failures")]
        code, seconds = run_process(argv, tree, base / "suite.log", TIMEOUT_S, stdout=base / "suite.json")
        summary = summary_of(base / "suite.json")
    record: dict[str, Any] = {
        "bug": name, "suite": suite, "commit": commit, "exit": code, "seconds": round(seconds, 1),
        "caught": code == 1, "cases": summary.get("cases"), "failed": summary.get("failed"),
        "line": changed_line(patch), "fail_fast": fail_fast}
    if code not in (0, 1):
        record["note"] = "timeout" if code is None else f"exit {code} (not a verdict)"
    if tests_first:
        record.update(found)
        if code != 1 and heavy:  # the tests that start Spark: last, as they cost the most
            later = run_tests(tree, base, patch, suite, heavy)
            record.update(later, tests_caught=later["tests_caught"], tests=light + heavy,
                          tests_seconds=round(found["tests_seconds"] + later["tests_seconds"], 1))
    elif with_tests and code != 1:
        record.update(run_tests(tree, base, patch, suite))
    with open(run / "results.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    return record


def relevant_tests(tree: Path, patch: str, suite: str) -> list[str]:
    """The relevant pytest files of a patch: the tests mirroring each patched module,
    :data:`MODULE_TESTS` of the patched modules, :data:`TESTS` of the suite."""
    mirrored = [t for f in patched_files(patch) for t in mirror_tests(tree, f)]
    extra = [t for f in patched_files(patch) for m, ts in MODULE_TESTS.items() if f.startswith(m) for t in ts]
    return [f for f in dict.fromkeys(mirrored + extra + TESTS[suite]) if (tree / f).exists()]


def run_tests(tree: Path, base: Path, patch: str, suite: str, files: list[str] | None = None) -> dict[str, Any]:
    """``files`` (default :func:`relevant_tests`) on the patched snapshot ``tree``, in the
    default run's selection (``-m 'not slow'``): ``tests_caught``, ``tests_seconds``."""
    files = relevant_tests(tree, patch, suite) if files is None else files
    if not files:
        return {"tests_caught": False, "tests_seconds": 0.0, "tests": []}
    tcode, tseconds = run_process([sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *files],
                                  tree, base / "tests.log", TIMEOUT_S)
    return {"tests_caught": tcode not in (0, None) and tcode != 5, "tests_seconds": round(tseconds, 1),
            "tests": files}


def check_tests_only(run: Path, commit: str, name: str, patch: str) -> dict[str, Any]:
    """``--tests-only``: snapshot, apply, run only the relevant tests (to ``RUN/tests.jsonl``,
    so the suite verdicts of ``results.jsonl`` stay as they are)."""
    base = run / name
    tree = base / "tree"
    if tree.exists():
        subprocess.run(["rm", "-rf", str(tree)], check=True)
    snapshot(commit, tree)
    applied = subprocess.run(["git", "apply", "--unidiff-zero", "-"], cwd=tree, input=patch,
                             capture_output=True, text=True)
    record: dict[str, Any] = {"bug": name, "commit": commit}
    if applied.returncode != 0:
        record["note"] = "patch does not apply"
    else:
        record.update(run_tests(tree, base, patch, suite_of(patch)))
    with open(run / "tests.jsonl", "a", encoding="utf-8") as out:
        out.write(json.dumps(record) + "\n")
    return record


def table(records: list[dict[str, Any]]) -> str:
    """Markdown table of the results."""
    rows = ["| bug | suite | caught | cases failed | seconds | commit |", "|---|---|---|---|---|---|"]
    for r in records:
        if r.get("suite_run") is False:
            caught = "not run"
        else:
            caught = "yes" if r["caught"] else ("no" + (f" ({r['note']})" if r.get("note") else ""))
        if "tests_caught" in r:
            caught += f"; tests: {'yes' if r['tests_caught'] else 'no'}"
        cases = f"{r['failed']} of {r['cases']}" if r.get("cases") is not None else str(r.get("failed"))
        mode = " (fail-fast)" if r.get("fail_fast") else ""
        rows.append(f"| {r['bug']} | {r['suite']} | {caught} | {cases}{mode} | {r['seconds']:.0f} | {r['commit'][:7]} |")
    total = sum(1 for r in records if r["caught"])
    rows.append(f"\n{total} of {len(records)} caught by the default suite")
    if any("tests_caught" in r for r in records):
        either = sum(1 for r in records if r["caught"] or r.get("tests_caught"))
        applied = sum(1 for r in records if not str(r.get("note", "")).startswith("patch does not apply"))
        rows.append(f"{either} of {applied} applied caught by the default suite or the default tests")
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--run", required=True, help="work directory (snapshots, logs, results.jsonl)")
    parser.add_argument("--commit", default="HEAD", help="commit to snapshot (default HEAD)")
    parser.add_argument("--only", nargs="*", default=[], help="patch name prefixes (default: all)")
    parser.add_argument("--jobs", type=int, default=1, help="checks at a time (default 1; this machine: <= 2)")
    parser.add_argument("--tests", action="store_true", help="also run the relevant pytest files on survivors")
    parser.add_argument("--tests-first", action="store_true",
                        help="run the relevant pytest files first and the suite only on bugs they miss "
                             "(the same caught/missed verdict as --tests, much faster when tests catch most)")
    parser.add_argument("--fail-fast", action="store_true",
                        help="stop each suite at its first failing batch (tools/mutation.py child-check)")
    parser.add_argument("--summary", action="store_true",
                        help="print the table of RUN/results.jsonl (latest run of each bug) and exit")
    parser.add_argument("--verify", action="store_true", help="check that the snapshot is what Spark runs")
    parser.add_argument("--tests-only", action="store_true",
                        help="run only the relevant pytest files on each patch (RUN/tests.jsonl), no suite")
    parser.add_argument("--set", default="", help="a set of patches: sub-directory of tools/independent_bugs "
                                                  "(default: the first set, the top directory)")
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so a running check's process group is killed
    run = Path(args.run).resolve()
    run.mkdir(parents=True, exist_ok=True)
    commit = subprocess.run(["git", "rev-parse", args.commit], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.strip()
    if args.summary:  # the latest record per bug in RUN/results.jsonl
        latest: dict[str, dict[str, Any]] = {}
        if (run / "results.jsonl").exists():
            for line in (run / "results.jsonl").read_text(encoding="utf-8").splitlines():
                record = json.loads(line)
                latest[record["bug"]] = record
        print(table([latest[name] for name in sorted(latest)]))
        return 0
    if args.verify:
        record = check(run, commit, "verify-every-output-wrong", VERIFY_PATCH, False)
        print(table([record]))
        return 0 if record["caught"] else 1
    folder = PATCHES / args.set if args.set else PATCHES
    if not folder.is_dir():
        parser.error(f"no patch set {args.set!r} ({folder} is not a directory)")
    patches = sorted(folder.glob("*.patch"))
    if args.only:  # in the order given (the likely survivors first, say)
        patches = [p for o in args.only for p in patches if p.name.startswith(o)]
    print(f"{len(patches)} bugs against {commit[:10]}", flush=True)

    def one(path: Path) -> dict[str, Any]:
        if args.tests_only:
            found = check_tests_only(run, commit, path.stem, path.read_text(encoding="utf-8"))
            print(f"{found['bug']}: tests caught={found.get('tests_caught')} in {found.get('tests_seconds')} s",
                  flush=True)
            return found
        record = check(run, commit, path.stem, path.read_text(encoding="utf-8"), args.tests, args.fail_fast,
                       args.tests_first)
        print(f"{record['bug']}: caught={record['caught']} failed={record['failed']} "
              f"in {record['seconds']:.0f} s", flush=True)
        return record

    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        records = list(pool.map(one, patches))
    if not args.tests_only:
        print(table(records))
    return 0


if __name__ == "__main__":
    sys.exit(main())
