"""STRETCH O+ windowed operators on PySpark, with elastic rescale at a watermark.

Public API: :func:`run_scenario` (what ``streamproof oplus --engine spark`` calls),
:func:`run_scenarios` (many scenarios in the same Spark jobs, for tests and the conformance
suite) and :func:`run_batch` (the same plus timings and the handovers, for benchmarks).
Scenarios are ``spec.oplus.scenario`` objects (or their JSON); outputs are the scenario
format's ``{"ts", "key", "value"}`` rows, unsorted. Design: docs/spark-dgs-oplus.md.
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

from spark_impl.faults import OPLUS_FAULTS
from spark_impl.oplus.driver import BatchResult, Handover, as_scenarios, run_batch
from spark_impl.session import get_or_create_session

__all__ = ["OPLUS_FAULTS", "ROUNDS", "BatchResult", "Handover", "run_batch", "run_scenario", "run_scenarios"]


def run_scenarios(spark: Any, scenarios: Sequence[Any], *, faults: Iterable[str] = (),
                  items_per_round: int | Sequence[int] = 2) -> list[list[dict[str, Any]]]:
    """The output rows of every scenario, in order (one batch of Spark jobs for all;
    ``items_per_round``: one number, or one per scenario)."""
    return run_batch(spark, scenarios, faults=faults, items_per_round=items_per_round).rows


ROUNDS = 16
"""How many rounds :func:`run_scenario` cuts a scenario into by default (each round is a Spark
job of a few hundred milliseconds; a rescale happens at a round boundary)."""


def run_scenario(scenario: Any, *, spark: Any = None, faults: Iterable[str] = (),
                 items_per_round: int | None = None) -> list[dict[str, Any]]:
    """The output rows of one scenario on the shared (or a new local) SparkSession; by
    default the lists are cut into about :data:`ROUNDS` rounds (at least 2 items per round)."""
    (parsed,) = as_scenarios([scenario])
    if items_per_round is None:
        longest = max((len(items) for items in parsed.inputs), default=0)
        items_per_round = max(2, -(-longest // ROUNDS))
    if spark is None:

        spark = get_or_create_session(app_name="streamproof-oplus")
    return run_scenarios(spark, [parsed], faults=faults, items_per_round=items_per_round)[0]
