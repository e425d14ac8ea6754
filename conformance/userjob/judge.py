"""The oracles for one run of a user job (the user-job form of :mod:`conformance.fries.oracles`).

For the case's job and what the engine reported (:class:`UserRun`):

* ``user-code``    the user's code raised (in a Spark task, or in a state transformation
  that made the engine reject its request): the case fails *as the user's*, with the call;
* ``engine``       the engine failed on the case for any other reason;
* ``schedule``     every request updated every object of every operator it reconfigures
  exactly once, and no operation names a transaction the case does not have;
* ``serializable`` (C1) the schedule is conflict-serializable (Fries Def. 4.9; the reference
  checker, with its cycle when not);
* ``fifo``         (C2) every channel delivered what its sender sent, once and in send order
  (:func:`reference.fries.userjob.replay_run`);
* ``outputs``      (C3) the outputs equal those of the replay of the run with the *user's*
  functions, compared up to the dependence the user declared (default: per sink and key,
  sequences - :mod:`conformance.core.matcher`); by Theorem 1 of :mod:`spec.fries.consistency` that
  is the serial execution in the witness order whenever the run kept every dependent pair in
  that order;
* ``exactly-once`` no output is duplicated, no transaction with expected output lost all of it;
* ``states``       the final state of every (operator, key) equals the replay's.

Values of any type are compared by equality; unhashable ones (lists, dicts) are frozen for the
matcher (:func:`freeze`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from typing import Any, Hashable, Mapping, Sequence

from spec.fries.scenario import Scenario, Timing
from spec.fries.schedule import Schedule

from conformance.fries.oracles import (
    Judgement, default_checker, engine_verdict, exactly_once_verdict, fifo_verdict, outputs_verdict, schedule_verdict,
    serializable_verdict, states_verdict,
)
from conformance.core.matcher import Dependence, by_class, compare
from conformance.core.verdict import OracleName, Verdict, fails
from conformance.userjob.guard import user_error_in
from conformance.userjob.load import Classify
from reference.fries.userjob import replay_run, source_tuples
from spark_impl.keys import key_order, route
from spark_impl.reconfig.model import Job, PlannedRequest, Request

Record = tuple[str, str, Hashable, Hashable]


@dataclass(frozen=True)
class UserRun:
    """What the engine reported for one case (``error`` set when it failed)."""

    outputs: Sequence[tuple[str, str, Any, Any]] = ()
    schedule: Schedule = field(default_factory=lambda: Schedule({}))
    states: Mapping[tuple[str, Any], Any] | None = None
    rejected: tuple[str, ...] = ()
    senders: Mapping[str, tuple[str | None, ...]] | None = None
    error: str | None = None


class FrozenMap(tuple):  # type: ignore[type-arg]
    """A dict frozen for hashing: its items sorted, shown like the dict."""

    def __repr__(self) -> str:
        return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in self) + "}"


def freeze(value: Any) -> Hashable:
    """A hashable stand-in of ``value``, equal iff the values are equal - except that a list
    and a tuple of equal items are equal (lists -> tuples, sets -> frozensets, dicts -> a
    :class:`FrozenMap`; anything else unhashable -> its repr)."""
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, dict):
        return FrozenMap(sorted(((freeze(k), freeze(v)) for k, v in value.items()), key=repr))
    if isinstance(value, (set, frozenset)):
        return frozenset(freeze(v) for v in value)
    try:
        hash(value)
    except TypeError:
        return repr(value)
    return value  # type: ignore[no-any-return]


def as_record(record: tuple[str, str, Any, Any]) -> Record:
    sink, txn, key, value = record
    return (str(sink), str(txn), freeze(key), freeze(value))


def dependence_of(classify: Classify | None) -> Dependence[Record] | None:
    """The matcher's dependence for the user's declaration (None: a multiset)."""
    if classify is None:
        return None
    def classes(record: Record) -> Hashable:
        return freeze(classify(record[0], record[2], record[3]))

    dependence: Dependence[Record] = by_class(classes)
    return dependence


def with_requests(job: Job, requests: Sequence[Request | PlannedRequest]) -> Job:
    """``job`` knowing every request its run made: ``requests`` in the order of their
    transactions R1, R2, ..., planned and submitted (``Executor.submit``) alike. The oracles
    read transaction ``Rj``'s functions from ``job.planned[j - 1]``; a run whose request was
    submitted rather than planned would otherwise be judged with functions it never installed.
    A bare :class:`Request` gets ``at=-1``: no ingestion point (only a run's schedule orders it)."""
    return replace(job, planned=tuple(r if isinstance(r, PlannedRequest) else PlannedRequest(-1, r)
                                      for r in requests))


def judge_run(job: Job, run: UserRun, classify: Classify | None) -> Judgement:
    """Apply every oracle (module docstring) to ``run`` of ``job`` (the case's job)."""
    if run.error is not None:
        user = user_error_in(run.error)
        if user is not None:
            return Judgement((fails(OracleName.USER_CODE, "the job's own code raised", {"error": user}, user),),
                             None, None)
        return Judgement((engine_verdict(run.error),), None, None)
    users = [u for u in (user_error_in(r) for r in run.rejected) if u is not None]
    if users:
        return Judgement((fails(OracleName.USER_CODE, "a state transformation of the job raised (request rejected)",
                                {"error": users[0]}, users[0]),), None, None)
    verdicts = [engine_verdict(None), _schedule_complete(job, run)]
    checked = default_checker()(run.schedule)
    verdicts.append(serializable_verdict(checked))
    if not checked.serializable:
        return Judgement(tuple(verdicts), None, None)
    replayed = replay_run(job, run.schedule, dict(run.senders) if run.senders is not None else None, route,
                          flush_order=key_order)
    verdicts.append(fifo_verdict(replayed.violations))
    expected = [as_record(r) for r in replayed.outputs]
    actual = [as_record(r) for r in run.outputs]
    verdicts.append(outputs_verdict(compare(expected, actual, dependence_of(classify)),
                                    "outputs differ from the replay of the run with the job's functions",
                                    checked.serial_order))
    counted: tuple[Counter[Any], Counter[Any]] = (Counter(expected), Counter(actual))
    verdicts.append(exactly_once_verdict(*counted, _restarts_of(job)))
    if run.states is not None:
        verdicts.append(states_verdict(replayed.states, run.states))
    return Judgement(tuple(verdicts), tuple(checked.serial_order), None)


def _restarts_of(job: Job) -> Scenario:
    """A stand-in scenario carrying the job's restart points (for the exactly-once report)."""
    return Scenario(job.dataflow, {}, {}, (), {}, Timing(restarts=job.timing.restarts))


def _schedule_complete(job: Job, run: UserRun) -> Verdict:
    problems: list[str] = []
    data = {t[1] for t in source_tuples(job)}
    updates: Counter[tuple[str, str]] = Counter()
    for obj, _, op in run.schedule.operations():
        if op.update:
            updates[(op.txn, obj)] += 1
        elif op.txn not in data and not op.txn.endswith(":final"):
            problems.append(f"object {obj} logs an operation of unknown transaction {op.txn!r}")
            break
    rejected = {f"R{j}" for j in range(1, len(job.planned) + 1) if any(f"R{j} " in r for r in run.rejected)}
    for j, planned in enumerate(job.planned):
        txn = f"R{j + 1}"
        if txn in rejected:
            continue
        for operator in planned.request.updates:
            for obj in job.objects(operator):
                n = updates.get((txn, obj), 0)
                if n != 1:
                    problems.append(f"{txn} updated object {obj} {n} times (expected once)")
    return schedule_verdict(problems)
