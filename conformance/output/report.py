"""The ``--report DIR`` output: ``report.md`` (Markdown with inline SVG plots) and
``summary.json`` (the same data as ``--json``), written atomically.

Plots: cases per scenario feature (what the random cases exercised), failures per oracle, and
the distribution of reconfiguration delays. The shrunk failing cases are printed in full, with
the paths of their replay and regression files.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Sequence

from spec.jsonio import write_json_atomic, write_text_atomic

from conformance.output.coverage import CoverageFigure
from conformance.core.results import SuiteResult
from conformance.output.svg import bar_chart, histogram


def write_report(directory: Path, results: Sequence[SuiteResult], coverage: CoverageFigure | None = None) -> Path:
    """Write the report into ``directory``; return the path of ``report.md``. ``coverage``:
    the branch coverage of spark_impl measured during the run (``--coverage``), if any."""
    directory.mkdir(parents=True, exist_ok=True)
    write_json_atomic(directory / "summary.json", {"suites": [r.to_json() for r in results],
                                                  "coverage": coverage.to_json() if coverage else None})
    path = directory / "report.md"
    write_text_atomic(path, render(results, coverage))
    return path


def render_coverage(figure: CoverageFigure) -> list[str]:
    """The coverage section: totals, a bar per module, and the branch arcs never taken."""
    lines = ["## Coverage of spark_impl", "",
             f"Branches **{figure.covered_branches}/{figure.branches} ({figure.branch_percent:.1f}%)**, "
             f"statements {figure.covered_statements}/{figure.statements} ({figure.statement_percent:.1f}%), "
             f"measured with coverage.py in the driver and in Spark's Python workers "
             f"({figure.worker_data_files} worker data file(s)"
             + ("; NONE: the workers were not measured, the SparkSession was started before --coverage"
                if figure.worker_data_files == 0 else "") + ").", "",
             bar_chart("spark_impl: covered branches per module (%)",
                       [(f.path, round(f.branch_percent, 1)) for f in figure.files if f.branches]), "",
             "| module | statements | covered | branches | covered | branch % | arcs never taken (from->to; -1 = exit) |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for f in figure.files:
        arcs = ", ".join(f"{a}->{b}" for a, b in f.missing_branches[:24])
        more = f" (+{len(f.missing_branches) - 24})" if len(f.missing_branches) > 24 else ""
        lines.append(f"| {f.path} | {f.statements} | {f.covered_statements} | {f.branches} | {f.covered_branches} | "
                     f"{f.branch_percent:.0f} | {arcs}{more} |")
    return lines + [""]


def render(results: Sequence[SuiteResult], coverage: CoverageFigure | None = None) -> str:
    """The Markdown text of the report."""
    total = sum(r.cases for r in results)
    failed = sum(r.failed for r in results)
    lines = ["# streamproof conformance report", "",
             f"**{'PASS' if failed == 0 else 'FAIL'}**: {total} cases, {failed} failed.", "",
             "| suite | check | cases | failed | time (s) | cases/s | status |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- |"]
    for result in results:
        for check in result.checks:
            if check.status != "ran":
                lines.append(f"| {result.suite} | {check.name} | - | - | - | - | NOT RUN: {check.note} |")
                continue
            rate = f"{check.cases / check.elapsed_s:.2f}" if check.elapsed_s > 0 else "-"
            lines.append(f"| {result.suite} | {check.name} | {check.cases} | {check.failed} | "
                         f"{check.elapsed_s:.1f} | {rate} | {'FAIL' if check.failed else 'pass'} |")
    faults = sorted({f for r in results for f in r.faults})
    lines += ["", f"Seed {results[0].seed if results else 0}; injected faults: {', '.join(faults) or 'none'}.", ""]
    if coverage is not None:
        lines += render_coverage(coverage)
    for result in results:
        if not result.ran:
            continue
        lines += [f"## {result.suite}", ""]
        if result.seconds:
            lines += ["Seconds by part: " + ", ".join(f"{k} {v:.1f}" for k, v in sorted(result.seconds.items())) + ".", ""]
        features = sorted(result.features.items(), key=lambda kv: kv[0])
        lines += [bar_chart(f"{result.suite}: cases by feature", [(k, float(v)) for k, v in features]), ""]
        oracle_counts: Counter[str] = Counter()
        for check in result.checks:
            oracle_counts.update(check.oracle_failures)
        lines += [bar_chart(f"{result.suite}: failed cases per oracle",
                            [(k, float(v)) for k, v in sorted(oracle_counts.items())], colour="#e15759"), ""]
        if result.delays:
            mean = sum(result.delays) / len(result.delays)
            lines += [histogram(f"{result.suite}: reconfiguration delays", result.delays, unit=result.delay_unit), "",
                      f"{len(result.delays)} delays, mean {mean:.2f} {result.delay_unit}, "
                      f"max {max(result.delays):.2f} {result.delay_unit}.", ""]
        for failure in result.failures:
            lines += [f"### Failure: {failure.check}, case {failure.case_index}", "",
                      f"Oracles: {', '.join(failure.oracles)}. Shrunk from size {failure.original_size} to "
                      f"{failure.shrunk_size} in {failure.shrink_steps} steps.", "", "```", failure.explanation, "```",
                      "", "Shrunk case:", "", "```json", json.dumps(failure.shrunk_case, indent=1), "```", ""]
            if failure.replay_file:
                lines += [f"Replay: `streamproof conformance --replay {failure.replay_file}`; "
                          f"regression test: `{failure.pytest_file}`.", ""]
    return "\n".join(lines) + "\n"
