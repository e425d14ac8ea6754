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

from conformance.core.crashes import Crash, Guard, describe
from conformance.core.matcher import compare
from conformance.oplus.cases import SparkCase

Row = tuple[int, str, str]
"""``(ts, key, canonical JSON of the value)``."""

ROUND_TAG = "[round]"
INSTANCE_TAG = "[instance]"


def as_rows(outputs: Sequence[dict[str, Any]]) -> list[Row]:
    """Scenario-format output rows as comparable tuples."""
    return [(int(r["ts"]), str(r["key"]), json.dumps(r["value"], sort_keys=True)) for r in outputs]


def rows_of(scenario: Scenario, mode: str, seed: int = 0) -> list[Row]:
    """The reference's rows of ``scenario`` in ``mode`` (emission order)."""
    return as_rows([to_row(o) for o in execute(scenario, mode, seed).outputs])


def sequential(scenario: Scenario) -> list[Row]:
    """The operator's meaning: the sequential reference's rows."""
    return rows_of(scenario, "sequential")


def timing_problem(case: dict[str, Any], per_round: int, rows: Sequence[Row],
                   emitted: Sequence[tuple[int, int]], applied: int | None = None) -> str | None:
    """None when every row was emitted in its due round by its instance (and ``applied``, when
    given, is the number of reconfigurations that take effect), else the first difference in
    words (starting with :data:`ROUND_TAG` or :data:`INSTANCE_TAG`)."""
    scenario = parse_scenario(case)
    if applied is not None and applied != applied_reconfigurations(scenario, per_round):
        return (f"{INSTANCE_TAG} spark applied {applied} reconfiguration(s), "
                f"{applied_reconfigurations(scenario, per_round)} take effect (round watermarks "
                f"{_watermarks(scenario, per_round)}, reconfigurations "
                f"{[(c.watermark, c.parallelism) for c in scenario.reconfigurations]})")
    due = emission_rounds(scenario, per_round, sequential)
    got = Counter(zip(rows, (r for r, _ in emitted)))
    if got != due:
        late = sorted((got - due).elements(), key=lambda x: (x[1], x[0]))
        expected = sorted((due - got).elements(), key=lambda x: (x[1], x[0]))
        (row, r) = (late or expected)[0]
        should = [d for (x, d) in expected if x == row] or [d for (x, d) in due if x == row]
        wrong = [g for (x, g) in late if x == row]
        return (f"{ROUND_TAG} spark emitted {show(row)} in round {wrong[0] if wrong else '?'}, due in round "
                f"{should[0] if should else '?'} (the first round whose watermark passes it: round watermarks "
                f"{_watermarks(scenario, per_round)}, {per_round} items per round); "
                f"{len(late)} row(s) in a wrong round")
    for row, (r, instance) in zip(rows, emitted):
        owner = emitting_instance(scenario, per_round, row[1], r)
        if owner is not None and owner != instance:
            return (f"{INSTANCE_TAG} spark emitted {show(row)} from instance {instance} in round {r}; key "
                    f"{row[1]!r} belongs to instance {owner} of "
                    f"{parallelism_in_round(scenario, per_round, r)} in that round (round watermarks "
                    f"{_watermarks(scenario, per_round)}, reconfigurations "
                    f"{[(c.watermark, c.parallelism) for c in scenario.reconfigurations]})")
    return None


def _watermarks(scenario: Scenario, per_round: int) -> list[float]:
    return [round_watermark(scenario, per_round, r) for r in range(rounds(scenario, per_round))]


def show(row: Row) -> str:
    ts, key, value = row
    return f"(ts {ts}, key {key!r}, value {value})"


def versus_sequential(case: dict[str, Any], got: list[Row], who: str) -> str | None:
    """The ``outputs`` oracle: None when ``got`` equals the sequential reference's rows as a
    multiset, else the first missing and unexpected rows (``[engine] ...`` when the reference
    itself crashed)."""
    try:
        expected = sequential(parse_scenario(case))
    except Exception as error:  # noqa: BLE001 - the oracle itself crashed: still a finding
        return f"{ENGINE_TAG} the sequential reference crashed: {describe(error)}"
    mismatch = compare(expected, got)
    if mismatch is None:
        return None
    return f"{who} outputs differ from the sequential reference:\n{mismatch.explain(show)}"


ENGINE_TAG = "[engine]"
"""How an explanation starts when the engine crashed (the ``engine`` oracle)."""




SparkSeen = tuple[list[Row], list[tuple[int, int]], int | None]
"""Spark's rows of one case, parallel to them the ``(round, instance)`` that emitted each, and
the number of reconfigurations it applied (None: not reported, not judged)."""


def spark_discrepancies(cases: Sequence[SparkCase], engine: Guard[SparkCase, SparkSeen]) -> list[str | None]:
    """Per case: None when Spark's outputs equal the sequential reference's, each was emitted in
    the round it is due in and by the instance that owns its key then
    (:func:`timing_problem`), else the first difference."""
    problems: list[str | None] = []
    for (case, per_round), got in zip(cases, engine(cases)):
        if isinstance(got, Crash):
            problems.append(f"{ENGINE_TAG} {got.explain()}")
            continue
        rows, emitted, applied = got
        problems.append(versus_sequential(case, rows, "spark")
                        or timing_problem(case, per_round, rows, emitted, applied))
    return problems


def oracle_of(problem: str) -> str:
    """The oracle a problem of this module names (``engine``, ``round``, ``instance``, else ``outputs``)."""
    for tag, oracle in ((ENGINE_TAG, "engine"), (ROUND_TAG, "round"), (INSTANCE_TAG, "instance")):
        if problem.startswith(tag):
            return oracle
    return "outputs"
