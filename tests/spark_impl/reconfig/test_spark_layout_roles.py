"""Regression: ``spark_impl.reconfig.layout.roles`` must never return another job's roles.

It cached its result under a key holding ``id(job)``; CPython reuses the id of a freed
object, so in a driver-like loop (batches of jobs, each freed before the next is made) a new
job with other workers could be handed the roles of an earlier job (e.g. object
``A`` where the new job has ``A#0, A#1``). No Spark needed: jobs are made and freed in a loop
and every look-up is compared with a fresh computation.
"""

from __future__ import annotations



from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spark_impl.reconfig.layout import roles
from spark_impl.reconfig.mcs import object_components
from spark_impl.reconfig.model import Job, ListSource, Request

FLOW = Dataflow(
    (Operator("S", OperatorKind.SOURCE), Operator("A", OperatorKind.ONE_TO_ONE),
     Operator("B", OperatorKind.ONE_TO_ONE)),
    (("S", "A"), ("A", "B")),
)
REQUEST = Request({"A": None, "B": None})  # type: ignore[dict-item]  # roles() reads only the operators


def test_roles_of_a_new_job_are_never_an_earlier_jobs_roles() -> None:
    wrong = []
    for i in range(600):
        workers = 1 + i % 3
        job = Job(FLOW, {}, ListSource(()), {"A": workers})
        got = roles(job, 0, REQUEST, True)
        expected = object_components(FLOW, {n: job.objects(n) for n in FLOW.names}, REQUEST.operators)
        if got != expected:
            wrong.append((i, sorted(got), sorted(expected)))
        del job

    assert not wrong, f"{len(wrong)} look-ups returned another job's roles, e.g. {wrong[:2]}"


def test_roles_are_still_cached_for_one_job() -> None:
    job = Job(FLOW, {}, ListSource(()), {"A": 2})
    assert roles(job, 0, REQUEST, True) is roles(job, 0, REQUEST, True)
    assert set(roles(job, 0, REQUEST, False)) == {"A#0", "A#1", "B"}
