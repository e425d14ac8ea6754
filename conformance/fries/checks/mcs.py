"""The Spark executor's MCS against the spec's, for every request of every Fries case (issue 12).

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

Two places use it: the Spark engine judges every case it runs with the fries scheduler
(an ``engine`` failure; ``conformance.fries.engines.catalogue.SparkEngine``), and :func:`run_mcs_check`
is a check of its own in the Fries suite on Spark: as many *MCS shapes*
(:func:`conformance.fries.cases.scenarios.mcs_shapes`: 4-8 operators, one-to-many and replicate
operators as often as the rest, no tuples) as the run has cases, never run, only compared -
the suite's usual small DAGs rarely hold two one-to-many ancestors of one target. A failing
shape is shrunk and saved like any Fries case; ``--replay`` runs it through the Spark engine,
whose per-case check reports it again.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from spec.fries.scenario import Scenario, scenario_from_json

if TYPE_CHECKING:
    from conformance.fries.suite import FriesConfig
    from conformance.core.results import SuiteResult

#: Name of the suite's check (:func:`run_mcs_check`).
CHECK = "spark_impl MCS vs spec.fries.mcs (driver, no Spark)"

Role = tuple[bool, bool, frozenset[str], frozenset[str]]
"""(head, reconfigured, parents, children) of one object."""


def spec_roles(flow: Any, workers: Mapping[str, tuple[str, ...]], targets: frozenset[str]) -> dict[str, Role]:
    """The object roles the spec names for a request reconfiguring ``targets`` (module docstring)."""
    from spec.fries.mcs import fries_mcs_definition

    vertices, edges, _, _ = fries_mcs_definition(flow, targets)
    roles: dict[str, Role] = {}
    for op in vertices:
        head = not any(b == op for _, b in edges)
        parents = frozenset(w for a, b in edges if b == op for w in workers[a])
        children = frozenset(w for a, b in edges if a == op for w in workers[b])
        for obj in workers[op]:
            roles[obj] = (head, op in targets, parents, children)
    return roles


def mcs_problem(scenario: Scenario) -> str | None:
    """The first request of ``scenario`` whose executor roles differ from the spec's, in words;
    None when every request agrees."""
    from spark_impl.reconfig import scenario_job
    from spark_impl.reconfig.mcs import object_components

    job = scenario_job(scenario)
    workers = {name: tuple(job.objects(name)) for name in job.dataflow.names}
    for j, request in enumerate(scenario.reconfigurations):
        targets = frozenset(request.updates)
        got = {obj: (r.head, r.reconfigured, frozenset(r.parents), frozenset(r.children))
               for obj, r in object_components(job.dataflow, workers, targets).items()}
        want = spec_roles(job.dataflow, workers, targets)
        if got != want:
            return f"MCS of R{j + 1} (reconfiguring {sorted(targets)}): {_difference(got, want)}"
    return None


def _difference(got: dict[str, Role], want: dict[str, Role]) -> str:
    extra, missing = sorted(set(got) - set(want)), sorted(set(want) - set(got))
    if extra or missing:
        return (f"the executor synchronises objects {sorted(got)}; Fries Alg. 1-4 name {sorted(want)} "
                f"(extra {extra}, missing {missing})")
    for obj in sorted(got):
        if got[obj] != want[obj]:
            names = ("head", "reconfigured", "aligns on", "sends markers to")
            diffs = [f"{name} {_show(g)} instead of {_show(w)}"
                     for name, g, w in zip(names, got[obj], want[obj]) if g != w]
            return f"object {obj}: " + ", ".join(diffs)
    return "roles differ"  # pragma: no cover - got != want implies one of the above


def _show(value: Any) -> str:
    return str(sorted(value)) if isinstance(value, frozenset) else str(value)


def run_mcs_check(config: "FriesConfig", result: "SuiteResult") -> bool:
    """Compare the MCS of ``config.cases`` drawn shapes (module docstring); append the check
    (and a shrunk, saved failure) to ``result``. True when a shape failed."""
    from conformance.core.cases import draw_cases
    from conformance.fries.cases.moves import candidates, size
    from conformance.fries.cases.codec import scenario_to_json
    from conformance.fries.cases.scenarios import mcs_shapes
    from conformance.core.saved_case import save_case
    from conformance.core.shrink import shrink
    from conformance.core.results import CheckResult, FailureReport

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
        from pathlib import Path

        json_path, test_path = save_case(
            Path(config.save_dir), suite="fries", engine=config.engine, scheduler=config.scheduler,
            faults=tuple(sorted(config.faults)), seed=config.seed, case=index, oracles=("engine",),
            explanation=explanation, case_data=shrunk)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    result.failures.append(report)
    return True
