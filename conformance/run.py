"""Running the selected suites with one configuration (what ``streamproof conformance`` does).

Suites: ``fries`` (:mod:`conformance.fries.suite`), ``dgs`` (:mod:`conformance.dgs.suite`),
``oplus`` (:mod:`conformance.oplus.suite`). The engine ``auto`` means Spark when spark_impl's
executor is importable, else the reference simulator (said plainly in the summary: the run then
checks the reference against the spec, not Spark).

Faults: the names come from the engine (``spark_impl.faults.FAULTS``, or the reference's
``naive``). An injected fault is only meaningful if a check that runs the faulty engine
actually ran; otherwise :func:`run_suites` refuses (InputError) instead of reporting a pass
that tested nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from spec.errors import InputError

from conformance.fries.engines.catalogue import available_faults, engine_status
from conformance.core.shrink import DEFAULT_BUDGET
from conformance.core.results import Progress, SuiteResult

SUITES = ("fries", "dgs", "oplus")

#: Default number of cases per suite for ``--cases`` not given.
DEFAULT_CASES = {"fries": 200, "dgs": 100, "oplus": 100}


@dataclass(frozen=True)
class RunConfig:
    """One ``streamproof conformance`` run."""

    suites: tuple[str, ...] = SUITES
    cases: int | None = None
    seed: int = 0
    engine: str = "auto"
    faults: frozenset[str] = frozenset()
    batch_size: int = 200
    save_dir: str | None = None
    shrink_budget: int = DEFAULT_BUDGET
    scheduler: str = "fries"
    spark: Any = field(default=None, compare=False)


def shared_session(spark: Any = None) -> Callable[[], Any]:
    """A getter of ``spark``, or of the shared conformance SparkSession created on first use
    (so a suite that never reaches Spark never starts it)."""
    holder: dict[str, Any] = {"spark": spark}

    def session() -> Any:
        if holder["spark"] is None:
            from spark_impl.session import get_or_create_session

            holder["spark"] = get_or_create_session(app_name="streamproof-conformance")
        return holder["spark"]
    return session


def resolve_engine(engine: str) -> str:
    """``auto`` -> ``spark`` if available, else ``reference``; others validated."""
    if engine == "auto":
        return "spark" if engine_status("spark") is None else "reference"
    engine_status(engine)  # raises InputError on an unknown name
    return engine


def parse_suites(name: str) -> tuple[str, ...]:
    """``all`` or one suite name (InputError otherwise)."""
    if name == "all":
        return SUITES
    if name not in SUITES:
        raise InputError(f"unknown suite {name!r} (expected one of {', '.join(SUITES)}, all)", "--suite")
    return (name,)


def fault_catalogue(engine: str) -> dict[str, str]:
    """Fault name -> description, for the resolved engine."""
    return available_faults(resolve_engine(engine))


def run_suites(config: RunConfig, progress_for: Callable[[str], Progress | None]) -> list[SuiteResult]:
    """Run every selected suite; ``progress_for(suite)`` gives that suite's progress callback."""
    engine = resolve_engine(config.engine)
    known = available_faults(engine)
    unknown = sorted(config.faults - set(known))
    if unknown:
        raise InputError(f"unknown fault {unknown[0]!r} (known: {', '.join(sorted(known)) or 'none'};"
                         " see --list-faults)", "--inject-fault")
    oplus_faults = frozenset(config.faults & _oplus_faults(engine))
    fries_faults = config.faults - oplus_faults
    if fries_faults and "fries" not in config.suites:
        raise InputError(
            f"fault {sorted(fries_faults)[0]!r} is seeded in the Fries executor; the "
            f"{'/'.join(config.suites)} suite has no engine that can inject it yet", "--inject-fault")
    if oplus_faults and "oplus" not in config.suites:
        raise InputError(f"fault {sorted(oplus_faults)[0]!r} is seeded in the Spark O+ executor: "
                         "it needs the oplus suite", "--inject-fault")
    results: list[SuiteResult] = []
    for suite in config.suites:
        cases = config.cases if config.cases is not None else DEFAULT_CASES[suite]
        progress = progress_for(suite)
        if suite == "fries":
            from conformance.fries.suite import FriesConfig, run_fries_suite

            results.append(run_fries_suite(
                FriesConfig(cases=cases, seed=config.seed, engine=engine, faults=fries_faults,
                            batch_size=config.batch_size, save_dir=config.save_dir,
                            shrink_evaluations=config.shrink_budget, scheduler=config.scheduler),
                progress=progress, spark=config.spark))
        elif suite == "dgs":
            from conformance.dgs.suite import run_dgs_suite

            results.append(run_dgs_suite(cases=cases, seed=config.seed, progress=progress, save_dir=config.save_dir,
                                         engine=engine, spark=config.spark, shrink_budget=config.shrink_budget))
        else:
            from conformance.oplus.suite import run_oplus_suite

            results.append(run_oplus_suite(cases=cases, seed=config.seed, progress=progress,
                                           save_dir=config.save_dir, engine=engine,
                                           faults=oplus_faults, spark=config.spark,
                                           shrink_budget=config.shrink_budget))
    if fries_faults and not any(r.suite == "fries" and r.ran for r in results):
        fries = next(r for r in results if r.suite == "fries")
        raise InputError(f"cannot inject faults: {fries.checks[0].note}", "--inject-fault")
    spark_oplus = [c for r in results if r.suite == "oplus" for c in r.checks if c.name == "spark vs sequential"]
    if oplus_faults and not any(c.status == "ran" for c in spark_oplus):
        note = spark_oplus[0].note if spark_oplus else "no spark check"
        raise InputError(f"cannot inject faults: {note}", "--inject-fault")
    return results


def _oplus_faults(engine: str) -> frozenset[str]:
    """The faults seeded in spark_impl's O+ executor (none unless the engine is spark)."""
    if engine != "spark":
        return frozenset()
    from spark_impl.faults import OPLUS_FAULTS

    return OPLUS_FAULTS
