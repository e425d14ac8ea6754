"""The child modes of tools/mutation.py: one default suite, or pytest files, run inside
the snapshot (``PYTHONPATH=RUN/tree``, cwd the snapshot) on the mutant written there.

``python tools/mutation.py child-check --suite dgs|oplus|fries`` (also used by
tools/independent_bugs.py) exits 1 at the first failing batch, 0 if the suite passes.
"""

from __future__ import annotations

import json
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from conformance.output.coverage import measuring as measure


def no_isolation() -> None:
    """Fail fast on engine crashes too: :class:`conformance.core.crashes.Guard` re-runs a crashing
    batch in halves down to the case that crashes (for the report; up to 2n engine calls,
    minutes per mutant that crashes every O+ scenario of one operator). Here a batch that
    crashes counts as a crash of each of its cases: the unmutated suite has none, so any crash
    kills the mutant either way."""
    from conformance.core import crashes  # noqa: PLC0415 - the suite under test, loaded in the child only (the parent imports this module too)

    def isolate(self: Any, items: list[Any]) -> list[Any]:
        if not items:
            return []
        outcome = self._call(items)
        return [outcome] * len(items) if isinstance(outcome, crashes.Crash) else list(outcome)

    setattr(crashes.Guard, "_isolate", isolate)


def stop_at_first_failure() -> None:
    """Fail fast in the DGS and O+ suites (the Fries suite has ``FriesConfig.fail_fast``): the
    first failing DGS case, or the first shrink an O+ check starts (it only starts one on a
    failure; shrinking re-runs cases, minutes per mutant under load), ends the child with exit
    1. The unmutated suites reach neither (``prepare`` checks that they pass)."""
    from conformance.dgs import oracles as dgs_oracles  # noqa: PLC0415 - the suite under test, loaded in the child only (the parent imports this module too)
    from conformance.dgs import suite as dgs_suite  # noqa: PLC0415 - the suite under test, loaded in the child only (the parent imports this module too)
    from conformance.oplus import suite as oplus_suite  # noqa: PLC0415 - the suite under test, loaded in the child only (the parent imports this module too)

    def stop(where: str) -> Any:
        def stopped(*args: Any, **kwargs: Any) -> Any:
            print(f"fail-fast: {where} (a failure was found)", flush=True)
            raise SystemExit(1)
        return stopped

    judge = getattr(dgs_oracles, "verdicts", None)
    if judge is not None:
        def judged(case: Any, observed: Any) -> Any:
            verdicts = judge(case, observed)
            failed = [(v.name, v.explanation) for v in verdicts if not v.held]
            if failed:
                print(f"fail-fast: dgs case failed {failed}"[:2000], flush=True)
                raise SystemExit(1)
            return verdicts
        setattr(dgs_oracles, "verdicts", judged)
    for module, name in ((dgs_suite, "shrink_and_save"), (oplus_suite, "shrink_spark"), (oplus_suite, "shrink_reference")):
        if hasattr(module, name):
            setattr(module, name, stop(f"{module.__name__}.{name}"))


def child_check(suite: str, coverage_out: str | None, cases: int | None = None) -> int:
    """Child mode: the default suite ``suite`` (seed 0, default cases unless ``cases``), stopping
    at the first failing batch; exit 1 on any failure. With ``coverage_out``: write executed
    lines."""
    from conformance.run import DEFAULT_CASES, RunConfig, run_suites  # noqa: PLC0415 - the suite under test, loaded in the child only (the parent imports this module too)

    measuring: Any = nullcontext(None)
    if not coverage_out:  # prepare's coverage runs keep the suite as it is (nothing fails there)
        no_isolation()
        stop_at_first_failure()
    if coverage_out:
        measuring = measure(Path(coverage_out).parent / f"cov-{suite}")
    with measuring as box:
        if suite == "fries":
            from conformance.fries.config import FriesConfig  # noqa: PLC0415 - the suite under test, loaded in the child only (the parent imports this module too)
            from conformance.fries.suite import run_fries_suite  # noqa: PLC0415 - the suite under test, loaded in the child only (the parent imports this module too)

            results = [run_fries_suite(FriesConfig(cases=cases or DEFAULT_CASES["fries"], shrink_evaluations=0,
                                                   fail_fast=True))]
        else:
            results = run_suites(RunConfig(suites=(suite,), shrink_budget=0, save_dir=None, cases=cases), lambda _: None)
    if coverage_out and box is not None:
        import coverage

        cov = coverage.Coverage(config_file=str(Path(box.figure.data_dir) / "coveragerc"))
        cov.load()
        data = cov.get_data()
        lines = {}
        for name in data.measured_files():
            rel = name[name.index("spark_impl"):] if "spark_impl" in name else name
            lines[rel] = sorted(data.lines(name) or [])
        Path(coverage_out).write_text(json.dumps(lines), encoding="utf-8")
    failed = sum(r.failed for r in results)
    ran = all(r.ran for r in results)
    print(f"suite {suite}: {sum(r.cases for r in results)} cases, {failed} failed, ran={ran}")
    return 1 if failed or not ran else 0


def child_tests(files: list[str], coverage_dir: str | None = None) -> int:
    """Child mode: pytest on ``files``, stopping at the first failure; with ``coverage_dir``
    every test runs (the default selection) while ``spark_impl`` is measured there, driver and
    Spark workers (the session the tests share starts inside the measurement)."""
    import pytest  # noqa: PLC0415 - the child that runs the tests loads pytest, the parent does not

    if coverage_dir:
        with measure(Path(coverage_dir)):
            return int(pytest.main(["-q", "--tb=line", "-p", "no:cacheprovider", *files]))
    return int(pytest.main(["-x", "-q", "--tb=line", "-p", "no:cacheprovider", *files]))

