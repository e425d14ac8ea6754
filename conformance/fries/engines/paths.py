"""Every way into spark_impl's reconfiguration executor, for the Fries suite.

``run_scenarios`` (planned requests, a list source, the executor's own ``run`` loop) is only
one of the executor's entry paths. Branches that only the others reach (user ``submit`` and
the rollback of a failing state transformation, ``Executor(resume=True)``, growing directory
and generated sources, unbounded jobs, the Structured Streaming front end) were never run by
the suite. Each *path* here runs a batch of ordinary Fries scenarios through one of them and
returns spark_impl ``RunResult`` s, judged by the same oracles as every other case:

=============  ===============================================================================
``planned``    ``run_scenarios`` (the default path)
``epoch``      ``run_scenarios`` with the epoch scheduler
``submit``     planned requests removed; the driver loop calls ``Executor.submit`` once a job
               has ingested ``at`` tuples (ingestion does not pause: the request lands later)
``rollback``   ``submit``, but first a request whose state transformation raises inside a Spark
               task (never on the driver, so validation passes): the job must roll back to its
               last commit and reject it; the scenario's own requests follow. The failing
               request's rejection is checked here and then removed from the result
``resume``     two micro-batches by one ``Executor``, the rest by ``Executor(resume=True)`` (its
               source read by a stage of its own, ``fuse_source=False``) on
               the same checkpoint directory (a driver restart)
``directory``  the source is a ``DirectorySource``: one JSON-lines file lands before each step
               (a growing stream); keys are nested JSON arrays ``["k", [k, null], i]``
               (:mod:`conformance.fries.engines.sink`, family ``json``)
``generated``  the source is a ``GeneratedSource`` (tuples computed from their index)
``unbounded``  ``Job(unbounded=True)``: stepped until every tuple is in and every request is
               done, then once more to commit (no end-of-input flush, so no blocking operators)
``streaming``  the Structured Streaming front end (``spark_impl.reconfig.streaming``): a
               file-source query, requests ``submit`` ted mid-stream; every other case crashes
               its driver half-way (between a batch's task writes and its commit) and starts
               a new query on the same checkpoint
``stepped``    ``Executor.step`` driven by the harness, which releases each request's control
               messages head by head, :data:`~conformance.fries.engines.stepped.GAP` batches apart
               (:mod:`conformance.fries.engines.stepped`: alignment without timing luck)
``sink``       keys of other types, a ``CallbackSink`` writing Parquet, ``Retention(1)``, a driver
               crash after a sink write and ``Executor(resume=True)``; outputs read back from
               the table (:mod:`conformance.fries.engines.sink`)
``objstore``   ``sink``, but the checkpoint and the table on pyarrow's ``file://`` filesystem (the
               executor's no-rename commit protocol, as on S3) and an ``ObjectStoreSink``
=============  ===============================================================================

:func:`applicable` says which scenarios a path can run as they are; :func:`prepare` removes
what a path cannot honour (``restarts`` for the submit paths - a user request is not re-made
after a crash; source reordering where the source itself fixes the order).
"""

from __future__ import annotations

import json
import os
import time
from dataclasses import dataclass, replace
from typing import Any, Sequence

from spec.fries.dataflow import OperatorKind
from spec.fries.scenario import Scenario, ingestion_order

from conformance.fries.engines.live_query import run_streaming
from conformance.fries.engines.sink import decoded, encode, keyed_job, run_sink_path, worthy
from conformance.fries.engines.stepped import CommitWatch, run_stepped
from conformance.fries.outcome import PathFailure
from spark_impl.reconfig import (
    Request, Update, Executor, collect_results, run_scenarios, DirectorySource, GeneratedSource, scenario_job,
)

PATHS = ("planned", "epoch", "submit", "rollback", "resume", "directory", "generated", "unbounded", "streaming",
         "stepped", "sink", "objstore")

#: The text a planned failure raises with (how its rejection is recognised).
FAILURE_MARK = "streamproof-conformance: state transformation failing inside a Spark task"

_MAX_STEPS = 2000


def _sources(scenario: Scenario) -> list[str]:
    flow = scenario.dataflow
    return [n for n in flow.names if flow.kind(n) is OperatorKind.SOURCE]


def _no_blocking(scenario: Scenario) -> bool:
    flow = scenario.dataflow
    return not any(flow.kind(n) is OperatorKind.BLOCKING for n in flow.names)


def failing_target(scenario: Scenario) -> str | None:
    """The operator the ``rollback`` path reconfigures with a failing transformation: the only
    child of a source that feeds only it (so it has state after the first batch)."""
    flow = scenario.dataflow
    for source in _sources(scenario):
        children = flow.children(source)
        if len(children) == 1 and len(scenario.sources[source]) >= 2:
            return children[0]
    return None


def applicable(path: str, scenario: Scenario) -> bool:
    """Can ``path`` run ``scenario`` (after :func:`prepare`)?"""
    if path not in PATHS:
        raise ValueError(f"unknown path {path!r}")
    single = len(_sources(scenario)) == 1
    if path == "rollback":
        return failing_target(scenario) is not None
    if path in ("directory", "generated"):
        return single
    if path == "unbounded":
        return _no_blocking(scenario)
    if path == "streaming":
        return single and _no_blocking(scenario)
    if path in ("sink", "objstore"):
        return worthy(scenario)
    return True


def prepare(path: str, scenario: Scenario) -> Scenario:
    """``scenario`` without the timing hooks ``path`` cannot honour (module docstring)."""
    timing = scenario.timing
    if path in ("submit", "rollback", "streaming"):
        timing = replace(timing, restarts=())
    if path in ("directory", "generated", "streaming"):
        timing = replace(timing, reorder_bound=0)
    if path in ("sink", "objstore"):
        # 5 and 3 workers, alternately: a negative int routed by |k| mod p lands elsewhere at both
        # (keys 2 and 4 shifted by -60), a bool hashed instead of taken as its int at 5 (at 3,
        # True's stable_hash happens to route like 1)
        inner = [n for n in scenario.dataflow.names if scenario.dataflow.kind(n) is not OperatorKind.SOURCE]
        return replace(scenario, timing=timing, parallelism={n: (5, 3)[i % 2] for i, n in enumerate(inner)})
    return replace(scenario, timing=timing)


class FailingTransform:
    """A state transformation that raises inside a Spark task and is the identity elsewhere
    (the driver's dry run passes, the switch in the task fails)."""

    def __call__(self, state: Any) -> Any:
        from pyspark import TaskContext

        if TaskContext.get() is not None:
            raise RuntimeError(FAILURE_MARK)
        return state


class RaisingTransform:
    """A state transformation that always raises (rejected by the driver's dry run)."""

    def __call__(self, state: Any) -> Any:
        raise ValueError("streamproof-conformance: a transformation the driver's dry run must reject")


def bad_requests(job: Any, scenario: Scenario) -> list[Any]:
    """Requests ``Executor.submit`` must reject at once: none updated, an unknown operator, a
    source, logic without ``process``, a transformation that is not callable, and (when the
    scenario has a :func:`failing_target`, whose committed state the driver's dry run sees)
    one that raises on the driver."""
    target = next(iter(job.logic))
    logic = job.logic[target]
    bad = [Request({}), Request({"no-such-operator": Update(logic, RaisingTransform())}),
           Request({_sources(scenario)[0]: Update(logic, RaisingTransform())}),
           Request({target: Update(object(), RaisingTransform())}),  # type: ignore[arg-type]
           Request({target: Update(logic, 5)})]  # type: ignore[arg-type]
    stateful = failing_target(scenario)  # committed state after the first batch: the dry run sees it
    if stateful is not None:
        bad.append(Request({stateful: Update(job.logic[stateful], RaisingTransform())}))
    return bad


@dataclass(frozen=True)
class Replay:
    """``GeneratedSource``'s function: tuple ``i`` of a fixed list (picklable)."""

    tuples: tuple[tuple[int, Any], ...]

    def __call__(self, index: int) -> tuple[int, Any]:
        return self.tuples[index]


def run_path(spark: Any, path: str, scenarios: Sequence[Scenario], scheduler: str, *,
             faults: frozenset[str], checkpoint_dir: str) -> list[Any]:
    """Run ``scenarios`` through ``path``; one result (``RunResult`` or :class:`PathFailure`)
    per scenario, each with its ``scenario_index``."""
    if path in ("planned", "epoch"):
        return list(run_scenarios(spark, list(scenarios), "epoch" if path == "epoch" else scheduler,
                                  faults=faults, checkpoint_dir=checkpoint_dir))
    if path == "stepped":
        return run_stepped(spark, scenarios, scheduler, faults=faults, checkpoint_dir=checkpoint_dir)
    if path in ("sink", "objstore"):
        return run_sink_path(spark, scenarios, scheduler, faults=faults, checkpoint_dir=checkpoint_dir,
                             object_store=path == "objstore")
    if path == "streaming":
        # every other case crashes its driver half-way, after a batch's task writes and before
        # its commit: Structured Streaming replays the batch it had indexed, the executor resumes
        return [run_streaming(spark, s, i, scheduler, faults=faults, checkpoint_dir=os.path.join(checkpoint_dir, f"q{i}"),
                              crash_at=_half(s) if i % 2 else None)
                for i, s in enumerate(scenarios)]
    jobs = [_job(path, s, i, checkpoint_dir) for i, s in enumerate(scenarios)]
    if path == "resume":
        first = Executor(spark, jobs, scheduler, checkpoint_dir, faults=faults)
        for _ in range(2):
            if not first.done():
                first.step()
        # the resumed driver reads the source in a stage of its own (unfused): the default
        # run's other paths all fuse it (few partitions), so the unfused plan ran nowhere
        executor = Executor(spark, jobs, scheduler, checkpoint_dir, faults=faults, resume=True, fuse_source=False)
        executor.run()
        return list(collect_results(executor))
    executor = Executor(spark, [_unplanned(j) if path in ("submit", "rollback") else j for j in jobs], scheduler,
                        checkpoint_dir, faults=faults)
    if path in ("submit", "rollback"):
        return _drive_submits(executor, jobs, scenarios, rollback=path == "rollback")
    if path == "directory":
        _drive_directory(executor, scenarios, checkpoint_dir)
        return [decoded(result) for result in collect_results(executor)]
    if path == "unbounded":
        _drive_unbounded(executor)
    else:
        executor.run()
    return list(collect_results(executor))


def _half(scenario: Scenario) -> int | None:
    """Half of ``scenario``'s source tuples (None below 2: nothing to restart between)."""
    total = sum(len(t) for t in scenario.sources.values())
    return total // 2 if total >= 2 else None


def _job(path: str, scenario: Scenario, index: int, directory: str) -> Any:
    job = scenario_job(scenario)
    if path == "directory":  # keys as nested JSON arrays: tuples once read (spark_impl.keys.key_from_json)

        job = keyed_job(scenario, "json")
        inbox = os.path.join(directory, f"inbox{index}")
        os.makedirs(inbox, exist_ok=True)
        return replace(job, source=DirectorySource(_sources(scenario)[0], inbox))
    if path == "generated":
        tuples = tuple((t.key, t.value) for t in ingestion_order(scenario))
        return replace(job, source=GeneratedSource(_sources(scenario)[0], len(tuples), Replay(tuples)))
    if path == "unbounded":
        return replace(job, unbounded=True)
    return job


def _unplanned(job: Any) -> Any:
    return replace(job, planned=())


def _drive_submits(executor: Any, jobs: Sequence[Any], scenarios: Sequence[Scenario], *, rollback: bool) -> list[Any]:
    """Submit each job's requests once it ingested ``at`` tuples (rollback: a failing request
    first, after the first batch); check the failing ones were rejected, and that no job was
    committed while one of its (user) requests was in progress (Fries §7.3, checked after
    every batch). Along the way, every
    request of :func:`bad_requests` (once the job has committed state), a second request while
    one is in progress, and one after the end of input must be rejected by ``submit`` at once;
    their messages are then removed from the result (they name no scenario request)."""
    queues = {s: list(job.planned) for s, job in enumerate(jobs)}
    failing: dict[int, Any] = {}
    if rollback:
        for s, (job, scenario) in enumerate(zip(jobs, scenarios)):
            target = failing_target(scenario)
            if target is not None:
                failing[s] = Request({target: Update(job.logic[target], FailingTransform())})
    failed_made: set[int] = set()
    provoked: dict[int, list[str]] = {s: [] for s in range(len(jobs))}
    accepted: dict[int, list[str]] = {s: [] for s in range(len(jobs))}
    pending_bad = {s: bad_requests(job, scenario) for s, (job, scenario) in enumerate(zip(jobs, scenarios))}
    broken: dict[int, str] = {}  # a commit during a user's request, or a changed committed view (stepped.CommitWatch)
    commits = CommitWatch()

    def must_reject(s: int, request: Any, what: str) -> None:
        answer = executor.submit(s, request)
        (provoked if answer is not None else accepted)[s].append(answer if answer is not None else what)

    for _ in range(_MAX_STEPS):
        if executor.done():
            break
        for s, st in enumerate(executor.state):
            if st.live.phase != "stream" or st.live.active is not None or st.queued is not None:
                continue
            if pending_bad[s] and st.committed.history:
                for request in pending_bad.pop(s):
                    must_reject(s, request, "an invalid request")
                pending_bad[s] = []
            if s in failing and s not in failed_made:
                if st.committed.history:  # the target has committed state: its transformation runs
                    executor.submit(s, failing[s])
                    failed_made.add(s)
                continue
            if queues[s] and st.live.offset >= min(queues[s][0].at, st.job.source.count()):
                request = queues[s].pop(0).request
                executor.submit(s, request)
                must_reject(s, request, "a second request while one was in progress")
        executor.step()
        for s, problem in commits.after_batch(executor).items():
            broken.setdefault(s, problem)
    for s, st in enumerate(executor.state):
        if st.live.phase == "done":
            must_reject(s, jobs[s].planned[0].request if jobs[s].planned else bad_requests(jobs[s], scenarios[s])[0],
                        "a request after the end of input")
    results: list[Any] = []
    for result in collect_results(executor):
        s = result.scenario_index
        if s in broken:
            results.append(PathFailure(s, broken[s]))
            continue
        if accepted[s]:
            results.append(PathFailure(s, f"Executor.submit accepted {accepted[s][0]}"))
            continue
        rejected = list(result.rejected)
        for message in provoked[s]:
            if message in rejected:
                rejected.remove(message)
        if s in failing:
            if not any(FAILURE_MARK in m for m in rejected):
                results.append(PathFailure(s, "a request whose state transformation raised inside a Spark task "
                                              "was not rejected (no rollback)"))
                continue
            rejected = [m for m in rejected if FAILURE_MARK not in m]
        results.append(replace(result, rejected=tuple(rejected)))
    return results


def _drive_directory(executor: Any, scenarios: Sequence[Scenario], directory: str) -> None:
    """Land one small JSON-lines file per job before each step until every tuple is there."""
    pending = {s: [(encode(t.key, "json", i), t.value) for i, t in enumerate(ingestion_order(sc))]
               for s, sc in enumerate(scenarios)}
    landed = {s: 0 for s in pending}
    for _ in range(_MAX_STEPS):
        for s, rows in pending.items():
            if rows:
                chunk, pending[s] = rows[:3], rows[3:]
                _land(os.path.join(directory, f"inbox{s}"), landed[s], chunk)
                landed[s] += 1
        if executor.done():
            return
        executor.step()
    raise RuntimeError(f"directory-source jobs not finished after {_MAX_STEPS} batches")


def _land(inbox: str, number: int, rows: list[tuple[int, Any]]) -> None:
    name = f"f{number:06d}.jsonl"
    staging = os.path.join(os.path.dirname(inbox), f".{os.path.basename(inbox)}-{name}.tmp")
    with open(staging, "w", encoding="utf-8") as handle:
        handle.write("".join(json.dumps([k, v]) + "\n" for k, v in rows))
    os.replace(staging, os.path.join(inbox, name))


def _drive_unbounded(executor: Any) -> None:
    """Step until every job ingested everything and made and finished all its requests, then
    once more so the last batch is committed."""
    def settled() -> bool:
        return all(st.live.offset >= st.job.source.count() and st.live.active is None
                   and st.live.made >= len(st.job.planned) and not st.live.pending
                   for st in executor.state)

    for _ in range(_MAX_STEPS):
        if settled():
            return
        executor.step()
    raise RuntimeError(f"unbounded jobs did not settle after {_MAX_STEPS} batches ({time.time():.0f})")
