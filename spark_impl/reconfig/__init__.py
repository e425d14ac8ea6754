"""Consistent runtime reconfiguration on PySpark: Fries, epoch and naive schedulers.

Public API: :func:`run_scenarios` / :class:`RunResult` (scenarios of :mod:`spec.fries.scenario`),
:class:`Executor` (jobs of user operators, requests at run time), the model types, and
:mod:`spark_impl.reconfig.mcs` (MCS and components, Fries Alg. 1-4). See docs/spark.md.
"""

from spark_impl.reconfig.api import RunResult, collect_results, run_scenarios, scenario_job
from spark_impl.reconfig.driver import SCHEDULERS, Executor
from spark_impl.reconfig.model import (
    DirectorySource, GeneratedSource, Job, ListSource, PlannedRequest, Request, Timing, Update, UserOperator, user_job, user_update,
)

__all__ = [
    "SCHEDULERS", "DirectorySource", "Executor", "GeneratedSource", "Job", "ListSource", "PlannedRequest", "Request", "RunResult",
    "Timing", "Update", "UserOperator", "collect_results", "run_scenarios", "scenario_job", "user_job", "user_update",
]
