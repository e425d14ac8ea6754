"""Branch coverage of ``spark_impl`` while the suite runs (``streamproof conformance --coverage``).

Measured with coverage.py in the driver (the executor's scheduling, commit and restart logic,
the Structured Streaming front end's ``foreachBatch`` callbacks) AND in Spark's Python worker
processes (the task code: operators, alignment, markers, state storage), which PySpark forks
from a daemon and kills without letting them exit; :mod:`conformance.output.coverage_daemon` is the
daemon that measures them (``spark.python.daemon.module``). The worker side only works when
the SparkSession is created after :func:`measuring` started (the daemon module is a launch-time
setting); :class:`CoverageFigure` says how many worker data files were collected, so "the
workers were not measured" is visible instead of silently low.

Usage::

    with measuring(Path("cov")) as box:
        ...run suites...
    figure = box.figure   # CoverageFigure, set on exit
"""

from __future__ import annotations

import json
import os
import tempfile
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterator

from spec.errors import InputError

from conformance.output.coverage_daemon import RC_VARIABLE

PACKAGE = "spark_impl"
DAEMON_CONF = "spark.python.daemon.module=conformance.output.coverage_daemon"


@dataclass(frozen=True)
class FileFigure:
    """One module's counts; ``missing_branches``: ``(from_line, to_line)`` arcs never taken
    (``to_line`` < 0: leaving the function)."""

    path: str
    statements: int
    covered_statements: int
    branches: int
    covered_branches: int
    missing_branches: tuple[tuple[int, int], ...] = ()

    @property
    def branch_percent(self) -> float:
        """Covered branches in percent (100 when the module has none)."""
        return 100.0 * self.covered_branches / self.branches if self.branches else 100.0


@dataclass(frozen=True)
class CoverageFigure:
    """Coverage of :data:`PACKAGE` over one run."""

    files: tuple[FileFigure, ...]
    worker_data_files: int
    data_dir: str

    @property
    def statements(self) -> int:
        """Statements of the package."""
        return sum(f.statements for f in self.files)

    @property
    def covered_statements(self) -> int:
        """Statements executed at least once."""
        return sum(f.covered_statements for f in self.files)

    @property
    def branches(self) -> int:
        """Branch arcs of the package."""
        return sum(f.branches for f in self.files)

    @property
    def covered_branches(self) -> int:
        """Branch arcs taken at least once."""
        return sum(f.covered_branches for f in self.files)

    @property
    def branch_percent(self) -> float:
        """Covered branch arcs in percent."""
        return 100.0 * self.covered_branches / self.branches if self.branches else 100.0

    @property
    def statement_percent(self) -> float:
        """Executed statements in percent."""
        return 100.0 * self.covered_statements / self.statements if self.statements else 100.0

    def to_json(self) -> dict[str, Any]:
        """The figure as a JSON object (per file: counts and the arcs never taken)."""
        return {
            "package": PACKAGE, "statements": self.statements, "covered_statements": self.covered_statements,
            "branches": self.branches, "covered_branches": self.covered_branches,
            "branch_percent": round(self.branch_percent, 1), "statement_percent": round(self.statement_percent, 1),
            "worker_data_files": self.worker_data_files, "data_dir": self.data_dir,
            "files": [{"path": f.path, "statements": f.statements, "covered_statements": f.covered_statements,
                       "branches": f.branches, "covered_branches": f.covered_branches,
                       "missing_branches": [list(arc) for arc in f.missing_branches]} for f in self.files],
        }


@dataclass
class Measurement:
    """Filled in when :func:`measuring` ends."""

    figure: CoverageFigure | None = None
    extra: dict[str, Any] = field(default_factory=dict)


def write_rc(directory: Path) -> Path:
    """Write the coverage.py configuration used by the driver and every worker."""
    directory.mkdir(parents=True, exist_ok=True)
    rc = directory / "coveragerc"
    rc.write_text("[run]\nbranch = True\nparallel = True\n"
                  f"source_pkgs = {PACKAGE}\ndata_file = {directory.resolve() / '.coverage'}\n"
                  "disable_warnings = no-data-collected, module-not-measured, module-not-imported\n", encoding="utf-8")
    return rc


def submit_args(current: str | None) -> str:
    """``PYSPARK_SUBMIT_ARGS`` with the measuring daemon selected (kept: the user's own args)."""
    args = (current or "").strip()
    if args.endswith("pyspark-shell"):
        args = args[: -len("pyspark-shell")].strip()
    return " ".join(part for part in (args, f"--conf {DAEMON_CONF}", "pyspark-shell") if part)


@contextmanager
def measuring(directory: Path | None = None) -> Iterator[Measurement]:
    """Measure :data:`PACKAGE` in this process and in Spark's Python workers started meanwhile.

    ``directory`` keeps the data files (default: a temporary directory). The environment
    variables it sets are restored afterwards."""
    try:
        import coverage
    except ImportError as error:  # a declared dependency, but say so plainly if it is missing
        raise InputError(f"coverage.py is not installed ({error}); pip install coverage", "--coverage") from error

    where = directory if directory is not None else Path(tempfile.mkdtemp(prefix="streamproof-coverage-"))
    rc = write_rc(where)
    saved = {name: os.environ.get(name) for name in (RC_VARIABLE, "PYSPARK_SUBMIT_ARGS")}
    os.environ[RC_VARIABLE] = str(rc.resolve())
    os.environ["PYSPARK_SUBMIT_ARGS"] = submit_args(saved["PYSPARK_SUBMIT_ARGS"])
    box = Measurement()
    cov = coverage.Coverage(config_file=str(rc), data_suffix="driver")
    cov.start()
    try:
        yield box
    finally:
        cov.stop()
        cov.save()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
        box.figure = figure_from(rc)


def figure_from(rc: Path) -> CoverageFigure:
    """Combine the data files next to ``rc`` and compute the figure."""
    import coverage

    directory = rc.parent
    workers = sum(1 for p in directory.glob(".coverage.*") if not p.name.endswith(".driver"))
    cov = coverage.Coverage(config_file=str(rc))
    cov.combine(keep=True)
    cov.save()
    out = directory / "coverage.json"
    cov.json_report(outfile=str(out), ignore_errors=True)
    data = json.loads(out.read_text(encoding="utf-8"))
    files = []
    for path, entry in sorted(data.get("files", {}).items()):
        summary = entry["summary"]
        files.append(FileFigure(
            _relative(path), int(summary["num_statements"]), int(summary["covered_lines"]),
            int(summary.get("num_branches", 0)), int(summary.get("covered_branches", 0)),
            tuple((int(a), int(b)) for a, b in entry.get("missing_branches", []))))
    return CoverageFigure(tuple(files), workers, str(directory))


def _relative(path: str) -> str:
    """``.../spark_impl/x.py`` -> ``spark_impl/x.py``."""
    parts = Path(path).parts
    return str(Path(*parts[parts.index(PACKAGE):])) if PACKAGE in parts else path
