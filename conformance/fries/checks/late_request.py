"""More of the Fries local check (:mod:`conformance.fries.checks.standin`, whose
:func:`~conformance.fries.checks.standin.local_problem` runs this module's parts after its own),
on the same pure-Python Spark stand-in (:mod:`conformance.standin.spark`):

* **Alignment holds back a late request's new-version input.** ``task``'s docstring: a
  component member other than a head "processes the batch's old-version input (and input from
  outside the component) first; when every in-component parent object's marker has arrived it
  switches, then processes the held-back new-version input; until then new-version input is
  buffered". Whether a record is new-version input is decided by its tag, the sender's request
  number, read back from the previous stage (a new int object). A job ``S -> O1 -> O2 -> O3``
  (every operator on 2 workers, each request updating ``O1`` and ``O3``) whose requests are
  made as numbers :data:`LATE_REQUEST` and up (its request count set as 299 earlier requests
  would leave it) must finish and conform (every oracle of :mod:`conformance.fries.oracles`,
  the requests judged as the scenario's ``R1``, ``R2``, ...). Compared by identity above 256
  (``r[4] == entry.j`` -> ``is`` in ``_align``'s ``is_new``), new-version
  tuples are processed before the member switches and reach ``O3`` tagged old: ``O3`` applies
  its old function to tuples ``O1`` processed with its new one. Every request still completes,
  so :mod:`conformance.fries.checks.standin`'s 300 requests show nothing, and the Spark runs make
  a handful of requests. A few requests, so that heads that switch exactly after their
  batch's last tuple (sending no new-version tuple with their markers) cannot hide the bug
  (one request showed it in each of 20 runs).
"""

from __future__ import annotations

import os
from dataclasses import replace
from typing import Any

from spec.fries.scenario import scenario_from_json
from spec.fries.schedule import Operation, Schedule

from conformance.fries.checks.chains import chain_json, run_to_end
from conformance.fries.oracles import judge
from conformance.fries.outcome import outcome_of
from conformance.standin.spark import LocalSpark

LATE_REQUEST = 300  # the first request's number (numbers past 256)
LATE_REQUESTS = 4  # requests made, at 4, 8, 12 and 16 of the job's 24 tuples
BOUND = 40  # batches: the run needs about 12


def more_problem(directory: str) -> str | None:
    """This module's parts (module docstring); the first broken promise, or None."""
    return _late_request_problem(os.path.join(directory, "late-request"))


def late_request_json() -> dict[str, Any]:
    """The scenario: ``S -> O1 -> O2 -> O3`` on 2 workers each, 24 tuples, requests at 4, 8,
    12 and 16, each updating ``O1`` and ``O3`` (order-sensitive folds)."""
    shape = chain_json(3, 24, at=4)
    update = shape["reconfigurations"][0]["updates"]
    update["O3"] = {"function": {"op": "fold", "mul": 7}, "state": {"mul": 1, "add": 2}}
    shape["reconfigurations"] = [{"at": 4 * (i + 1), "updates": update} for i in range(LATE_REQUESTS)]
    shape["parallelism"] = {"O1": 2, "O2": 2, "O3": 2}
    return shape


def _late_request_problem(directory: str) -> str | None:
    """Requests numbered :data:`LATE_REQUEST` and up (module docstring)."""
    from spark_impl.reconfig.api import collect_results, scenario_job
    from spark_impl.reconfig.driver import Executor

    scenario = scenario_from_json(late_request_json(), "late requests")
    job = scenario_job(scenario)
    earlier = LATE_REQUEST - 1
    # the driver makes planned request j (1-based) once j - 1 were made: 299 never used
    # placeholders, then the scenario's requests as R300, R301, ...
    job = replace(job, planned=(job.planned[0],) * earlier + job.planned)
    ex = Executor(LocalSpark(), [job], "fries", directory, partitions=2)
    ex.state[0].live.made = ex.state[0].committed.made = earlier  # as 299 earlier requests leave it
    run_to_end(ex, BOUND)
    name = f"a job whose requests are R{LATE_REQUEST}..R{earlier + LATE_REQUESTS}"
    if not ex.done():
        return f"{name} did not finish in {BOUND} batches: a request number above 256 compared by identity?"
    result = collect_results(ex)[0]
    if ex.state[0].live.made != earlier + LATE_REQUESTS:
        return f"{name}: made {ex.state[0].live.made - earlier} of its {LATE_REQUESTS} requests"

    def renamed(op: Operation) -> Operation:
        # the scenario names its requests R1, R2, ...: R300 is its R1
        late = op.update and op.txn.startswith("R") and op.txn[1:].isdigit()
        return replace(op, txn=f"R{int(op.txn[1:]) - earlier}") if late else op

    schedule = Schedule({obj: tuple(renamed(op) for op in log) for obj, log in result.schedule.logs.items()})
    verdict = judge(scenario, outcome_of(scenario, result.outputs, schedule, result.states,
                                       result.delays_ms, result.rejected, result.senders))
    return None if verdict.ok else f"{name}: {verdict.failures[0].summary}"
