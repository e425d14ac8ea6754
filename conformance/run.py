"""Running the selected suites with one configuration (what ``streamproof conformance`` does):
the one module that picks suites and engines, so the only one importing every family.

Suites: ``fries`` (:mod:`conformance.fries.suite`), ``dgs`` (:mod:`conformance.dgs.suite`),
``oplus`` (:mod:`conformance.oplus.suite`). The engine ``auto`` means Spark when spark_impl's
executor is importable, else the reference simulator (said plainly in the summary: the run then
checks the reference against the spec, not Spark).

Faults: the names come from the engine (``spark_impl.faults.FAULTS``, or the reference's
``naive``). An injected fault is only meaningful if a check that runs the faulty engine
actually ran; otherwise :func:`run_suites` refuses (InputError) instead of reporting a pass
that tested nothing.

``--engine spark-streaming`` (:func:`run_streaming_suites`) runs every suite through its live
Structured Streaming front end, judged by the same oracles as ``--engine spark``: Fries through
``spark_impl.reconfig.streaming.start_query`` (:func:`conformance.fries.suite.run_fries_streaming`),
DGS through ``spark_impl.dgs.streaming.start_dgs_query`` (:func:`conformance.dgs.suite.run_dgs_live`,
beside its reference check), O+ through ``spark_impl.oplus.streaming.start_oplus_query``
(:func:`conformance.oplus.suite.run_oplus_live`). Seeded faults go where ``--engine spark`` sends
them: the Fries executor's to the fries suite, the O+ executor's to the oplus suite (a fault with
no selected suite is bad input).
"""

from __future__ import annotations

from typing import Callable

from spec.errors import InputError

import spark_impl.faults as spark_faults

from conformance.core.protocols import Suite
from conformance.core.results import Progress, SuiteResult
from conformance.core.run_config import SUITES as SUITES, RunConfig as RunConfig
from conformance.dgs import suite as dgs_suite
from conformance.fries import suite as fries_suite
from conformance.fries.engines.catalogue import available_faults, engine_status
from conformance.oplus import suite as oplus_suite

SUITE_OF: dict[str, Suite] = {"fries": fries_suite, "dgs": dgs_suite, "oplus": oplus_suite}
"""Each suite's module, by name (every one a :class:`~conformance.core.protocols.Suite`)."""

#: Default number of cases per suite for ``--cases`` not given.
DEFAULT_CASES = {"fries": 200, "dgs": 100, "oplus": 100}


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
    faults_of = {"fries": fries_faults, "dgs": frozenset(), "oplus": oplus_faults}
    results: list[SuiteResult] = []
    for suite in config.suites:
        cases = config.cases if config.cases is not None else DEFAULT_CASES[suite]
        results.append(SUITE_OF[suite].run(config.for_suite(suite, cases, engine, faults_of[suite]), progress_for(suite)))
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

    return spark_faults.OPLUS_FAULTS


LIVE_CASES = {"fries": 40, "dgs": 100, "oplus": 100}
"""Cases per suite when ``--cases`` is not given. Fries: one live query per case (the front end
runs one job), about 8 s each even 4 at a time, so the batch suite's 200 would take half an
hour; 40 = the stepped section (8-10 cases, where every Fries fault is caught) plus about 30
random cases. DGS and O+ run a whole batch as one query: the batch suite's counts."""


def streaming_faults() -> dict[str, str]:
    """The seeded faults the live engines can inject (Fries and O+ executors)."""
    return dict(spark_faults.FAULTS)


def run_streaming_suites(config: RunConfig, progress_for: Callable[[str], Progress | None]) -> list[SuiteResult]:
    """Every selected suite on the live path (module docstring)."""
    known = streaming_faults()
    unknown = sorted(config.faults - set(known))
    if unknown:
        raise InputError(f"unknown fault {unknown[0]!r} (known: {', '.join(sorted(known))}; see --list-faults)",
                         "--inject-fault")
    oplus_faults = frozenset(config.faults & spark_faults.OPLUS_FAULTS)
    fries_faults = frozenset(config.faults - spark_faults.OPLUS_FAULTS)
    for faults, suite in ((fries_faults, "fries"), (oplus_faults, "oplus")):
        if faults and suite not in config.suites:
            raise InputError(f"fault {sorted(faults)[0]!r} is seeded in the executor the {suite} suite runs; "
                             f"select --suite {suite} or all", "--inject-fault")
    faults_of = {"fries": fries_faults, "dgs": frozenset(), "oplus": oplus_faults}
    results: list[SuiteResult] = []
    for suite in config.suites:
        cases = config.cases if config.cases is not None else LIVE_CASES[suite]
        request = config.for_suite(suite, cases, "spark-streaming", faults_of[suite])
        results.append(SUITE_OF[suite].run_live(request, progress_for(suite)))
    return results
