"""Branch coverage of the mutation scope (``tools/mutation.py coverage``): the three default
suites as ``prepare`` measured them, alone or together with the default pytest run - the
default suite and the default tests together are what must catch a slip, so both figures are
given. Measured in the driver and in Spark's Python workers
(:mod:`conformance.output.coverage`). The tests run in a snapshot of their own
(``RUN/tests-tree``, the commit of ``RUN/tree``), so a campaign may mutate ``RUN/tree``
meanwhile; the figure itself is computed when no mutant is applied (it reads the sources)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tarfile
import time
from collections import defaultdict
from io import BytesIO
from pathlib import Path

from conformance.output.coverage import figure_from, write_rc

from mutation_report import stratum
from mutation_source import in_scope

#: The default suites, cheapest first (the order tools/mutation.py runs them in).
CHECKS = ("dgs", "oplus", "fries")


def tests_coverage(run: Path, script: Path, timeout_s: float, paths: tuple[str, ...] = ("tests",)) -> str:
    """Measure the default pytest run (``-m 'not slow'``) of ``paths`` into ``RUN/cov-tests``
    unless it is there already, in ``RUN/tests-tree`` (``git archive`` of the campaign's
    commit) through ``script``'s ``child-tests --coverage-dir``; one line saying how it went.
    The whole default run under coverage's tracer is slow (the property tests of ``spec/`` and
    the suite's own tests take hours traced on two cores); ``tests/spark_impl`` holds the
    promise tests of the executor."""
    where = run / "cov-tests"
    if any(where.glob(".coverage.*")):
        return f"default tests: measured earlier ({where})"
    commit = json.loads((run / "mutants.json").read_text(encoding="utf-8"))["commit"]
    tree = run / "tests-tree"
    shutil.rmtree(tree, ignore_errors=True)
    archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=script.parent.parent, check=True,
                             capture_output=True).stdout
    tree.mkdir(parents=True)
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(tree, filter="data")
    if not (tree / "tests").is_dir() or not (tree / "spark_impl").is_dir():
        raise SystemExit(f"the snapshot of {commit[:10]} has no tests/ or spark_impl/")
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONDONTWRITEBYTECODE="1")
    env.pop("PYSPARK_SUBMIT_ARGS", None)
    start = time.monotonic()
    with open(run / "tests-coverage.log", "w", encoding="utf-8") as log:
        try:
            done = subprocess.run([sys.executable, str(script), "child-tests", "--coverage-dir", str(where.resolve()),
                                   *paths], cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT,
                                  timeout=timeout_s)
            status = "pass" if done.returncode == 0 else f"exit {done.returncode}"
        except subprocess.TimeoutExpired:
            status = "timeout"
    tail = (run / "tests-coverage.log").read_text(encoding="utf-8", errors="replace").strip().splitlines()
    return f"default tests under coverage: {status} in {time.monotonic() - start:.0f} s ({tail[-1] if tail else ''})"


def _same_sources(rc: Path, run: Path) -> None:
    """Map the tests' snapshot onto the campaign's (one file, one set of arcs)."""
    with open(rc, "a", encoding="utf-8") as out:
        out.write(f"\n[paths]\nspark_impl =\n    {(run / 'tree' / 'spark_impl').resolve()}\n"
                  f"    {(run / 'tests-tree' / 'spark_impl').resolve()}\n")
    # never the working tree's sources: a figure of another spark_impl would be added, not merged


def combined_coverage(run: Path, with_tests: bool = False) -> str:
    """Branch coverage of the scope under the whole default run: the three suites' data
    (``prepare``'s ``RUN/cov-<suite>``, driver and Spark workers) combined, and with
    ``with_tests`` the default tests' (``RUN/cov-tests``, :func:`tests_coverage`);
    Markdown rows per stratum (:func:`stratum`) and the total."""
    where = run / "cov-all"
    shutil.rmtree(where, ignore_errors=True)
    rc = write_rc(where)
    _same_sources(rc, run)
    for suite in (*CHECKS, *(("tests",) if with_tests else ())):
        for data in (run / f"cov-{suite}").glob(".coverage.*"):
            shutil.copy(data, where / f".coverage.{suite}.{data.name.removeprefix('.coverage.')}")
    figure = figure_from(rc)
    rows: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0, 0])
    for f in figure.files:
        if in_scope(f.path):
            for key in (stratum(f.path), "scope"):
                counts = rows[key]
                counts[0] += f.covered_branches
                counts[1] += f.branches
                counts[2] += f.covered_statements
                counts[3] += f.statements
    lines = [f"{'suites and tests' if with_tests else 'suites'}: worker data files: {figure.worker_data_files}", "",
             "| part | branches | statements |", "| --- | ---: | ---: |"]
    for key in sorted(rows, key=lambda k: (k == "scope", k)):
        b, bt, st, stt = rows[key]
        lines.append(f"| {key} | {b} / {bt} ({100 * b / bt if bt else 100:.1f} %) | "
                     f"{st} / {stt} ({100 * st / stt if stt else 100:.1f} %) |")
    return "\n".join(lines)
