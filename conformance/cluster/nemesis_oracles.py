"""The nemesis' verdict on each run: the conformance suites' own oracles, plus counts of lost
and duplicated outputs.

Per run a dict ``{"failures": ["oracle: summary", ...], "lost", "duplicated", "serializable"}``:

* Fries: :func:`conformance.fries.oracles.judge` (schedule complete, conflict-serializable,
  FIFO channels, outputs equal the serial execution in the witness order, exactly once,
  states); ``serializable`` is its verdict on the run's schedule;
* O+: outputs equal the sequential reference's (as :mod:`conformance.oplus_suite` compares
  them); an engine crash is an ``engine`` failure;
* DGS: :func:`conformance.dgs_suite.judge` (outputs equal ``spec(sort(u))``, processed trace,
  final state).

``lost`` = expected output records missing (multiset difference), ``duplicated`` = extra
copies of expected records (records that should not exist at all are the ``outputs``
oracle's, not counted here); both None when there is nothing to compare with (the engine
crashed, or a non-serializable Fries schedule has no serial execution).
"""

from __future__ import annotations

from collections import Counter
from typing import Any, Hashable, Iterable, Sequence


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
    from conformance.fries.engines import _outcome
    from conformance.fries.oracles import judge

    by_index = {result.scenario_index: result for result in results}
    runs = []
    for index, scenario in enumerate(scenarios):
        result = by_index.get(index)
        if result is None:
            runs.append(_run(["engine: no result for this scenario"], None))
            continue
        outcome = _outcome(scenario, result.outputs, result.schedule, result.states, result.delays_ms,
                           result.rejected, result.senders)
        judgement = judge(scenario, outcome)
        failures = [f"{f.oracle}: {f.summary}" for f in judgement.failures]
        counts = (lost_duplicated(judgement.expected.outputs.elements(), outcome.outputs)
                  if judgement.expected is not None else None)
        serializable = not any(f.oracle in ("serializable", "engine") for f in judgement.failures)
        runs.append(_run(failures, counts, serializable))
    return runs


def judge_oplus(drawn: Sequence[tuple[dict[str, Any], int]], observed: Sequence[Any]) -> list[dict[str, Any]]:
    """Judge O+ runs (rows or a :class:`~conformance.crashes.Crash` each) against the
    sequential reference."""
    from conformance.crashes import Crash
    from conformance.matcher import compare
    from conformance.oplus_suite import reference_rows

    runs = []
    for (case, _), got in zip(drawn, observed):
        if isinstance(got, Crash):
            runs.append(_run([f"engine: {got.explain()}"], None))
            continue
        expected = reference_rows(case, "sequential")
        mismatch = compare(expected, got)
        failures = [] if mismatch is None else ["outputs: differ from the sequential reference: "
                                                + mismatch.explain(str).splitlines()[0]]
        runs.append(_run(failures, lost_duplicated(expected, got)))
    return runs


def judge_dgs(drawn: Sequence[Any], observed: Sequence[Any]) -> list[dict[str, Any]]:
    """Judge DGS runs with :func:`conformance.dgs_suite.judge`."""
    from conformance.crashes import Crash
    from conformance.dgs_suite import judge
    from conformance.generators.dgs import program_of
    from spec.dgs.semantics import spec_run
    from spec.dgs.streams import sort_streams

    runs = []
    for case, seen in zip(drawn, observed):
        failures = [f"{oracle}: {text.splitlines()[0] if text else ''}" for oracle, text in judge(case, seen)]
        counts = None
        if not isinstance(seen, Crash):
            _, expected = spec_run(program_of(case.name), sort_streams(case.streams))
            counts = lost_duplicated([repr(x) for x in expected], [repr(x) for x in seen[0]])
        runs.append(_run(failures, counts))
    return runs
