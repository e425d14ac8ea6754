"""Chain-shaped Fries jobs run on the pure-Python Spark stand-in, and how tests judge them.

Tests of the Fries executor's driver, stages and bookkeeping build small jobs ``S -> O1 ->
... -> O<depth>`` (:func:`chain_json`), step an executor on
:class:`conformance.standin.spark.LocalSpark` to the end (:func:`run_to_end`) and judge its
result with every oracle of :mod:`conformance.fries.oracles` (:func:`conformance_problem`).
:class:`SleepRecorder` stands in for the task module's ``time`` (the tasks' processing cost is
a ``time.sleep``), so a test records the costs or acts inside a running batch.
"""

from __future__ import annotations

import time
from typing import Any

from conformance.fries.oracles import judge
from conformance.fries.outcome import outcome_of

BOUND = 40
"""Batches a chain job may take (each needs at most about 12)."""


def chain_json(depth: int, count: int, *, at: int, restarts: tuple[int, ...] = ()) -> dict[str, Any]:
    """A scenario: source ``S`` -> ``O1`` -> ... -> ``O<depth>``, ``count`` tuples on 3 keys,
    a request at ``at`` updating ``O1`` (order-sensitive folds at both ends)."""
    names = [f"O{i}" for i in range(1, depth + 1)]
    functions: dict[str, Any] = {name: {"op": "map", "mul": 1, "add": 1} for name in names}
    functions[names[0]] = {"op": "fold", "mul": 3}
    functions[names[-1]] = {"op": "fold", "mul": 5}
    return {
        "dataflow": {"operators": [{"name": "S", "kind": "source"}]
                     + [{"name": name, "kind": "one-to-one"} for name in names],
                     "edges": [[a, b] for a, b in zip(["S", *names], names)]},
        "functions": functions,
        "sources": {"S": [{"key": i % 3, "value": 7 * i + 1} for i in range(count)]},
        "reconfigurations": [{"at": at, "updates": {names[0]: {"function": {"op": "fold", "mul": 2},
                                                               "state": {"mul": 1, "add": 4}}}}],
        "parallelism": {names[0]: 2},
        "timing": {"restarts": list(restarts)},
    }


def run_to_end(ex: Any, bound: int = BOUND) -> bool:
    """Step ``ex`` until every job is done, at most ``bound`` batches; whether it finished."""
    for _ in range(bound):
        if ex.done():
            return True
        ex.step()
    return bool(ex.done())


def conformance_problem(name: str, scenario: Any, result: Any, rejected: Any = None) -> str | None:
    """Every oracle of :mod:`conformance.fries.oracles` on ``result`` (a ``RunResult``), as
    ``"<name>: <first failure>"``, or None; ``rejected``: the rejection messages to judge
    (default: the result's own)."""
    verdict = judge(scenario, outcome_of(scenario, result.outputs, result.schedule, result.states, result.delays_ms,
                                         result.rejected if rejected is None else rejected, result.senders))
    return None if verdict.ok else f"{name}: {verdict.failures[0].summary}"


class SleepRecorder:
    """The ``time`` module as the task module sees it in a test: ``sleep`` records its
    argument instead of sleeping; everything else is the real module's."""

    def __init__(self) -> None:
        self.slept: list[float] = []

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name)
