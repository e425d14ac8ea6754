"""The Fries engines under test, by name: ``spark`` (:mod:`.batch`), ``reference``
(:mod:`.reference`) and ``spark-streaming`` (:mod:`.live`), the :class:`FriesEngine` protocol
they share, and which of them can run here.

:func:`engine_status` says whether an engine can run here, and why not, so the CLI reports
"spark engine not available" instead of pretending.
"""

from __future__ import annotations

import importlib
from typing import Any, Protocol, Sequence

from spec.errors import InputError
from spec.fries.scenario import Scenario

from conformance.core.protocols import Engine
from conformance.fries.engines.batch import SparkEngine
from conformance.fries.engines.live import StreamingEngine
from conformance.fries.engines.reference import ReferenceEngine
from conformance.fries.outcome import RunOutcome

ENGINES = ("spark", "reference", "spark-streaming")


class FriesEngine(Engine[Scenario, RunOutcome], Protocol):
    """Runs scenarios; one outcome per scenario, in order (an
    :class:`~conformance.core.protocols.Engine`: calling it is :meth:`run`)."""

    name: str

    def run(self, scenarios: Sequence[Scenario]) -> list[RunOutcome]:
        """Run every scenario of the batch."""
        ...


def engine_status(name: str) -> str | None:
    """None when engine ``name`` can run here, else the reason it cannot."""
    module = {"spark": "spark_impl.reconfig", "spark-streaming": "spark_impl.reconfig",
              "reference": "reference.fries.simulator"}.get(name)
    if module is None:
        raise InputError(f"unknown engine {name!r} (expected one of {list(ENGINES)})", "--engine")
    try:
        importlib.import_module(module)
    except ImportError as error:
        return f"{name} engine not available ({module}: {error})"
    return None


def available_faults(name: str) -> dict[str, str]:
    """The seeded faults of engine ``name``: fault name -> what it breaks."""
    if name == "reference":
        return {"naive": "naive FCM scheduling where fries is asked (the reference's naive scheduler)"}
    if engine_status("spark") is not None:
        return {}
    faults_module = importlib.import_module("spark_impl.faults")
    return dict(getattr(faults_module, "FAULTS"))


def make_engine(name: str, *, scheduler: str = "fries", faults: frozenset[str] = frozenset(),
                spark: Any = None, checkpoint_dir: str | None = None, path: str = "planned") -> FriesEngine:
    """The engine called ``name`` with the given scheduler and injected faults (InputError on
    an unknown fault). ``path``: the Spark executor's entry path
    (:mod:`conformance.fries.engines.paths`; the reference simulator has one path only; for
    ``spark-streaming``, the live mode of :class:`~conformance.fries.engines.live.StreamingEngine`, which
    ``--replay`` of a saved live case passes as ``"fries:live"`` or ``"fries:live-stepped"``)."""
    known = available_faults(name)
    for fault in sorted(faults):
        if fault not in known:
            raise InputError(
                f"unknown fault {fault!r} for the {name} engine (known: {', '.join(sorted(known)) or 'none'})",
                "--inject-fault")
    if name == "reference":
        return ReferenceEngine("naive" if "naive" in faults else "epoch" if path == "epoch" else scheduler)
    if name == "spark":
        return SparkEngine(scheduler, faults, spark=spark, checkpoint_dir=checkpoint_dir, path=path)
    if name == "spark-streaming":
        return StreamingEngine(scheduler, faults, spark=spark, mode=path)
    raise InputError(f"unknown engine {name!r} (expected one of {list(ENGINES)})", "--engine")


