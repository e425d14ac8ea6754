"""Mutation testing of ``spark_impl/`` against the default conformance suite.

Tool: cosmic-ray (its operators and its mutation engine; docs/conformance.md says why not
mutmut). The mutant is written into a *snapshot* of the repository (``git archive HEAD`` into
``RUN/tree``, never the shared working tree), and every check runs in a fresh process with
``PYTHONPATH=RUN/tree`` and the snapshot as working directory, so the driver AND Spark's
Python workers (forked by a daemon that the fresh JVM starts) import the mutated module.

Steps (each resumable; results are appended to ``RUN/results.jsonl``):

1. ``prepare``: snapshot, enumerate every cosmic-ray mutant of the scope, and measure which
   lines each check executes (``coverage`` per check, Spark workers included:
   :mod:`conformance.output.coverage`).
2. ``run``: a seeded random sample of the mutants (``--sample N``; the whole population takes
   days on this machine, so the score is an estimate and the summary says so). A mutant on a
   line no check executes is recorded as ``not covered`` (it survives; no run needed). Else
   the checks whose coverage contains the line run one at a time (the module's own suite
   first, then the cheapest), each with
   ``--fail-fast`` semantics (stop at the first failing batch, no shrinking): the first one
   that exits non-zero kills the mutant. Checks are the default suites
   (``streamproof conformance --suite dgs|oplus|fries`` at their default case counts, seed 0);
   ``--with-tests`` also runs the relevant pytest files on mutants the suite left alive;
   ``--tests-first`` runs the module's Spark-free default tests first (:func:`test_files`,
   also on lines no suite executes), then the suites, then the default tests that start Spark
   (``tools/cost_order.py``): the default suite and the default tests together are what must
   catch a mutant; the order only makes a catch cheaper.
3. ``summary``: the score table (per module and per cosmic-ray operator) in Markdown.

Usage::

    python tools/mutation.py prepare --run /tmp/mutation-run
    python tools/mutation.py run --run /tmp/mutation-run --sample 60 --seed 0 [--with-tests]
    python tools/mutation.py summary --run /tmp/mutation-run
    python tools/mutation.py refresh --run /tmp/mutation-run    # the suite of HEAD, same mutants
    python tools/mutation.py one --run /tmp/mutation-run --id 'spark_impl/x.py:core/AddNot:3'
    python tools/mutation.py run --run /tmp/mut4 --sample 110 --seed 4 --stratify
    python tools/mutation.py run --run /tmp/mut5 --sample 60 --seed 5 --stratify --tests-first
    python tools/mutation.py one --run /tmp/mut4 --id ID --tests tests/test_x.py::test_y  # a new check only
    python tools/mutation.py coverage --run /tmp/mut4   # branch coverage of the three suites combined
    python tools/mutation.py coverage --run /tmp/mut4 --with-tests   # ... and with the default pytest run
    python tools/mutation.py carry --from /tmp/mut9 --run /tmp/mut10   # mut9's survivors on a newer snapshot

``--stratify`` draws per part of the scope (:func:`stratified_sample`); ``summary`` then also
prints the score weighted by part size and a 95 % (Wilson) interval, the suite's kills and the
kills of checks written for survivors (``one --tests``) apart.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tarfile
import time
from io import BytesIO
from pathlib import Path
from typing import Any, Iterable


sys.path.insert(0, str(Path(__file__).resolve().parent))  # the helpers next to this script

from cost_order import mirror_tests, split_by_spark  # noqa: E402
from mutation_coverage import CHECKS, combined_coverage, tests_coverage  # noqa: E402
from mutation_child import child_check, child_tests, no_isolation, stop_at_first_failure  # noqa: E402,F401
from mutation_carry import counterpart, diff_line  # noqa: E402
from mutation_report import INVALID, argued_equivalent, latest, stratum, summary, weighted_line, wilson  # noqa: E402,F401
from mutation_sample import allocate, sample, stratified_sample  # noqa: E402,F401
from mutation_source import SCOPE, apply, enumerate_mutants, in_annotation, in_scope, statement_lines  # noqa: E402,F401

ROOT = Path(__file__).resolve().parent.parent
#: The Spark-free tests of one package take 5-15 s unmutated on a loaded 2-core machine; a
#: mutant that keeps them running 20 times that long (an endless loop) is a liveness failure.
LIGHT_TESTS_TIMEOUT_S = 300.0
#: pytest files run by ``--with-tests``, by package of the mutated module.
TESTS = {"spark_impl/dgs": ["tests/spark_impl/dgs", "tests/spark_impl/dgs/test_spark_dgs_executor.py"],
         "spark_impl/oplus": ["tests/spark_impl/oplus", "tests/spark_impl/oplus/test_spark_oplus_executor.py"],
         "spark_impl": ["tests/spark_impl/reconfig", "tests/spark_impl/reconfig/test_spark_reconfig.py", "tests/spark_impl/reconfig/test_spark_mcs.py", "tests/spark_impl/reconfig/test_spark_reorder.py",
                        "tests/spark_impl/reconfig/test_spark_streaming_query.py", "tests/conformance/test_conformance_spark.py"]}
CHECK_TIMEOUT_S = 900.0  # the suite's own watchdog limit per batch; fries alone took up to 466 s on a loaded 2-core machine
#: Per check (``--timeout`` overrides all): about 4x the unmutated suite under coverage at load
#: 20-30 (a prepare measured dgs 96 s, oplus 44 s, fries 333 s). A mutant that makes a suite
#: run that much longer is a liveness failure, counted ``killed (timeout)``.
CHECK_TIMEOUTS = {"dgs": 420.0, "oplus": 300.0, "fries": 900.0}


# --- snapshot and environment --------------------------------------------------------------

def snapshot(run: Path) -> str:
    """``git archive HEAD`` into ``run/tree``; returns the commit."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.strip()
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT, check=True,
                             capture_output=True).stdout
    tree = run / "tree"
    tree.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    return commit


def tree_env(run: Path) -> dict[str, str]:
    """The environment of every check: the snapshot first on the import path, no bytecode
    files (a mutant and its original may have the same size and mtime second)."""
    env = dict(os.environ)
    env["PYTHONPATH"] = str(run / "tree")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    return env


# --- mutants ---------------------------------------------------------------------------------

# --- checks ------------------------------------------------------------------------------------

def run_child(run: Path, args: list[str], timeout_s: float) -> tuple[str, float, str]:
    """Run this script's child mode in the snapshot: ('pass'|'fail'|'timeout', seconds, tail)."""
    start = time.monotonic()
    log = run / "child.log"
    with open(log, "w", encoding="utf-8") as out:
        proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), *args], cwd=run / "tree",
                                env=tree_env(run), stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        try:
            code = proc.wait(timeout=timeout_s)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)  # the child's own process group (JVM and workers)
            proc.wait()
            code = None
        except BaseException:
            os.killpg(proc.pid, signal.SIGKILL)  # stopped (SIGTERM): leave no check behind
            raise
    tail = log.read_text(encoding="utf-8", errors="replace")[-1500:]
    status = "timeout" if code is None else "pass" if code == 0 else "fail"
    return status, time.monotonic() - start, tail


# --- campaign ------------------------------------------------------------------------------------

def prepare(run: Path, measure: bool = True, coverage_only: bool = False) -> None:
    """Step 1 (module docstring). Without ``measure`` no coverage is measured: every mutant
    then runs its module's own suite (none is ``not covered``; slower per mutant, but no
    coverage runs first - for a small sample on a loaded machine). ``coverage_only``: no new
    snapshot, only the coverage of the snapshot's suite as it is now (after ``refresh``: the
    checks a mutant runs then follow the refreshed suite); refused while a mutant is applied."""
    run.mkdir(parents=True, exist_ok=True)
    if coverage_only:
        changed = mutated_files(run)
        if changed:
            raise SystemExit(f"the snapshot's spark_impl differs from its commit ({', '.join(changed)}): "
                             "a campaign is running or was killed; stop it (or wait for `touch RUN/pause`) first")
    else:
        commit = snapshot(run)
        mutants = enumerate_mutants(run / "tree")
        (run / "mutants.json").write_text(json.dumps({"commit": commit, "mutants": mutants}), encoding="utf-8")
        print(f"snapshot of {commit[:10]}: {len(mutants)} mutants in scope")
    if not measure:
        (run / "coverage.json").unlink(missing_ok=True)
        return

    covered: dict[str, dict[str, list[int]]] = {}
    for suite in CHECKS:
        shutil.rmtree(run / f"cov-{suite}", ignore_errors=True)  # no data of an earlier suite
        out = run / f"coverage-{suite}.json"
        status, seconds, tail = run_child(run, ["child-check", "--suite", suite, "--coverage-out", str(out)], 1800)
        print(f"coverage of {suite}: {status} in {seconds:.0f} s")
        if status != "pass":
            raise SystemExit(f"the unmutated {suite} check does not pass ({status}); fix that first:\n{tail}")
        covered[suite] = json.loads(out.read_text(encoding="utf-8"))
    (run / "coverage.json").write_text(json.dumps(covered), encoding="utf-8")


def mutated_files(run: Path) -> list[str]:
    """The files of the snapshot's ``spark_impl/`` that differ from its commit (a mutant
    applied now, or left behind by a killed campaign)."""
    commit = json.loads((run / "mutants.json").read_text(encoding="utf-8"))["commit"]
    archive = subprocess.run(["git", "archive", "--format=tar", commit, "spark_impl"], cwd=ROOT, check=True,
                             capture_output=True).stdout
    changed = []
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        for member in tar.getmembers():
            handle = tar.extractfile(member) if member.isfile() else None
            here = run / "tree" / member.name
            if handle is not None and (not here.exists() or here.read_bytes() != handle.read()):
                changed.append(member.name)
    return changed


def refresh(run: Path, paths: Iterable[str] = ()) -> str:
    """Replace everything but ``spark_impl/`` in the snapshot by HEAD's version (the suite and
    tests improved since ``prepare``; the mutants, and so their ids, stay those of the
    snapshot's ``spark_impl``); ``paths``: only these files or folders (when the rest of HEAD's
    suite already needs a newer executor). Returns HEAD's commit, recorded with every later
    result (with the paths, if any, in ``RUN/suite-commit.txt``).

    Only sound while HEAD's suite still runs on the snapshot's ``spark_impl`` (check that the
    unmutated checks pass first): a suite that needs a newer executor API kills every mutant.
    Seen once: HEAD's generator drew the new order-sensitive ``fold`` functions
    that the snapshot's executor did not implement yet."""
    commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, check=True, capture_output=True,
                            text=True).stdout.strip()
    parts = list(paths) or [p for p in ("spec", "reference", "proofs", "conformance", "tests") if (ROOT / p).exists()]
    if any(p == "spark_impl" or p.startswith("spark_impl/") for p in parts):
        raise SystemExit("refresh never replaces spark_impl/: the mutants are the snapshot's")
    archive = subprocess.run(["git", "archive", "--format=tar", commit, *parts], cwd=ROOT, check=True,
                             capture_output=True).stdout
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(run / "tree", filter="data")
    (run / "suite-commit.txt").write_text(commit + "\n" + "".join(f"{p}\n" for p in paths), encoding="utf-8")
    return commit


def _suite_of(suite_commit: Path) -> str:
    """The suite a result was judged by: ``snapshot``, or the refreshed commit (and paths)."""
    if not suite_commit.exists():
        return "snapshot"
    commit, *paths = suite_commit.read_text().split()
    return commit[:10] + (f" ({', '.join(paths)})" if paths else "")


def covering_checks(run: Path, mutant: dict[str, Any], covered: dict[str, dict[str, list[int]]],
                    cache: dict[str, dict[int, int]]) -> list[str]:
    """The checks that execute the statement holding the mutant's line."""
    module = mutant["module"]
    if module not in cache:
        cache[module] = statement_lines((run / "tree" / module).read_text(encoding="utf-8"))
    line = cache[module].get(mutant["line"], mutant["line"])
    own = own_check(module)
    hits = [c for c in CHECKS if line in set(covered[c].get(module, ()))]
    return sorted(hits, key=lambda c: (c != own, CHECKS.index(c)))  # the module's own suite first


def run_one(run: Path, mutant: dict[str, Any], checks: list[str], with_tests: bool,
            cases: int | None = None, tests: list[str] | None = None, tests_first: bool = False) -> dict[str, Any]:
    """Apply one mutant, run its checks (first kill wins; ``cases``: per suite, default the
    suite's), restore the file. ``tests``: run only these pytest node ids (a check written
    for a survivor; the record says ``tests_only`` and the summary keeps it apart from the
    suite's verdict). ``tests_first``: the default tests of the module (:func:`test_files`)
    run before the suites, also on a line no suite executes - the default suite and the default
    tests together are what must catch a mutant; a mutant they catch is ``killed by tests``
    without a suite run."""
    tree = run / "tree"
    suite_commit = run / "suite-commit.txt"
    record: dict[str, Any] = dict(mutant, checks=checks, started=time.strftime("%H:%M:%S", time.gmtime()), cases=cases,
                                  suite=_suite_of(suite_commit), tests_first=tests_first)
    if tests:
        record.update(checks=[], tests_only=tests)
        checks, with_tests = [], True
    if mutant.get("annotation"):
        return dict(record, outcome="equivalent (annotation)", seconds=0.0)
    if not checks and not tests and not tests_first:
        return dict(record, outcome="not covered", seconds=0.0)
    applied = apply(tree, mutant)
    if applied is None:
        return dict(record, outcome="no mutation", seconds=0.0)
    original, mutated = applied
    record["diff"] = diff_line(original, mutated)
    try:
        compile(mutated, mutant["module"], "exec")
    except SyntaxError as error:  # e.g. the ``*`` of a keyword-only signature replaced by ``/``
        (tree / mutant["module"]).write_text(original, encoding="utf-8")
        return dict(record, outcome=INVALID, seconds=0.0, tail=f"SyntaxError: {error.msg}")
    total = 0.0
    try:
        heavy: list[str] = []
        if tests_first:  # Spark-free tests, then the suites, then the tests that start Spark
            light, heavy = split_by_spark(tree, test_files(tree, mutant["module"]))
            if light:
                status, seconds, tail = run_child(run, ["child-tests", *light], LIGHT_TESTS_TIMEOUT_S)
                total += seconds
                if status != "pass":
                    return dict(record, outcome="killed by tests" if status == "fail" else "killed (timeout)",
                                killed_by=" ".join(light), seconds=round(total, 1), tail=tail[-600:])
            with_tests = bool(heavy)
        for check in checks:
            status, seconds, tail = run_child(run, ["child-check", "--suite", check,
                                                    *(["--cases", str(cases)] if cases else [])],
                                              CHECK_TIMEOUTS.get(check, CHECK_TIMEOUT_S))
            total += seconds
            if status != "pass":
                return dict(record, outcome="killed" if status == "fail" else "killed (timeout)", killed_by=check,
                            seconds=round(total, 1), tail=tail[-600:])
        if with_tests:
            files = heavy or tests or next(v for k, v in TESTS.items() if mutant["module"].startswith(k))
            status, seconds, tail = run_child(run, ["child-tests", *files], CHECK_TIMEOUT_S)
            total += seconds
            if status != "pass":
                return dict(record, outcome="killed by tests", killed_by=" ".join(files), seconds=round(total, 1),
                            tail=tail[-600:])
        return dict(record, outcome="survived" if checks or tests else "not covered", seconds=round(total, 1))
    finally:
        (tree / mutant["module"]).write_text(original, encoding="utf-8")


def test_files(tree: Path, module: str) -> list[str]:
    """The default tests of ``module``: the test files mirroring it (``spark_impl/dgs/x.py`` ->
    ``tests/spark_impl/dgs/test_*.py``, Spark-free promise tests sorting before the
    ``test_spark_*`` files), then :data:`TESTS` of its package."""
    mirrored = mirror_tests(tree, module)
    named = [str(q.relative_to(tree)) if (tree / f).is_dir() else f
             for f in next(v for k, v in TESTS.items() if module.startswith(k))
             for q in (sorted((tree / f).glob("test_*.py")) if (tree / f).is_dir() else [tree / f])]
    return [f for f in dict.fromkeys(mirrored + named) if (tree / f).is_file()]


def own_check(module: str) -> str:
    """The suite of a module's package (dgs, oplus; fries for the rest)."""
    return {"spark_impl/dgs": "dgs", "spark_impl/oplus": "oplus"}.get(str(Path(module).parent), "fries")


def campaign(run: Path, n: int, seed: int, with_tests: bool, ids: Iterable[str] = (), force: bool = False,
             only: Iterable[str] = (), cases: int | None = None, stratify: bool = False,
             tests: list[str] | None = None, tests_first: bool = False) -> None:
    """Step 2 (module docstring); skips mutants already in results.jsonl, except those named
    in ``ids`` (run again: the summary keeps each mutant's last result). ``only``: sample among
    the mutants of modules under these prefixes; ``cases``: per suite (default the suite's);
    ``stratify``: :func:`stratified_sample` instead of a uniform one; ``tests``: run only
    these pytest node ids (:func:`run_one`)."""
    catalogue = json.loads((run / "mutants.json").read_text(encoding="utf-8"))["mutants"]
    prefixes = tuple(only)
    if prefixes:
        catalogue = [m for m in catalogue if str(m["module"]).startswith(prefixes)]
    measured = run / "coverage.json"
    covered = json.loads(measured.read_text(encoding="utf-8")) if measured.exists() else None
    wanted = list(ids)
    draw = stratified_sample if stratify else sample
    chosen = [m for m in catalogue if m["id"] in wanted] if wanted else draw(catalogue, n, seed)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))  # so the mutated file is restored
    results = run / "results.jsonl"
    done = {json.loads(line)["id"] for line in results.read_text().splitlines()} if results.exists() else set()
    cache: dict[str, dict[int, int]] = {}
    for number, mutant in enumerate(chosen, 1):
        if mutant["id"] in done and not wanted:
            continue
        while (run / "pause").exists():  # ``touch RUN/pause``: the machine is free between mutants
            time.sleep(5)
        checks = covering_checks(run, mutant, covered, cache) if covered is not None else [own_check(mutant["module"])]
        if force and not checks:  # the refreshed suite may reach what prepare's suite did not
            checks = [own_check(mutant["module"])]
        record = run_one(run, mutant, checks, with_tests, cases, tests, tests_first)
        with open(results, "a", encoding="utf-8") as out:
            out.write(json.dumps(record) + "\n")
        print(f"[{number}/{len(chosen)}] {record['outcome']:<17} {record.get('seconds', 0):>6.0f} s  {mutant['id']}  "
              f"{record.get('diff', '')}", flush=True)


def source_at(run: Path, module: str) -> str:
    """``module``'s source at the commit of ``run``'s snapshot (from git: the snapshot's tree may
    hold a mutant right now)."""
    commit = json.loads((run / "mutants.json").read_text(encoding="utf-8"))["commit"]
    return subprocess.run(["git", "show", f"{commit}:{module}"], cwd=ROOT, check=True, capture_output=True,
                          text=True).stdout


def carry(old: Path, run: Path) -> None:
    """Judge the survivors of campaign ``old`` (survived or not covered, not argued equivalent)
    on ``run``, a fresh snapshot of the final code (:mod:`mutation_carry`): each counterpart's
    record goes to ``run``'s results, and a copy under the old id (``carried``: the new
    snapshot and id) to ``old``'s, so ``summary --run OLD`` scores the old sample with the
    final suite. A survivor without a counterpart (its line changed) is reported and stays."""
    catalogue = json.loads((run / "mutants.json").read_text(encoding="utf-8"))
    measured = run / "coverage.json"
    covered = json.loads(measured.read_text(encoding="utf-8")) if measured.exists() else None
    argued = argued_equivalent(old)
    left = [r for r in latest(old / "results.jsonl")
            if r["outcome"] in ("survived", "not covered") and r["id"] not in argued]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    cache: dict[str, dict[int, int]] = {}
    for number, record in enumerate(left, 1):
        while (run / "pause").exists():
            time.sleep(5)
        mutant = {k: record[k] for k in ("id", "module", "operator", "occurrence", "line", "annotation")}
        new_path = run / "tree" / mutant["module"]
        twin = counterpart(mutant, source_at(old, mutant["module"]), new_path.read_text(encoding="utf-8")
                           if new_path.exists() else None, catalogue["mutants"])
        if twin is None:
            print(f"[{number}/{len(left)}] no counterpart (its line changed)  {mutant['id']}", flush=True)
            continue
        checks = covering_checks(run, twin, covered, cache) if covered is not None else []
        checks = checks or [own_check(twin["module"])]  # the final suite may reach what it did not
        result = run_one(run, twin, checks, False)
        with open(run / "results.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(result) + "\n")
        moved = dict(result, **mutant, carried={"snapshot": catalogue["commit"][:10], "id": twin["id"]})
        with open(old / "results.jsonl", "a", encoding="utf-8") as out:
            out.write(json.dumps(moved) + "\n")
        print(f"[{number}/{len(left)}] {result['outcome']:<17} {result.get('seconds', 0):>6.0f} s  {mutant['id']}"
              f" (as {twin['id']} of {catalogue['commit'][:10]})  {result.get('diff', '')}", flush=True)


def main(argv: list[str] | None = None) -> int:
    """Command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="mode", required=True)
    for mode in ("prepare", "refresh", "run", "summary", "one", "coverage", "carry"):
        p = sub.add_parser(mode)
        p.add_argument("--run", type=Path, default=Path("/tmp/mutation-run"))
        if mode == "carry":
            p.add_argument("--from", dest="old", type=Path, required=True,
                           help="the earlier campaign whose survivors are judged on --run's snapshot")
        if mode == "refresh":
            p.add_argument("--path", action="append", default=[],
                           help="refresh only this file or folder of HEAD (repeatable; default: spec, reference, "
                                "proofs, conformance, tests)")
        if mode == "prepare":
            p.add_argument("--no-coverage", action="store_true",
                           help="measure no coverage: every mutant runs its module's own suite")
            p.add_argument("--coverage-only", action="store_true",
                           help="no new snapshot: measure the coverage of the snapshot's (refreshed) suite again")
        if mode == "coverage":
            p.add_argument("--with-tests", action="store_true",
                           help="also the default pytest run's coverage (measured once into RUN/cov-tests, "
                                "driver and Spark workers) combined with the suites'")
            p.add_argument("--tests-path", action="append", default=[],
                           help="with --with-tests: the test folders or files measured (default: tests)")
        if mode == "run":
            p.add_argument("--sample", type=int, default=60)
            p.add_argument("--seed", type=int, default=0)
            p.add_argument("--only", action="append", default=[],
                           help="sample among the mutants of modules under this prefix (repeatable)")
            p.add_argument("--stratify", action="store_true",
                           help="stratified by part of the scope (reconfig, dgs, oplus, dgs-live, oplus-live, keys, "
                                "lru, sink, faults), proportional, >= 2 each, annotations not drawn")
        if mode in ("run", "one"):
            p.add_argument("--with-tests", action="store_true")
            p.add_argument("--tests-first", action="store_true",
                           help="run the module's default tests first (also where no suite reaches), the suites "
                                "only on a mutant they let through")
            p.add_argument("--cases", type=int, help="cases per suite (default: the suite's default)")
            p.add_argument("--timeout", type=float,
                           help="seconds per check before it is killed and counts as `killed (timeout)` "
                                "(default: CHECK_TIMEOUTS per suite)")
        if mode == "one":
            p.add_argument("--id", action="append", required=True)
            p.add_argument("--tests", action="append",
                           help="run only this pytest node id on the mutant, no suite (repeatable)")
            p.add_argument("--force", action="store_true",
                           help="run the module's own suite on a mutant prepare's coverage did not reach")
    c = sub.add_parser("child-check")
    c.add_argument("--suite", choices=CHECKS, required=True)
    c.add_argument("--coverage-out")
    c.add_argument("--cases", type=int)
    t = sub.add_parser("child-tests")
    t.add_argument("files", nargs="+")
    t.add_argument("--coverage-dir", help="measure spark_impl into this directory; run every test (no -x)")
    args = parser.parse_args(argv)
    if args.mode == "child-check":
        return child_check(args.suite, args.coverage_out, args.cases)
    if args.mode == "child-tests":
        return child_tests(args.files, args.coverage_dir)
    if args.mode in ("run", "one") and args.timeout:
        globals()["CHECK_TIMEOUT_S"] = args.timeout
        CHECK_TIMEOUTS.clear()
    if args.mode == "prepare":
        prepare(args.run, measure=not args.no_coverage, coverage_only=args.coverage_only)
    elif args.mode == "refresh":
        print(f"suite and tests of the snapshot are now those of {refresh(args.run, args.path)[:10]}")
    elif args.mode == "carry":
        carry(args.old, args.run)
    elif args.mode == "coverage":
        if args.with_tests:
            args.tests_path = args.tests_path or ["tests"]
            print(tests_coverage(args.run, Path(__file__).resolve(), CHECK_TIMEOUT_S * 4, tuple(args.tests_path)))
        print(combined_coverage(args.run, with_tests=args.with_tests))
    elif args.mode == "run":
        campaign(args.run, args.sample, args.seed, args.with_tests, only=args.only, cases=args.cases,
                 stratify=args.stratify, tests_first=args.tests_first)
    elif args.mode == "one":
        campaign(args.run, 0, 0, args.with_tests, ids=args.id, force=args.force, cases=args.cases, tests=args.tests,
                 tests_first=args.tests_first)
    else:
        print(summary(args.run))
    return 0


if __name__ == "__main__":
    sys.exit(main())
