"""The nemesis' verdict on each run: the conformance suites' own oracles, plus counts of lost
and duplicated outputs.

Per run a dict ``{"failures": ["oracle: summary", ...], "lost", "duplicated", "serializable"}``:

* Fries: :func:`conformance.fries.oracles.judge` (schedule complete, conflict-serializable,
  FIFO channels, outputs equal the serial execution in the witness order, exactly once,
  states); ``serializable`` is its verdict on the run's schedule;
* O+: :func:`conformance.oplus.suite.spark_discrepancies` (outputs equal the sequential
  reference's, each emitted in its round by its instance); an engine crash is a failure;
* DGS: :func:`conformance.dgs.oracles.judge` (outputs equal ``spec(sort(u))``, processed trace,
  final state).

``lost`` = expected output records missing (multiset difference), ``duplicated`` = extra
copies of expected records (records that should not exist at all are the ``outputs``
oracle's, not counted here); both None when there is nothing to compare with (the engine
crashed, or a non-serializable Fries schedule has no serial execution).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Hashable, Iterable, Sequence

from spec.dgs.semantics import spec_run
from spec.dgs.streams import sort_streams

from conformance.core.crashes import Crash
from conformance.dgs import oracles as dgs_oracles
from conformance.dgs.cases import program_of
from conformance.fries import oracles as fries_oracles
from conformance.fries.outcome import outcome_of
from conformance.oplus.engines.reference import reference_rows
from conformance.oplus.oracles import spark_discrepancies


def lost_duplicated(expected: Iterable[Hashable], actual: Iterable[Hashable]) -> tuple[int, int]:
    """(missing expected records, extra copies of expected records), as multisets."""
    want, got = Counter(expected), Counter(actual)
    lost = sum((want - got).values())
    duplicated = sum(count - want[record] for record, count in got.items() if want[record] and count > want[record])
    return lost, duplicated


def _run(failures: list[str], counts: tuple[int, int] | None, serializable: bool | None = None) -> dict[str, Any]:
    return {"failures": failures, "lost": None if counts is None else counts[0],
            "duplicated": None if counts is None else counts[1], "serializable": serializable}


def judge_fries(scenarios: Sequence[Any], results: Sequence[Any]) -> list[dict[str, Any]]:
    """Judge spark_impl ``RunResult`` s (in scenario order) with the Fries oracles."""
    by_index = {result.scenario_index: result for result in results}
    runs = []
    for index, scenario in enumerate(scenarios):
        result = by_index.get(index)
        if result is None:
            runs.append(_run(["engine: no result for this scenario"], None))
            continue
        outcome = outcome_of(scenario, result.outputs, result.schedule, result.states, result.delays_ms,
                           result.rejected, result.senders)
        judgement = fries_oracles.judge(scenario, outcome)
        failures = [f"{f.oracle}: {f.summary}" for f in judgement.failures]
        counts = (lost_duplicated(judgement.expected.outputs.elements(), outcome.outputs)
                  if judgement.expected is not None else None)
        serializable = not any(f.oracle in ("serializable", "engine") for f in judgement.failures)
        runs.append(_run(failures, counts, serializable))
    return runs


def judge_oplus(drawn: Sequence[tuple[dict[str, Any], int]], engine: Any) -> list[dict[str, Any]]:
    """Run O+ cases through the O+ suite's Spark ``engine`` (a
    :class:`~conformance.core.crashes.Guard`) and judge them with
    :func:`conformance.oplus.suite.spark_discrepancies` (outputs equal the sequential
    reference's, emitted in the right round by the right instance); the rows each case
    produced are recorded on the way for the lost / duplicated counts."""
    rows: dict[int, list[Any]] = {}
    inner = engine.run

    def recording(cases: Sequence[Any]) -> Any:
        seen = inner(cases)
        for case, got in zip(cases, seen):
            rows[id(case)] = list(got[0])
        return seen

    engine.run = recording
    runs = []
    for item, problem in zip(drawn, spark_discrepancies(drawn, engine)):
        failures = [] if problem is None else [problem.splitlines()[0]]
        got = rows.get(id(item))
        counts = None if got is None else lost_duplicated(reference_rows(item[0], "sequential"), got)
        runs.append(_run(failures, counts))
    return runs


def judge_dgs(drawn: Sequence[Any], observed: Sequence[Any]) -> list[dict[str, Any]]:
    """Judge DGS runs with :func:`conformance.dgs.oracles.judge`."""
    runs = []
    for case, seen in zip(drawn, observed):
        failures = [f"{oracle}: {text.splitlines()[0] if text else ''}" for oracle, text in dgs_oracles.judge(case, seen)]
        counts = None
        if not isinstance(seen, Crash):
            _, expected = spec_run(program_of(case.name), sort_streams(case.streams))
            counts = lost_duplicated([repr(x) for x in expected], [repr(x) for x in seen[0]])
        runs.append(_run(failures, counts))
    return runs
