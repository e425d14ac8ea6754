"""Small local checker for the Spark tests: conflict-serializability of a schedule (Fries
Def. 4.6-4.9 by the precedence graph) and equality with the spec's serial execution.

Deliberately tiny and independent of reference/ (the full differential suite is in
conformance/)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

from spec.fries.scenario import Scenario, ingestion_order, scenario_from_json, serial_execution
from spec.fries.schedule import Schedule


def serial_order(scenario: Scenario, schedule: Schedule) -> list[str] | None:
    """A serial order conflict-equivalent to ``schedule``, or None if there is none."""
    txns = [t.txn for t in ingestion_order(scenario)] + [f"R{j + 1}" for j in range(len(scenario.reconfigurations))]
    after: dict[str, set[str]] = {t: set() for t in txns}
    for log in schedule.logs.values():
        for i, first in enumerate(log):
            for second in log[i + 1:]:
                if first.txn != second.txn and (first.update or second.update):
                    if first.txn.endswith(":final"):
                        return None  # a flush transaction before an update: not allowed
                    if second.txn.endswith(":final"):
                        continue
                    after[first.txn].add(second.txn)
    indegree = Counter(t for targets in after.values() for t in targets)
    ready = [t for t in txns if indegree[t] == 0]
    order: list[str] = []
    while ready:
        t = ready.pop(0)
        order.append(t)
        for nxt in sorted(after[t], key=txns.index):
            indegree[nxt] -= 1
            if indegree[nxt] == 0:
                ready.append(nxt)
    return order if len(order) == len(txns) else None


def problems(scenario: Scenario, result: Any) -> list[str]:
    """Why ``result`` (a RunResult) is not a correct run of ``scenario`` (empty if it is)."""
    order = serial_order(scenario, result.schedule)
    if order is None:
        return ["schedule is not conflict-serializable"]
    expected = serial_execution(scenario, order)
    found = []
    if Counter(result.outputs) != expected.outputs:
        found.append(f"outputs differ from serial order {order}: {sorted(result.outputs)} vs "
                     f"{sorted(expected.outputs.elements())}")
    if dict(result.states) != dict(expected.states):
        found.append(f"states differ: {result.states} vs {dict(expected.states)}")
    return found


def random_scenario(rng: random.Random, *, restarts: bool = False, costly: bool = True) -> Scenario:
    """A small random scenario (validated by the spec's parser)."""
    kinds = ["one-to-one", "one-to-one", "one-to-many", "replicate", "blocking"]
    names = ["S"]
    ops = [{"name": "S", "kind": "source"}]
    edges: list[list[str]] = []
    functions: dict[str, Any] = {}
    for i in range(rng.randint(2, 5)):
        name = "ABCDEFG"[i]
        kind = rng.choice(kinds)
        # no `unique` claims: a random claim is usually false for the data (a replicate's
        # outputs are not unique) and the uniqueness pruning is only sound when it holds;
        # the rule itself is tested in test_spark_mcs.py
        ops.append({"name": name, "kind": kind})
        for parent in rng.sample(names, k=min(len(names), rng.choice([1, 1, 2]))):
            edges.append([parent, name])
        names.append(name)
        functions[name] = _function(rng, kind)
    kind_of = {o["name"]: o["kind"] for o in ops}
    n = rng.randint(6, 14)
    reconfigurable = names[1:]
    reconfigurations = []
    at = 0
    for _ in range(rng.choice([1, 1, 2])):
        at = rng.randint(at, n)
        chosen = rng.sample(reconfigurable, k=rng.randint(1, min(3, len(reconfigurable))))
        reconfigurations.append({"at": at, "updates": {
            o: {"function": _function(rng, kind_of[o]), "state": {"mul": rng.randint(0, 3), "add": rng.randint(-2, 2)}}
            for o in chosen}})
    timing: dict[str, Any] = {"seed": rng.randint(0, 1000), "fcm_delay": [0, rng.choice([0, 100, 400])]}
    if costly:
        timing["operator_cost"] = {o: rng.choice([0, 0, 5, 15]) for o in reconfigurable}
    if restarts:
        timing["restarts"] = [rng.randint(1, n)]
    return scenario_from_json({
        "dataflow": {"operators": ops, "edges": edges},
        "functions": functions,
        "parallelism": {o: rng.choice([1, 1, 2]) for o in reconfigurable},
        "sources": {"S": [{"key": rng.randint(0, 5), "value": rng.randint(0, 9)} for _ in range(n)]},
        "reconfigurations": reconfigurations,
        "timing": timing,
    })


def _function(rng: random.Random, kind: str) -> dict[str, Any]:
    if kind == "replicate":
        return {"op": "replicate"}
    if kind == "blocking":
        return {"op": "sum", "mul": rng.randint(1, 3), "add": rng.randint(0, 5)}
    choices = ["map", "filter"] + (["fanout", "fanout"] if kind == "one-to-many" else [])
    op = rng.choice(choices)
    if op == "map":
        return {"op": "map", "mul": rng.randint(1, 4), "add": rng.randint(0, 9)}
    if op == "filter":
        return {"op": "filter", "mod": rng.randint(1, 3), "rem": 0}
    return {"op": "fanout", "copies": rng.randint(1, 3)}
