"""Branch coverage of the mutation scope (``tools/mutation.py coverage``): the three default
suites as ``prepare`` measured them, alone or together with the default pytest run - the
default suite and the default tests together are what must catch a slip, so both figures are
given. Measured in the driver and in Spark's Python workers
(:mod:`conformance.output.coverage`); the snapshot ``RUN/tree`` must hold no mutant while the
tests run."""

from __future__ import annotations

import shutil
from collections import defaultdict
from pathlib import Path
from typing import Callable

from conformance.output.coverage import figure_from, write_rc

from mutation_report import stratum
from mutation_source import in_scope

#: The default suites, cheapest first (the order tools/mutation.py runs them in).
CHECKS = ("dgs", "oplus", "fries")


def tests_coverage(run: Path, run_child: Callable[[Path, list[str], float], tuple[str, float, str]],
                   timeout_s: float) -> str:
    """Measure the default pytest run (``-m 'not slow'``, every test, in the snapshot) into
    ``RUN/cov-tests`` unless it is there already; one line saying how it went."""
    where = run / "cov-tests"
    if any(where.glob(".coverage.*")):
        return f"default tests: measured earlier ({where})"
    status, seconds, tail = run_child(run, ["child-tests", "--coverage-dir", str(where), "tests"], timeout_s)
    last = tail.strip().splitlines()[-1] if tail.strip() else ""
    return f"default tests under coverage: {status} in {seconds:.0f} s ({last})"


def combined_coverage(run: Path, with_tests: bool = False) -> str:
    """Branch coverage of the scope under the whole default run: the three suites' data
    (``prepare``'s ``RUN/cov-<suite>``, driver and Spark workers) combined, and with
    ``with_tests`` the default pytest run's (``RUN/cov-tests``, :func:`tests_coverage`);
    Markdown rows per stratum (:func:`stratum`) and the total."""
    where = run / "cov-all"
    shutil.rmtree(where, ignore_errors=True)
    rc = write_rc(where)
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
