"""Alignment probes: Fries cases built so that a component member *must* align.

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

from dataclasses import replace
from typing import Any

from hypothesis import strategies as st

from spec.fries.scenario import Reconfiguration, Scenario, SourceTuple, scenario_from_json

#: FCM delivery delays (ms on Spark, time units in the simulator): wide, so heads of one
#: component switch micro-batches apart.
PROBE_FCM_DELAY = (0.0, 3000.0)
#: Per-tuple cost of the head operator ``X`` (ms on Spark).
PROBE_HEAD_COST = 40.0


def _linear(draw: st.DrawFn) -> dict[str, int]:
    return {"mul": draw(st.integers(1, 5)), "add": draw(st.integers(0, 9))}


def _function(draw: st.DrawFn) -> dict[str, Any]:
    # half the time an order-sensitive fold: a member that replays its held-back
    # input out of channel order then emits other values (spec.fries.consistency)
    if draw(st.booleans()):
        return {"op": "fold", "mul": draw(st.sampled_from([2, 3, -1]))}
    return {"op": "map", **_linear(draw)}


@st.composite
def alignment_probes(draw: st.DrawFn) -> Scenario:
    """One alignment probe (module docstring)."""
    workers = draw(st.integers(2, 3))
    with_z = draw(st.booleans())
    at = draw(st.integers(6, 12))
    total = at + draw(st.integers(24, 32))
    # distinct keys, a multiple of the workers: any 4 consecutive tuples (a micro-batch) reach
    # every worker of X, so every head keeps sending while the others switch
    spread = workers * draw(st.integers(1, 2))
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


def with_second_request(probe: Scenario, after: int = 12) -> Scenario:
    """``probe`` with a second request reconfiguring the same operators again ``after`` tuples
    after the first (the source grows by ``after`` tuples of the same key pattern, so data
    still reaches every head while the second request's heads switch). A member must align
    afresh for it: markers of the first request do not count for the second."""
    (first,) = probe.reconfigurations
    (name, tuples), = probe.sources.items()
    extra = tuple(SourceTuple(f"{name}:{len(tuples) + i}", t.key, t.value)
                  for i, t in enumerate(tuples[:after]))
    return replace(probe, sources={name: tuples + extra},
                   reconfigurations=(first, Reconfiguration(first.at + after, first.updates)))


#: The MCS pruning shapes of Fries Alg. 4 a run must contain (:func:`pruning_probes`).
PRUNING_SHAPES = ("one-to-many", "replicate", "uniqueness")


@st.composite
def pruning_probes(draw: st.DrawFn, shape: str, nested: bool | None = None) -> Scenario:
    """A case whose MCS depends on Alg. 4's pruning rules (``shape`` in :data:`PRUNING_SHAPES`),
    timed like an alignment probe (wide FCM delays, a per-tuple cost at the shared ancestor,
    a long stream on 2-3 workers), one request reconfiguring ``A`` and ``B``:

    * ``one-to-many``: ``S -> F -> {A, B}``, ``F`` a non-unique fan-out of 2 copies (one to
      each of ``A``, ``B``): ``F`` must be synchronised (a transaction reaches both); with
      ``nested`` (drawn when None) ``S -> E -> F -> ...``, ``E`` one-to-many by kind (a map):
      the EARLIEST one-to-many ancestor ``E`` is the one synchronised (Alg. 3);
    * ``replicate``: ``S -> P -> {A, B}``, ``P`` replicates to both: both out-edges lead to a
      reconfigured operator, so the edge-wise rule must NOT prune ``P``;
    * ``uniqueness``: ``S -> X -> U -> {A, B}`` (``X`` one-to-many by kind but emitting one
      tuple, ``U`` flagged unique) or ``S -> U -> {A, B}`` with ``U`` itself one-to-many and
      unique: pruned (a transaction reaches only one of ``A``, ``B``), ``A`` and ``B`` switch
      independently and the run must still be serializable."""
    if shape not in PRUNING_SHAPES:
        raise ValueError(f"unknown pruning shape {shape!r} (expected one of {PRUNING_SHAPES})")
    workers = draw(st.integers(2, 3))
    at = draw(st.integers(4, 10))
    total = at + draw(st.integers(20, 28))
    spread = workers * draw(st.integers(1, 2))  # every micro-batch reaches every worker
    first = draw(st.integers(0, 5))
    operators: list[dict[str, Any]] = [{"name": "S", "kind": "source"}]
    functions: dict[str, Any] = {}
    if shape == "one-to-many":
        operators.append({"name": "F", "kind": "one-to-many"})
        functions["F"] = {"op": "fanout", "copies": 2}
        edges, shared = [["S", "F"], ["F", "A"], ["F", "B"]], "F"
        if draw(st.booleans()) if nested is None else nested:
            operators.append({"name": "E", "kind": "one-to-many"})
            functions["E"] = {"op": "map", **_linear(draw)}
            edges = [["S", "E"], ["E", "F"], *edges[1:]]
    elif shape == "replicate":
        operators.append({"name": "P", "kind": "replicate"})
        functions["P"] = {"op": "replicate"}
        edges, shared = [["S", "P"], ["P", "A"], ["P", "B"]], "P"
    elif draw(st.booleans()):
        operators += [{"name": "X", "kind": "one-to-many"}, {"name": "U", "kind": "one-to-one", "unique": True}]
        functions["X"], functions["U"] = _function(draw), _function(draw)
        edges, shared = [["S", "X"], ["X", "U"], ["U", "A"], ["U", "B"]], "X"
    else:
        operators.append({"name": "U", "kind": "one-to-many", "unique": True})
        functions["U"] = _function(draw)
        edges, shared = [["S", "U"], ["U", "A"], ["U", "B"]], "U"
    operators += [{"name": "A", "kind": "one-to-one"}, {"name": "B", "kind": "one-to-one"}]
    functions["A"], functions["B"] = _function(draw), _function(draw)
    updates = {m: {"function": _function(draw), "state": _linear(draw)} for m in ("A", "B")}
    return scenario_from_json({
        "dataflow": {"operators": operators, "edges": edges},
        "functions": functions,
        "parallelism": {shared: workers},
        "sources": {"S": [{"key": first + i % spread, "value": draw(st.integers(0, 20))} for i in range(total)]},
        "reconfigurations": [{"at": at, "updates": updates}],
        "timing": {"seed": draw(st.integers(0, 2**16)), "operator_cost": {shared: PROBE_HEAD_COST},
                   "fcm_delay": list(PROBE_FCM_DELAY)},
    }, f"pruning probe ({shape})")


def pruning_shape(scenario: Scenario) -> str | None:
    """Which pruning rule decides a one-to-many ancestor of the reconfigured operators (the
    first found: ``uniqueness``, ``replicate``, ``one-to-many`` = kept because no rule
    applies), or None when no reconfigured operator has a one-to-many ancestor."""
    flow = scenario.dataflow
    for request in scenario.reconfigurations:
        targets = set(request.updates)
        for name in sorted(targets):
            for a in sorted(_ancestors(flow, name)):
                kind = flow.kind(a)
                if not kind.is_one_to_many:
                    continue
                if flow.operator(a).unique or any(flow.operator(u).unique for u in flow.descendants(a)
                                                  if u not in targets):
                    return "uniqueness"
                if kind.value == "replicate":
                    return "replicate"
                return "one-to-many"
    return None


def _ancestors(flow: Any, name: str) -> set[str]:
    seen: set[str] = set()
    todo = list(flow.parents(name))
    while todo:
        node = todo.pop()
        if node not in seen:
            seen.add(node)
            todo.extend(flow.parents(node))
    return seen


def is_probe_shaped(scenario: Scenario) -> bool:
    """Does ``scenario`` have a reconfigured member with several in-component parent objects
    (the shape a probe guarantees)? Used to count the feature in reports."""
    flow = scenario.dataflow
    for request in scenario.reconfigurations:
        for name in request.updates:
            if any(p in request.updates and scenario.workers(p) > 1 for p in flow.parents(name)):
                return True
    return False
