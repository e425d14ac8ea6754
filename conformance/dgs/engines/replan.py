"""Re-plans and refused restarts in the live DGS harness (:mod:`conformance.dgs.engines.live`).

The live DGS front end takes another synchronization plan for a job *while the query runs*
(``DgsStreamingRun.replan``: at the next micro-batch the job's leaf states are joined up the
old plan and forked down the new one, waiting events re-assigned; a restart on other plans
re-plans the committed state). For a consistent program the plan changes neither the outputs
(spec(sort(u))) nor the final state, so a re-planned case is judged by the same oracles as
any other - which only holds if the front end moves every state and every waiting event.

* :func:`replan_of`: every case whose seed is a multiple of :data:`EVERY` (about a third; a
  function of the case, so a shrunk or replayed case re-plans the same way) and that lands in
  two files or more gets a second P-valid plan over the same implementation tags (drawn like
  the generator's plans, worker ids prefixed ``r``: disjoint from the first plan's), requested
  before file ``before`` (after at least one processed file). In half of those cases the
  harness restarts a killed query with the new plan (a user who changed the plan restarts
  with it), in the other half with the plan it started with (the front end then re-plans the
  committed state back at the restart).
* :func:`judged_processed`: the ``processed`` oracle (every event once, by its responsible
  worker or an ancestor) with two plans. An event processed by a worker of the new plan is
  checked against the new plan and, when it holds there, reported under its responsible
  worker of the first plan, so :func:`conformance.dgs.suite.judge` (which knows the case's
  plan only) counts it; when it does not hold, the worker is reported with the new plan's
  responsible worker in words, and the oracle fails.
* :func:`refused_restart`: at a restart, the harness first restarts with a malformed plan for
  one job, alone and among the others; the front end must refuse both with the one-line
  error, located at that job among others (``jobs[i]: plan.root: ...``) and at no job index
  alone, and leave the checkpoint as it was (the real restart follows).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from typing import Any, Callable, Sequence

from spec.dgs.plan import Plan, Worker
from spec.errors import InputError

from conformance.dgs.cases import DgsCase, program_of, random_plan

EVERY = 3
"""Cases whose seed is a multiple of this are re-planned (about a third)."""

PREFIX = "r"
"""Worker ids of the second plan: ``r`` + the drawn id (the generator draws ``w0``, ``w1``...)."""


@dataclass(frozen=True)
class Replan:
    """A re-plan of one case: the new plan, the file before which it is requested, and
    whether a killed query is restarted with it (else with the case's first plan)."""

    plan: Plan
    before: int
    restart_with_new: bool


def replan_of(case: DgsCase, files: int) -> Replan | None:
    """The case's re-plan (module docstring); None when it is not re-planned."""
    if case.seed % EVERY or files < 2:
        return None
    rng = random.Random(f"replan-{case.seed}-{case.name}")
    universe = sorted({impl for w in case.plan.workers() for impl in w.impl_tags}, key=repr)
    plan = random_plan(program_of(case.name), rng, universe=universe)
    return Replan(Plan(_renamed(plan.root)), rng.randint(1, files - 1), rng.random() < 0.5)


def _renamed(worker: Worker) -> Worker:
    return replace(worker, id=PREFIX + worker.id, children=tuple(_renamed(c) for c in worker.children))


def judged_processed(case: DgsCase, replan: Replan | None,
                     processed: Sequence[tuple[str, tuple[int, str], Any]]) -> list[tuple[str, tuple[int, str], Any]]:
    """``processed`` with the new plan's workers judged and renamed (module docstring)."""
    if replan is None:
        return list(processed)
    program = program_of(case.name)
    new_ids = {w.id for w in replan.plan.workers()}
    first = {impl: w.id for w in case.plan.workers() for impl in w.impl_tags}
    second = {impl: w.id for w in replan.plan.workers() for impl in w.impl_tags}
    result = []
    for by, key, payload in processed:
        if by in new_ids:
            impl = (program.tag(payload), key[1])
            responsible = second.get(impl)
            if responsible is not None and (by == responsible or by in replan.plan.ancestors(responsible)):
                by = first.get(impl, by)
            else:
                by = f"{by} (a worker of the plan after the re-plan, where {responsible} is responsible)"
        result.append((by, key, payload))
    return result


def refused_restart(start: Callable[[Sequence[Any]], Any], jobs: Sequence[Any], number: int) -> tuple[int, str] | None:
    """Restart with job ``number % len(jobs)``'s plan malformed, alone and (two jobs or more)
    among the others (``start(jobs)`` starts a query): None when the front end refuses both,
    the first with an InputError not located at a job index (a query of one job has none),
    the second with one located at that job; else ``(job, what happened)``."""
    index = number % len(jobs)
    bad = replace(jobs[index], plan={"root": "not a worker"})
    attempts: list[tuple[list[Any], str | None]] = [([bad], None)]
    if len(jobs) > 1:
        attempts.append(([*jobs[:index], bad, *jobs[index + 1:]], f"jobs[{index}]"))
    for given, where in attempts:
        what = f"a restart with a malformed plan for job {index}{'' if where else ' alone'}"
        try:
            run = start(given)
        except InputError as error:
            at = error.where or ""
            if at.startswith(where) if where else not at.startswith("jobs["):
                continue
            return index, f"{what} was refused with {str(error)!r}: " + (
                f"not located at {where}" if where else "located at a job index")
        run.stop()
        return index, f"{what} started a query"
    return None
