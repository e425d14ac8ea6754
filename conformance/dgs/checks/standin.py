"""The DGS batch driver on a pure-Python Spark stand-in, on shapes the Spark check leaves out
(with the DGS suite's Spark checks, no Spark job).

The Spark check runs every drawn case once, as drawn. Here the same cases run again through
:func:`spark_impl.dgs.run_dgs_many` on :class:`conformance.standin.spark.LocalSpark` (the
driver's own stages and sink, a second of CPU for a hundred cases), each changed where the
Spark run cannot afford a second pass:

* ``inline_below`` cycles through 1, 3, 8 and 50 (the drawn cases use 0, 2 or 5), so the
  inlining of longer segments runs, and more of it;
* the arrival model has explicit per-stream delays (``Arrival.delays``, never set by a drawn
  case) on top of the case's delays and jitter;
* the first case also runs through :func:`spark_impl.dgs.run_dgs`, the one-job wrapper (no
  Spark check calls it), with a sink directory of the caller's, and the first :data:`DEFAULTS`
  cases run through it with every default (they must be ``DgsJob``'s: no delays, one tick, the
  plan as given).

* :func:`spark_impl.dgs.sequential_plan` (public API, called by no check): for every case it
  is the root alone, of state type ``program.initial``, no fork or join, owning exactly the
  input's implementation tags; the first case of every program runs under it (one more
  ``run_dgs_many`` call, :func:`sequential_problem`).

Every run is judged by the Spark check's oracles (:func:`conformance.dgs.suite.judge`: outputs,
processed trace, final state) and by what it reports: per tick, the events the release
schedule gives that tick and the synchronizing steps of its plan (after inlining), which only
the one-worker check looked at, and only for plans without synchronizing steps.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any, Sequence

from spec.dgs.streams import StreamEvent

from reference.dgs.examples import target

from conformance.core.results import CheckResult, FailureReport
from conformance.dgs.cases import DgsCase, case_to_json, program_of
from conformance.dgs.oracles import judge
from conformance.standin.spark import LocalSpark

if TYPE_CHECKING:
    from conformance.core.results import CheckResult, SuiteResult

CHECK = "spark_impl DGS driver on a pure-Python Spark stand-in vs spec(sort(u)) (no Spark)"
INLINE = (1, 3, 8, 50)
DEFAULTS = 20  # drawn cases run again through run_dgs with every default


def variant(case: DgsCase, index: int) -> tuple[DgsCase, Any]:
    """``case`` with the ``index``-th inlining bound, and its job with explicit stream delays."""
    from spark_impl.dgs import Arrival, DgsJob

    changed = replace(case, inline_below=INLINE[index % len(INLINE)])
    delays = {stream: (index + n) % 5 for n, stream in enumerate(sorted(case.streams)) if (index + n) % 3}
    arrival = Arrival(case.max_delay, case.max_jitter, case.seed, delays)
    return changed, DgsJob(target(case.name), case.plan, case.streams, arrival, case.tick, changed.inline_below)


def ticks_problem(case: DgsCase, job: Any, run: Any) -> str | None:
    """None when ``run`` reports, per tick, the schedule's events and its plan's synchronizing steps."""
    from spark_impl.dgs.driver import inline_short_segments, steps_of
    from spark_impl.dgs.release import release_schedule
    from spark_impl.dgs.topology import topology

    program = program_of(case.name)
    topo = topology(program, job.plan)
    schedule = release_schedule(program, topo, job.streams, job.arrival, job.tick)
    want = [(len(tick), sum(sync is not None for _, sync in inline_short_segments(topo, steps_of(topo, tick),
                                                                               job.inline_below)))
            for tick in schedule]
    got = [(t.events, t.syncs) for t in run.ticks]
    if got != want:
        return f"ticks (events, synchronizing steps) reported {got[:6]}, the schedule and its plan give {want[:6]}"
    if any(t.seconds < 0 for t in run.ticks) or abs(run.seconds - sum(t.seconds for t in run.ticks)) > 1e-9:
        return f"tick wall times {[t.seconds for t in run.ticks][:6]} are negative or do not add up to {run.seconds}"
    return None


def problems(drawn: Sequence[DgsCase]) -> list[tuple[int, list[tuple[str, str]]]]:
    """The failed oracles of every changed case (module docstring), by case index."""
    from spark_impl.dgs import run_dgs, run_dgs_many

    if not drawn:
        return []
    pairs = [variant(case, i) for i, case in enumerate(drawn)]
    try:
        runs = run_dgs_many(LocalSpark(), [job for _, job in pairs])
    except Exception as error:  # noqa: BLE001 - a crash is an engine failure
        return [(0, [("engine", f"run_dgs_many on the stand-in raised {type(error).__name__}: {error}")])]
    found = []
    for index, ((case, job), run) in enumerate(zip(pairs, runs)):
        failed = judge(case, (list(run.outputs), run.final_state, list(run.processed)))
        stats = ticks_problem(case, job, run)
        failed += [("stats", stats)] if stats is not None else []
        if failed:
            found.append((index, failed))
    case, job = pairs[0]
    sink = tempfile.mkdtemp(prefix="streamproof-dgs-stand-in-")
    try:
        one = run_dgs(LocalSpark(), job.target, job.plan, job.streams, arrival=job.arrival, tick=job.tick,
                      inline_below=job.inline_below, sink_dir=sink)
        failed = judge(case, (list(one.outputs), one.final_state, list(one.processed)))
        if os.path.isdir(sink) and not any(name.endswith(".pkl") for name in os.listdir(sink)) and one.outputs:
            failed.append(("stats", f"run_dgs emptied the sink_dir given ({sink})"))
    except Exception as error:  # noqa: BLE001 - a crash is an engine failure
        failed = [("engine", f"run_dgs on the stand-in raised {type(error).__name__}: {error}")]
    finally:
        shutil.rmtree(sink, ignore_errors=True)
    if failed:
        found.insert(0, (0, [(oracle, f"run_dgs (one job): {text}") for oracle, text in failed]))
    defaults = _defaults_problem(drawn[:DEFAULTS])
    if defaults is not None:
        found.append(defaults)
    sequential = sequential_problem(drawn)
    if sequential is not None:
        found.append(sequential)
    return found


def sequential_problem(drawn: Sequence[DgsCase]) -> tuple[int, list[tuple[str, str]]] | None:
    """``sequential_plan(program, streams)``: "One worker responsible for every implementation
    tag of ``streams``: no fork, no join" (``spark_impl.dgs``: "the one-worker plan: the
    sequential program on Spark"). On every case: the root alone, with the program's initial
    state type (V1: the root's is ``State_0``), no fork or join, owning exactly the
    ``(tag, stream)`` of the input's events; then the first case of each program runs under
    it on the stand-in, judged (oracle ``plan`` for the shape, the suite's oracles for the run).
    No check called it: the one-worker check builds its plan itself
    (:func:`conformance.dgs.suite.candidates`), so a plan of another state type (``"State"``
    for a program whose initial type is ``"Total"`` or ``"Whole"``, refused as P-invalid) was
    never built."""
    from spark_impl.dgs import DgsJob, run_dgs_many, sequential_plan

    firsts: dict[str, int] = {}
    for index, case in enumerate(drawn):
        program = program_of(case.name)
        try:
            plan = sequential_plan(program, case.streams)
        except Exception as error:  # noqa: BLE001 - a crash is a finding
            return index, [("plan", f"sequential_plan raised {type(error).__name__}: {error}")]
        root = plan.root
        impl = {(program.tag(item.payload), stream) for stream, items in case.streams.items() for item in items
                if isinstance(item, StreamEvent)}
        if (root.children or root.fork is not None or root.join is not None or root.state_type != program.initial
                or root.impl_tags != impl):
            return index, [("plan", f"sequential_plan of {case.name} is {plan.to_json()}, expected the root alone of "
                                    f"state type {program.initial!r}, no fork or join, owning the input's "
                                    f"{len(impl)} implementation tags")]
        firsts.setdefault(case.name, index)
    indices = sorted(firsts.values())
    cases = [replace(drawn[i], plan=sequential_plan(program_of(drawn[i].name), drawn[i].streams)) for i in indices]
    try:
        runs = run_dgs_many(LocalSpark(), [DgsJob(target(c.name), c.plan, c.streams) for c in cases])
    except Exception as error:  # noqa: BLE001 - a crash is an engine failure
        return indices[0], [("engine", f"run_dgs_many under sequential_plan raised {type(error).__name__}: {error}")]
    for index, case, run in zip(indices, cases, runs):
        failed = judge(case, (list(run.outputs), run.final_state, list(run.processed)))
        if failed:
            return index, [(oracle, f"under sequential_plan: {text}") for oracle, text in failed]
    return None


def _defaults_problem(drawn: Sequence[DgsCase]) -> tuple[int, list[tuple[str, str]]] | None:
    """``run_dgs`` called with its defaults runs as ``DgsJob``'s defaults say (``arrival``:
    no delays, ``tick``: everything released in one tick, ``inline_below`` 0: the plan as
    given): judged, and per tick the schedule's events and the plan's synchronizing steps of
    that job. Every other call passes these arguments explicitly, so a changed default of
    ``run_dgs`` (a ``tick`` of 1 releasing the input over many ticks, an ``inline_below`` that
    inlines) was seen by nothing (``inline_below`` 0 -> 1 in ``run_dgs`` is
    equivalent: ``steps_of`` already merges synchronizing groups of one worker with no leaf
    events between them, the only segments shorter than 1)."""
    from spark_impl.dgs import DgsJob, run_dgs

    for index, case in enumerate(drawn):
        job = DgsJob(target(case.name), case.plan, case.streams)
        try:
            run = run_dgs(LocalSpark(), job.target, job.plan, job.streams)
        except Exception as error:  # noqa: BLE001 - a crash is an engine failure
            return index, [("engine", f"run_dgs with its defaults raised {type(error).__name__}: {error}")]
        failed = judge(case, (list(run.outputs), run.final_state, list(run.processed)))
        stats = ticks_problem(case, job, run)
        failed += [("stats", stats)] if stats is not None else []
        if failed:
            return index, [(oracle, f"run_dgs with its defaults: {text}") for oracle, text in failed]
    return None


def run_check(drawn: Sequence[DgsCase], result: "SuiteResult") -> "CheckResult":
    """Run :func:`problems` on every drawn case and report the first failure (not shrunk: the
    failing case is printed with its changed inlining bound)."""
    start = time.monotonic()
    found = problems(drawn)
    check = CheckResult(CHECK, cases=len(drawn) + (1 if drawn else 0), failed=len(found))
    for _, failed in found:
        check.oracle_failures.update(oracle for oracle, _ in failed)
    if found:
        index, failed = found[0]
        case, _ = variant(drawn[index], index)
        explanation = (f"program {case.name}, inline_below {case.inline_below}, explicit stream delays\n"
                       + "\n".join(f"[{o}] {t}" for o, t in failed))
        result.failures.append(FailureReport(CHECK, index, tuple(o for o, _ in failed), explanation, 1, 1, 0,
                                             case_to_json(case)))
    check.elapsed_s = time.monotonic() - start
    return check
