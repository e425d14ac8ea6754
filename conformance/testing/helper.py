"""A helper for users' CI: check a Spark job's (or any engine's) Fries run against the reference.

In a user's test::

    from conformance.pytest_helper import assert_conforms

    def test_my_job(spark):
        scenario = scenario_from_json(load_json("my_scenario.json"))
        outputs, schedule = run_my_job(spark, scenario)     # however the user runs it
        assert_conforms(scenario, outputs, schedule=schedule)

``assert_conforms`` raises ``AssertionError`` with a readable diff: which oracle failed, the
witness serial order, and the first missing / unexpected output records. Without a schedule
the outputs are compared with the serial execution in the *request order* (each
reconfiguration applied right after the source tuples ingested before it was requested): what
an engine that quiesces on every request computes. With a schedule every oracle of the suite
applies (:mod:`conformance.fries.oracles`), including the channel-FIFO and per-key order
conditions of :mod:`spec.fries.consistency`; ``senders`` (parallel to the schedule's logs: the
object that sent each data operation's tuple) makes the channels exact - without it they are
inferred from the transactions, which is exact unless an object receives one transaction on
several channels. ``dependence`` compares outputs up to a dependence relation instead of as
multisets (e.g. :func:`conformance.core.matcher.by_class` on the key, for a job whose per-key output
order matters).

**User jobs**: ``assert_conforms(job, outputs, ...)`` with a
:class:`spark_impl.reconfig.Job` of user operators judges one run of that job against the
reference run of the same functions (:func:`conformance.userjob.assertions.assert_run_conforms`;
``dependence`` is then ``"key"``, ``"sink"``, ``"none"`` or a function ``(sink, key, value) ->
class``). :func:`assert_job_conforms` runs the whole randomized suite on a job
(``"FILE.py:NAME"``, a callable returning ``(job, requests[, options])``, or a job and its
requests) on a SparkSession; the pytest plugin (:mod:`conformance.testing.plugin`) gives the
fixtures. See docs/conformance.md, "Your own job".
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Iterable, Mapping, Sequence, cast

from spec.fries.scenario import Output, Scenario, ingestion_order, serial_execution
from spec.fries.schedule import Schedule

from conformance.core.matcher import Dependence, compare
from conformance.core.verdict import failed
from conformance.fries.oracles import judge, show_record
from conformance.fries.outcome import RunOutcome, expand_outputs
from conformance.userjob.assertions import assert_result_conforms, assert_run_conforms, assert_job_conforms as run
from spark_impl.reconfig.api import RunResult


def request_order(scenario: Scenario) -> list[str]:
    """The serial order that applies reconfiguration j right after the first ``at_j`` source
    tuples (in ingestion order); ties keep request order."""
    tuples = [t.txn for t in ingestion_order(scenario)]
    order: list[str] = []
    pending = sorted(range(len(scenario.reconfigurations)), key=lambda j: scenario.reconfigurations[j].at)
    for position in range(len(tuples) + 1):
        while pending and scenario.reconfigurations[pending[0]].at <= position:
            order.append(f"R{pending.pop(0) + 1}")
        if position < len(tuples):
            order.append(tuples[position])
    return order


def assert_conforms(
    scenario: Scenario | Any,
    outputs: Iterable[Any] | Counter[Output],
    *,
    schedule: Schedule | Mapping[str, Any] | None = None,
    states: Mapping[tuple[str, Any], Any] | None = None,
    dependence: Dependence[Output] | Any = None,
    senders: Mapping[str, Sequence[str | None]] | None = None,
    rejected: Sequence[str] = (),
    requests: Sequence[Any] | None = None,
) -> None:
    """Raise AssertionError, with a readable diff, unless the run conforms (module docstring).
    ``outputs`` are (sink, transaction, key, value) records; ``schedule`` the run's per-object
    logs (a :class:`Schedule` or its JSON form). ``scenario`` may be a user job (module
    docstring); ``rejected`` (user jobs) lists the engine's rejection messages; ``requests``
    (user jobs) every request the run made in transaction order, planned and submitted alike
    (``RunResult.requests``): a request made with ``submit`` is not among the job's planned
    ones, and the oracles need the functions each transaction installed. For a user job
    ``outputs`` may be the run's whole ``RunResult`` (``collect_results(ex)[s]``): every field
    is then read from it, its requests included."""
    if not isinstance(scenario, Scenario):
        # the user-job oracles read spark_impl's job model, which imports pyspark: loaded on use

        if isinstance(outputs, RunResult):  # judge(job, result): every field, its requests too
            assert_result_conforms(scenario, outputs, dependence="key" if dependence is None else cast(Any, dependence))
            return
        assert_run_conforms(scenario, outputs, schedule=schedule, states=states, senders=senders,
                            rejected=rejected, dependence="key" if dependence is None else cast(Any, dependence),
                            requests=requests)
        return
    records = expand_outputs(outputs)
    if schedule is None:
        order = request_order(scenario)
        expected = serial_execution(scenario, order)
        mismatch = compare(expected.outputs.elements(), records, dependence)
        problems = []
        if mismatch is not None:
            problems.append("outputs differ from the serial execution in request order "
                            f"({' '.join(order)}):\n{mismatch.explain(show_record)}")
        if states is not None and dict(states) != dict(expected.states):
            wrong = sorted(k for k in set(states) | set(expected.states) if states.get(k) != expected.states.get(k))
            problems.append("final states differ: " + ", ".join(
                f"{op}[{key}] expected {expected.states.get((op, key))}, got {states.get((op, key))}"
                for op, key in wrong[:5]))
        if problems:
            raise AssertionError("run does not conform to the reference:\n" + "\n".join(problems))
        return
    logs = schedule if isinstance(schedule, Schedule) else Schedule.from_json(schedule)
    channels = {obj: tuple(log) for obj, log in senders.items()} if senders is not None else None
    judgement = judge(scenario, RunOutcome(records, logs, dict(states) if states is not None else None,
                                           senders=channels), dependence=dependence)
    if not judgement.ok:
        lines = [f"[{v.name}] {v.message}\n{v.detail}" for v in failed(judgement.verdicts)]
        raise AssertionError("run does not conform to the reference:\n" + "\n".join(lines))


def assert_job_conforms(job: Any, requests: Sequence[Any] | None = None, **options: Any) -> Any:
    """The randomized user-job suite on ``job``
    (:func:`conformance.userjob.assertions.assert_job_conforms`; keyword options ``spark``,
    ``cases``, ``seed``, ``faults``, ``scheduler``, ``save_dir``, ``options``)."""
    return run(job, requests, **options)
