"""Alignment probes: Fries cases built so that a component member *must* align (issue 8).

Alignment (Fries Alg. 3, the non-head members of a component) only matters when a member has
old-version and new-version input at the same time: its in-component parents switched at
different moments, or a parent switched between two of the tuples it sent in one batch. On
Spark most random cases never get there - a head usually receives its FCM before its task
starts, so every tuple of that batch leaves it new and a member that does not align still
looks right. A probe makes both situations likely on every run, with no fault knowledge:

* the dataflow is ``S -> X -> Y`` (plus an optional one-to-one ``Z`` after ``Y``) and ONE
  request reconfigures ``X`` and ``Y`` (and ``Z`` when present) after ``at`` source tuples;
* ``X`` has 2 or 3 workers (all-to-all edges to ``Y``, so ``Y``'s object has several
  in-component parents, the heads ``X#i``) and keys cover every worker in every batch;
* control messages are spread over seconds (``fcm_delay`` = (0, 3000) ms: the heads switch
  micro-batches apart, while ``Y`` keeps receiving the slower heads' old-version tuples), and
  ``X`` has a per-tuple cost (an FCM that lands while a head works splits its batch);
* the stream is long enough (``at`` + 24 or more tuples) that data keeps flowing through
  every head after the first one switched.

A correct executor stays serializable (``Y`` holds back the early heads' new-version input
until every head's marker is in); one whose member does not align lets a transaction pass an
unswitched head and the switched member: a cycle ``T -> R -> T`` that the ``serializable``
oracle reports. Functions, state transformations, keys and values are drawn.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from spec.fries.scenario import Scenario, scenario_from_json

#: FCM delivery delays (ms on Spark, time units in the simulator): wide, so heads of one
#: component switch micro-batches apart.
PROBE_FCM_DELAY = (0.0, 3000.0)
#: Per-tuple cost of the head operator ``X`` (ms on Spark).
PROBE_HEAD_COST = 40.0


def _linear(draw: st.DrawFn) -> dict[str, int]:
    return {"mul": draw(st.integers(1, 5)), "add": draw(st.integers(0, 9))}


def _function(draw: st.DrawFn) -> dict[str, Any]:
    return {"op": "map", **_linear(draw)}


@st.composite
def alignment_probes(draw: st.DrawFn) -> Scenario:
    """One alignment probe (module docstring)."""
    workers = draw(st.integers(2, 3))
    with_z = draw(st.booleans())
    at = draw(st.integers(6, 12))
    total = at + draw(st.integers(24, 32))
    spread = draw(st.integers(workers, 6))          # distinct keys, every worker has some
    first = draw(st.integers(0, 5))
    operators = [{"name": "S", "kind": "source"}, {"name": "X", "kind": "one-to-one"},
                 {"name": "Y", "kind": "one-to-one"}]
    edges = [["S", "X"], ["X", "Y"]]
    members = ["X", "Y"]
    if with_z:
        operators.append({"name": "Z", "kind": "one-to-one"})
        edges.append(["Y", "Z"])
        members.append("Z")
    updates = {m: {"function": _function(draw), "state": _linear(draw)} for m in members}
    return scenario_from_json({
        "dataflow": {"operators": operators, "edges": edges},
        "functions": {m: _function(draw) for m in members},
        "parallelism": {"X": workers},
        "sources": {"S": [{"key": first + i % spread, "value": draw(st.integers(0, 20))} for i in range(total)]},
        "reconfigurations": [{"at": at, "updates": updates}],
        "timing": {"seed": draw(st.integers(0, 2**16)), "operator_cost": {"X": PROBE_HEAD_COST},
                   "fcm_delay": list(PROBE_FCM_DELAY)},
    }, "alignment probe")


def is_probe_shaped(scenario: Scenario) -> bool:
    """Does ``scenario`` have a reconfigured member with several in-component parent objects
    (the shape a probe guarantees)? Used to count the feature in reports."""
    flow = scenario.dataflow
    for request in scenario.reconfigurations:
        for name in request.updates:
            if any(p in request.updates and scenario.workers(p) > 1 for p in flow.parents(name)):
                return True
    return False
