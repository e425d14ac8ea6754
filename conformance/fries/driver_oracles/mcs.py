"""The Spark executor's MCS against the spec's, for every request of every Fries case.

A larger MCS than Fries Alg. 1-4 name is still serializable (more objects align), and a smaller
one is often serializable too when the run's timing never opens the window it leaves: no oracle
of a run sees a pruning or seed-set bug reliably. The ``stepped`` path compares what the
executor actually synchronised with the spec for its few probes; this module compares the roles
spark_impl computes - :func:`spark_impl.reconfig.mcs.object_components`, what
``layout.roles`` gives the executor for the fries scheduler - with the spec for every request of
every drawn case, on the driver, without Spark:

* ``spec.fries.mcs.fries_mcs_definition`` gives the MCS vertices and edges (Def. 5.4 over the
  seed set of Alg. 3/4, on the pipelined view of §7.1); its heads are the vertices with no MCS
  edge into them;
* §7.2 expands it to objects: every worker of an MCS operator takes part, is a head iff its
  operator is, is reconfigured iff its operator is, and aligns on every worker of each MCS
  parent (hash partitioning connects all workers of adjacent operators).

``object_components`` is called directly (not through ``layout.roles``' cache), so the check
cannot change what the executor's cache holds. The comparison is operator- and object-level:
seed-set bugs (e.g. the latest instead of the earliest one-to-many ancestor), pruning bugs
and expansion bugs all show as a named difference.

The comparison is :func:`conformance.fries.oracles.mcs_problem`. Two places use it: the Spark engine judges every case it runs with the fries scheduler
(an ``engine`` failure; ``conformance.fries.engines.batch.SparkEngine``), and :func:`run_mcs_check`
is a check of its own in the Fries suite on Spark: as many *MCS shapes*
(:func:`conformance.fries.cases.scenarios.mcs_shapes`: 4-8 operators, one-to-many and replicate
operators as often as the rest, no tuples) as the run has cases, never run, only compared -
the suite's usual small DAGs rarely hold two one-to-many ancestors of one target. A failing
shape is shrunk and saved like any Fries case; ``--replay`` runs it through the Spark engine,
whose per-case check reports it again.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any, Sequence

from spec.fries.scenario import Scenario, scenario_from_json

from conformance.core.cases import draw_cases
from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.core.saved_case import save_case
from conformance.core.shrink import shrink
from conformance.fries.cases.codec import scenario_to_json
from conformance.fries.cases.moves import candidates, size
from conformance.fries.cases.scenarios import mcs_shapes
from conformance.fries.config import FriesConfig
from conformance.fries.oracles import mcs_problem

#: Name of the suite's check (:func:`run_mcs_check`).
CHECK = "spark_impl MCS vs spec.fries.mcs (driver, no Spark)"


def run_mcs_check(config: FriesConfig, result: SuiteResult) -> bool:
    """Compare the MCS of ``config.cases`` drawn shapes (module docstring); append the check
    (and a shrunk, saved failure) to ``result``. True when a shape failed."""
    check = CheckResult(CHECK)
    result.checks.append(check)
    start = time.monotonic()
    first: tuple[int, Scenario, str] | None = None
    for index, shape in enumerate(draw_cases(mcs_shapes(), config.cases, config.seed + 4409)):
        check.cases += 1
        problem = mcs_problem(shape)
        if problem is not None:
            check.failed += 1
            check.oracle_failures["engine"] += 1
            first = first or (index, shape, problem)
    check.elapsed_s = time.monotonic() - start
    result.seconds["MCS shapes"] = check.elapsed_s
    if first is None or config.fail_fast:
        return first is not None
    index, shape, problem = first

    def still_fails(batch: Sequence[dict[str, Any]]) -> list[bool]:
        return [mcs_problem(scenario_from_json(value)) is not None for value in batch]

    original = scenario_to_json(shape)
    shrunk, stats = shrink(original, candidates, still_fails, max_evaluations=config.shrink_evaluations)
    explanation = f"[engine] the executor's MCS differs from the spec's\n    {mcs_problem(scenario_from_json(shrunk))}"
    report = FailureReport(CHECK, index, ("engine",), explanation, size(original), size(shrunk), stats.steps, shrunk)
    if config.save_dir is not None:
        json_path, test_path = save_case(
            Path(config.save_dir), suite="fries", engine=config.engine, scheduler=config.scheduler,
            faults=tuple(sorted(config.faults)), seed=config.seed, case=index, oracles=("engine",),
            explanation=explanation, case_data=shrunk)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    result.failures.append(report)
    return True
