"""The O+ suite's timing oracles: *when* and *where* Spark emitted each output.

The outputs oracle compares multisets, so an engine that emits a window one round late (a
``<`` for ``<=`` in the expiry test), or applies a rescale at the wrong boundary (outputs do
not depend on where a whole state moves), passes it. :mod:`spec.oplus.emission` defines the
round every output is due in and the instance that must emit it; the Spark O+ executor
reports ``(round, instance)`` for every row (``spark_impl.oplus.BatchResult.emitted``), and

* ``round``: the multiset of ``(row, round)`` equals :func:`spec.oplus.emission.emission_rounds`
  with the reference's sequential execution as the operator's meaning;
* ``instance``: every keyed row came from ``instance_of(key, parallelism in force in its round)``,
  and the executor applied exactly the reconfigurations that take effect
  (``BatchResult.applied``).

Both are judged only when the outputs oracle holds (otherwise the outputs difference is the
finding).

Every oracle answers with a :class:`~conformance.core.verdict.Verdict` (:func:`spark_verdicts`,
:func:`outputs_verdict`, :func:`timing_verdicts`); the suites read the oracle's name from it.
:func:`problem_text` is the text the reports and saved cases print (``[round] spark emitted
...``), and :func:`versus_sequential`, :func:`timing_problem` and :func:`spark_discrepancies`
give that text for callers that only print it.
"""

from __future__ import annotations

import json
from collections import Counter
from typing import Any, Sequence

from spec.oplus.emission import (
    applied_reconfigurations,
    emission_rounds,
    emitting_instance,
    parallelism_in_round,
    round_watermark,
    rounds,
)
from spec.oplus.scenario import Scenario, parse_scenario

from reference.oplus.operators.catalogue import to_row
from reference.oplus.run import execute

from conformance.core.crashes import Crash, describe
from conformance.core.matcher import compare
from conformance.core.protocols import Engine, Oracle
from conformance.core.verdict import OracleName, Verdict, fails, from_text, holds
from conformance.oplus.cases import SparkCase

Row = tuple[int, str, str]
"""``(ts, key, canonical JSON of the value)``."""

ENGINE_TAG = "[engine]"
ROUND_TAG = "[round]"
INSTANCE_TAG = "[instance]"
LATE_TAG = "[late]"
"""How the text of a failed verdict starts (:func:`problem_text`): ``[`` its oracle's name ``]``,
except for ``outputs``, whose text starts with who produced the outputs."""


def problem_text(verdict: Verdict | None) -> str | None:
    """The text the O+ reports, saved cases and replays print for a verdict: None when it
    held (or there is none), ``[oracle] explanation`` for a failure, the bare explanation for
    an ``outputs`` failure. Reports only: the oracle's name is read from the verdict."""
    if verdict is None or verdict.held:
        return None
    if verdict.oracle is OracleName.OUTPUTS:
        return verdict.explanation
    return f"[{verdict.name}] {verdict.explanation}"


def first_failure(verdicts: Sequence[Verdict]) -> Verdict | None:
    """The first verdict that did not hold, or None."""
    return next((v for v in verdicts if not v.held), None)


def as_rows(outputs: Sequence[dict[str, Any]]) -> list[Row]:
    """Scenario-format output rows as comparable tuples."""
    return [(int(r["ts"]), str(r["key"]), json.dumps(r["value"], sort_keys=True)) for r in outputs]


def rows_of(scenario: Scenario, mode: str, seed: int = 0) -> list[Row]:
    """The reference's rows of ``scenario`` in ``mode`` (emission order)."""
    return as_rows([to_row(o) for o in execute(scenario, mode, seed).outputs])


def sequential(scenario: Scenario) -> list[Row]:
    """The operator's meaning: the sequential reference's rows."""
    return rows_of(scenario, "sequential")


def timing_verdicts(case: dict[str, Any], per_round: int, rows: Sequence[Row],
                    emitted: Sequence[tuple[int, int]], applied: int | None = None) -> tuple[Verdict, ...]:
    """The ``round`` and ``instance`` oracles (module docstring), in the order judged: the
    number of reconfigurations applied (``instance``, when ``applied`` is given), every row in
    its due round (``round``), every keyed row from the instance that owns its key then
    (``instance``); judging stops at the first failure."""
    scenario = parse_scenario(case)
    reconfigurations = [(c.watermark, c.parallelism) for c in scenario.reconfigurations]
    marks = _watermarks(scenario, per_round)
    if applied is not None and applied != applied_reconfigurations(scenario, per_round):
        due_applied = applied_reconfigurations(scenario, per_round)
        return (fails(OracleName.EMITTING_INSTANCE,
                      f"spark applied {applied} reconfiguration(s), {due_applied} take effect (round watermarks "
                      f"{marks}, reconfigurations {reconfigurations})",
                      {"applied": applied, "take_effect": due_applied, "round_watermarks": marks,
                       "reconfigurations": reconfigurations}),)
    due = emission_rounds(scenario, per_round, sequential)
    got = Counter(zip(rows, (r for r, _ in emitted)))
    if got != due:
        late = sorted((got - due).elements(), key=lambda x: (x[1], x[0]))
        expected = sorted((due - got).elements(), key=lambda x: (x[1], x[0]))
        (row, r) = (late or expected)[0]
        should = [d for (x, d) in expected if x == row] or [d for (x, d) in due if x == row]
        wrong = [g for (x, g) in late if x == row]
        return (fails(OracleName.EMISSION_ROUND,
                      f"spark emitted {show(row)} in round {wrong[0] if wrong else '?'}, due in round "
                      f"{should[0] if should else '?'} (the first round whose watermark passes it: round watermarks "
                      f"{marks}, {per_round} items per round); {len(late)} row(s) in a wrong round",
                      {"row": list(row), "emitted_in": wrong[0] if wrong else None,
                       "due_in": should[0] if should else None, "round_watermarks": marks,
                       "items_per_round": per_round, "rows_in_a_wrong_round": len(late)}),)
    in_round = holds(OracleName.EMISSION_ROUND, "every row was emitted in the round it is due in")
    for row, (r, instance) in zip(rows, emitted):
        owner = emitting_instance(scenario, per_round, row[1], r)
        if owner is not None and owner != instance:
            parallelism = parallelism_in_round(scenario, per_round, r)
            return (in_round, fails(
                OracleName.EMITTING_INSTANCE,
                f"spark emitted {show(row)} from instance {instance} in round {r}; key {row[1]!r} belongs to "
                f"instance {owner} of {parallelism} in that round (round watermarks {marks}, reconfigurations "
                f"{reconfigurations})",
                {"row": list(row), "round": r, "instance": instance, "owner": owner, "parallelism": parallelism,
                 "round_watermarks": marks, "reconfigurations": reconfigurations}))
    return (in_round, holds(OracleName.EMITTING_INSTANCE, "every keyed row came from the instance owning its key"))


def timing_problem(case: dict[str, Any], per_round: int, rows: Sequence[Row],
                   emitted: Sequence[tuple[int, int]], applied: int | None = None) -> str | None:
    """The text of the first failed :func:`timing_verdicts` (:func:`problem_text`: starting
    with :data:`ROUND_TAG` or :data:`INSTANCE_TAG`), None when they hold."""
    return problem_text(first_failure(timing_verdicts(case, per_round, rows, emitted, applied)))


def _watermarks(scenario: Scenario, per_round: int) -> list[float]:
    return [round_watermark(scenario, per_round, r) for r in range(rounds(scenario, per_round))]


def show(row: Row) -> str:
    ts, key, value = row
    return f"(ts {ts}, key {key!r}, value {value})"


def outputs_verdict(case: dict[str, Any], got: list[Row], who: str) -> Verdict:
    """The ``outputs`` oracle: ``got`` equals the sequential reference's rows as a multiset
    (else the first missing and unexpected rows as the witness); an ``engine`` failure when
    the reference itself crashed."""
    try:
        expected = sequential(parse_scenario(case))
    except Exception as error:  # noqa: BLE001 - the oracle itself crashed: still a finding
        return from_text(OracleName.ENGINE, f"the sequential reference crashed: {describe(error)}",
                         {"error": describe(error)})
    mismatch = compare(expected, got)
    if mismatch is None:
        return holds(OracleName.OUTPUTS, f"{who} outputs equal the sequential reference")
    return from_text(OracleName.OUTPUTS, f"{who} outputs differ from the sequential reference:\n"
                     f"{mismatch.explain(show)}", mismatch.witness(show))


def versus_sequential(case: dict[str, Any], got: list[Row], who: str) -> str | None:
    """The text of :func:`outputs_verdict` (:func:`problem_text`), None when it holds."""
    return problem_text(outputs_verdict(case, got, who))


def crash_verdict(crash: Crash, who: str = "") -> Verdict:
    """The ``engine`` oracle's failure for a run that raised or hung (``who``: the run, named
    before the explanation)."""
    return from_text(OracleName.ENGINE, f"{who}: {crash.explain()}" if who else crash.explain(),
                     {"error": crash.message, "alone": crash.alone})


SparkSeen = tuple[list[Row], list[tuple[int, int]], int | None]
"""Spark's rows of one case, parallel to them the ``(round, instance)`` that emitted each, and
the number of reconfigurations it applied (None: not reported, not judged)."""


def spark_verdicts(case: SparkCase, got: SparkSeen | Crash) -> tuple[Verdict, ...]:
    """The O+ Spark oracle (:class:`~conformance.core.protocols.Oracle`): ``engine``, then
    ``outputs`` (the sequential reference's rows), then when they hold the emission
    :func:`timing_verdicts`; judging stops at the first failure."""
    if isinstance(got, Crash):
        return (crash_verdict(got),)
    scenario, per_round = case
    rows, emitted, applied = got
    outputs = outputs_verdict(scenario, rows, "spark")
    ran = holds(OracleName.ENGINE, "the engine ran the case")
    if not outputs.held:
        return (outputs,) if outputs.oracle is OracleName.ENGINE else (ran, outputs)
    return (ran, outputs) + timing_verdicts(scenario, per_round, rows, emitted, applied)


SparkEngine = Engine[SparkCase, "SparkSeen | Crash"]
"""An O+ Spark engine (:class:`~conformance.core.protocols.Engine`): batch, live or disordered."""

ORACLE: Oracle[SparkCase, "SparkSeen | Crash"] = spark_verdicts
"""The O+ Spark oracle, as :class:`~conformance.core.protocols.Oracle`."""


def spark_judged(cases: Sequence[SparkCase], engine: SparkEngine) -> list[tuple[Verdict, ...]]:
    """Every case through ``engine`` (one call), judged by :func:`spark_verdicts`."""
    return [spark_verdicts(case, got) for case, got in zip(cases, engine(cases))]


def spark_discrepancies(cases: Sequence[SparkCase], engine: SparkEngine) -> list[str | None]:
    """Per case, the text of the first failed verdict of :func:`spark_judged`
    (:func:`problem_text`), None when every oracle holds."""
    return [problem_text(first_failure(verdicts)) for verdicts in spark_judged(cases, engine)]
