"""The public entry point for scenarios: :func:`run_scenarios` and :class:`RunResult`.

A scenario (:mod:`spec.fries.scenario`) becomes a :class:`~spark_impl.reconfig.model.Job`
whose operators are :class:`~spark_impl.reconfig.model.CatalogueLogic` (calling the spec's
``emit``), whose source is :func:`~spec.fries.reorder.reordered_ingestion` (``ingestion_order``
unless ``timing.reorder_bound`` > 0), and whose planned
requests are the scenario's reconfigurations. All scenarios of one call run together in the
same Spark jobs (scenario index = job index, part of every record's key).
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from typing import Any, Sequence

from spec.fries.reorder import reordered_ingestion
from spec.fries.scenario import Scenario
from spec.fries.schedule import Schedule
from spark_impl.faults import check_faults
from spark_impl.reconfig.driver import SCHEDULERS, Executor
from spark_impl.reconfig.model import (
    CatalogueLogic, CatalogueTransform, Job, ListSource, OperatorLogic, PlannedRequest, Request, Timing, Update,
)
from spark_impl.reconfig.layout import load_request
from spark_impl.reconfig.results import FileCache, outputs_of, ran_batches, schedule_of, senders_of, states_of
from spec.errors import InputError


RECONFIG_FAULTS = frozenset({"naive", "missing-alignment", "double-transform", "duplicate-after-restart"})
"""The faults of :data:`spark_impl.faults.FAULTS` seeded in this executor."""


@dataclass(frozen=True)
class RunResult:
    """What one scenario's run produced.

    ``outputs``: the committed sink records (sink, txn, key, value) as a list, so duplicates
    are visible; ``schedule``: per-object logs (Fries Def. 4.7) in the spec's format;
    ``states``: final state of every (operator, key); ``delays_ms``: reconfiguration delay of
    each completed request in order (request -> last reconfigured object switched);
    ``rejected``: messages of rejected requests; ``senders``: parallel to the schedule's logs,
    the object that sent each data operation's tuple (None for updates; the source operator
    for source tuples), the channels :mod:`spec.fries.consistency` checks for FIFO;
    ``requests``: every request the run made, planned or submitted (``submit``), in the order
    of their transactions R1, R2, ... - what a judge of the run needs to know which functions
    each transaction installed (None when a file of one was already removed by retention)."""

    scenario_index: int
    outputs: list[tuple[str, str, Any, Any]]
    schedule: Schedule
    states: dict[tuple[str, Any], Any]
    delays_ms: tuple[float, ...]
    rejected: tuple[str, ...]
    senders: dict[str, tuple[str | None, ...]] = field(default_factory=dict)
    requests: tuple[Request, ...] | None = ()


def scenario_job(scenario: Scenario, *, batch_size: int = 4, trace: bool = True) -> Job:
    """The executor job of a scenario (see the module docstring)."""
    flow = scenario.dataflow
    logic: dict[str, OperatorLogic] = {name: CatalogueLogic(fn, flow.children(name))
                                       for name, fn in scenario.functions.items()}
    planned = tuple(
        PlannedRequest(r.at, Request({name: Update(CatalogueLogic(u.function, flow.children(name)),
                                                   CatalogueTransform(u.state))
                                      for name, u in r.updates.items()}))
        for r in scenario.reconfigurations)
    source = ListSource(tuple((src, t.txn, t.key, t.value) for t in reordered_ingestion(scenario)
                              for src in [_source_of(scenario, t.txn)]))
    t = scenario.timing
    timing = Timing(seed=t.seed, operator_cost=dict(t.operator_cost), stragglers=dict(t.stragglers),
                    fcm_delay=t.fcm_delay, restarts=t.restarts, batch_size=batch_size)
    return Job(flow, logic, source, dict(scenario.parallelism), planned, timing, trace)


def _source_of(scenario: Scenario, txn: str) -> str:
    return txn.rsplit(":", 1)[0]


def run_scenarios(spark: object, scenarios: Sequence[Scenario], scheduler: str, *,
                  faults: frozenset[str] = frozenset(), checkpoint_dir: str | None = None,
                  batch_size: int = 4) -> list[RunResult]:
    """Run every scenario under ``scheduler`` ("fries", "epoch" or "naive") in as few Spark
    jobs as possible; ``faults`` injects seeded bugs (:data:`spark_impl.faults.FAULTS`).
    ``checkpoint_dir`` (default: a temporary directory, removed afterwards) must be storage
    every executor sees."""
    if scheduler not in SCHEDULERS:
        raise InputError(f"unknown scheduler {scheduler!r} (expected one of {', '.join(SCHEDULERS)})")
    check_faults(faults)
    for fault in sorted(faults):
        if fault not in RECONFIG_FAULTS:
            raise InputError(f"fault {fault!r} is not seeded in the reconfiguration executor "
                             f"(its faults: {', '.join(sorted(RECONFIG_FAULTS))})")
    if not scenarios:
        return []
    own = checkpoint_dir is None
    directory = tempfile.mkdtemp(prefix="streamproof-run-") if own else str(checkpoint_dir)
    try:
        jobs = [scenario_job(sc, batch_size=batch_size) for sc in scenarios]
        executor = Executor(spark, jobs, scheduler, directory, faults=faults)
        executor.run()
        return collect_results(executor)
    finally:
        if own:
            shutil.rmtree(directory, ignore_errors=True)


def _requests_made(executor: Executor, s: int, made: int) -> tuple[Request, ...] | None:
    """Requests R1..R``made`` of job ``s`` as the driver saved them (None if one is gone)."""
    try:
        return tuple(load_request(executor.directory, s, j) for j in range(1, made + 1))
    except FileNotFoundError:
        return None


def collect_results(executor: Executor) -> list[RunResult]:
    """Read every job's committed history into :class:`RunResult` s."""
    cache = FileCache(executor.directory, executor.depth, executor.partitions)
    ran = ran_batches(executor.directory)
    results = []
    for s, st in enumerate(executor.state):
        prog = st.committed
        history = prog.history
        shown = ran if "duplicate-after-restart" in executor.faults else history
        results.append(RunResult(
            s,
            outputs_of(cache, s, shown),
            schedule_of(cache, s, st.job, history),
            states_of(cache, s, history[-1] if history else None),
            tuple(prog.delays[j] for j in sorted(prog.delays)),
            tuple(st.live.rejected),  # answers already given, also after the last commit
            senders_of(cache, s, st.job, history),
            _requests_made(executor, s, prog.made),
        ))
    return results
