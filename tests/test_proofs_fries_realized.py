"""The counterexamples Z3 finds are realisable: the reference simulator, running the
witness dataflow under the scheduler Z3 blamed, produces a non-serializable schedule for some
timing, and the full Fries scheduler (Alg. 4) never does on the same dataflow. This ties the
schedule model of proofs/fries/lemmas.py to the executable semantics."""

from __future__ import annotations

import random
from typing import Any

import pytest

from proofs import z3util as z
from proofs.fries import lemmas as L
from proofs.fries.dag import KINDS, SymbolicDag
from proofs.fries.mcs import ALG2, Variant
from proofs.fries.modelcheck.configs import Config
from proofs.fries.modelcheck.control import build_objects, control_for
from proofs.fries.modelcheck.search import explore
from proofs.fries.witness import pin_dataflow
from reference.fries.serializability import check_serializability
from reference.fries.simulator import simulate
from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.scenario import scenario_from_json

FUNCTION = {"one-to-one": {"op": "map", "mul": 1, "add": 0},
            "one-to-many": {"op": "fanout", "copies": 2},
            "replicate": {"op": "replicate"},
            "blocking": {"op": "sum", "mul": 1, "add": 0}}
NEW_FUNCTION = {"one-to-one": {"op": "map", "mul": 2, "add": 1},
                "one-to-many": {"op": "map", "mul": 3, "add": 0},
                "replicate": {"op": "replicate"},
                "blocking": {"op": "sum", "mul": 2, "add": 0}}


def scenario_for(witness: dict[str, Any], seed: int) -> Any:
    """A scenario on the witness dataflow: a few source tuples, the witness's
    reconfiguration in the middle, random channel and control-message delays."""
    ops = witness["dataflow"]["operators"]
    kinds = {op["name"]: op["kind"] for op in ops}
    return scenario_from_json({
        "dataflow": witness["dataflow"],
        "functions": {n: FUNCTION[k] for n, k in kinds.items() if k != "source"},
        "sources": {n: [{"key": i, "value": i + 1} for i in range(8)]
                    for n, k in kinds.items() if k == "source"},
        "reconfigurations": [{"at": 3, "updates": {
            n: {"function": NEW_FUNCTION[kinds[n]]} for n in witness["reconfigured"]}}],
        "timing": {"seed": seed, "channel_delay": [0, 6], "fcm_delay": [0, 10],
                   "operator_cost": {n: 1.0 for n, k in kinds.items() if k != "source"}},
    })


@pytest.mark.parametrize("variant, scheduler, options", [
    (None, "naive", {}),
    (ALG2, "fries", {"one_to_many": False}),
])
def test_z3_counterexample_is_realised_by_the_simulator(
        variant: Variant | None, scheduler: str, options: dict[str, bool]) -> None:
    finding = L.run_cases(L.non_serializable(4, KINDS, variant, reconfigurable_sources=False), 60_000)
    assert finding.status == "counterexample"
    witness = finding.witness
    # the model checker explores every interleaving of the witness dataflow, unique operators
    # included (their property is an assumption of the model, not a function of the catalogue)
    config = Config(Dataflow.from_json(witness["dataflow"]), {},
                    frozenset(witness["reconfigured"]))
    objects = build_objects(config)
    blamed = "naive" if variant is None else "fries-alg2"
    assert explore(objects, control_for(blamed, objects)).counterexample is not None
    assert explore(objects, control_for("fries", objects)).counterexample is None
    if any(op["unique"] for op in witness["dataflow"]["operators"]):
        # the simulator's scenario catalogue has no function with the uniqueness property:
        # run it on the same dataflow with the flags cleared, where Alg. 4 may prune less
        witness = {**witness, "dataflow": {**witness["dataflow"], "operators": [
            {**op, "unique": False} for op in witness["dataflow"]["operators"]]}}
    broken = fixed = 0
    for seed in range(40):
        scenario = scenario_for(witness, seed)
        if not check_serializability(simulate(scenario, scheduler, **options).schedule).serializable:
            broken += 1
        if not check_serializability(simulate(scenario, "fries").schedule).serializable:
            fixed += 1
    assert broken > 0, "no timing realised Z3's counterexample"
    assert fixed == 0


def random_flows(rng: random.Random, count: int) -> list[tuple[Dataflow, list[str]]]:
    """Random DAGs of 3-5 operators (topological numbering; parentless = source), kinds
    without the uniqueness property (the scenario catalogue has none), and a non-empty
    reconfiguration of non-sources."""
    flows: list[tuple[Dataflow, list[str]]] = []
    while len(flows) < count:
        n = rng.randint(3, 5)
        edges = [(i, j) for i in range(n) for j in range(i + 1, n) if rng.random() < 0.5]
        has_parent = sorted({j for _, j in edges})
        if not has_parent:
            continue
        ops = [Operator(f"O{v}", OperatorKind("source" if v not in has_parent
                                              else rng.choice(KINDS[1:]))) for v in range(n)]
        flow = Dataflow(tuple(ops), tuple((f"O{i}", f"O{j}") for i, j in edges))
        chosen = rng.sample(has_parent, rng.randint(1, len(has_parent)))
        flows.append((flow, sorted(f"O{v}" for v in chosen)))
    return flows


def test_every_violation_the_simulator_shows_is_in_the_model() -> None:
    """The schedule model is complete for what the executable semantics does: whenever the
    simulator produces a non-serializable schedule on a DAG (naive FCM, or Alg. 2 without the
    one-to-many extension), Z3's counterexample query pinned to that DAG is satisfiable. If
    the model missed a way to violate serializability, the Fries proofs would be about a
    weaker model than the simulator's."""
    blamed: list[tuple[str, Variant | None, dict[str, bool]]] = [
        ("naive", None, {}), ("fries", ALG2, {"one_to_many": False})]
    seen = {"naive": 0, "fries": 0}
    for flow, reconf in random_flows(random.Random(5), 30):
        witness = {"dataflow": flow.to_json(), "reconfigured": reconf}
        # what Theorem 6.4 + Alg. 4 (proved above) predicts for the full Fries scheduler
        assert all(check_serializability(simulate(scenario_for(witness, seed), "fries").schedule)
                   .serializable for seed in range(8))
        for scheduler, variant, options in blamed:
            if all(check_serializability(simulate(scenario_for(witness, seed), scheduler, **options)
                                         .schedule).serializable for seed in range(8)):
                continue
            seen[scheduler] += 1

            def pin(dag: SymbolicDag) -> list[z.BoolTerm]:
                return pin_dataflow(dag, flow, reconf)[0]

            cases = L.non_serializable(len(flow.operators), KINDS, variant, restrict=pin)
            assert L.run_cases(cases, 60_000).status == "counterexample", (scheduler, witness)
    assert seen["naive"] >= 5 and seen["fries"] >= 1, seen  # the check is not vacuous
