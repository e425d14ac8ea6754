"""The counterexamples Z3 finds are realisable: the reference simulator, running the
witness dataflow under the scheduler Z3 blamed, produces a non-serializable schedule for some
timing, and the full Fries scheduler (Alg. 4) never does on the same dataflow. This ties the
schedule model of proofs/fries/lemmas.py to the executable semantics."""

from __future__ import annotations

from typing import Any

import pytest

from proofs.fries import lemmas as L
from proofs.fries.dag import KINDS
from proofs.fries.mcs import ALG2, Variant
from reference.fries.serializability import check_serializability
from reference.fries.simulator import simulate
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
        "sources": {n: [{"key": i, "value": i + 1} for i in range(4)]
                    for n, k in kinds.items() if k == "source"},
        "reconfigurations": [{"at": 1, "updates": {
            n: {"function": NEW_FUNCTION[kinds[n]]} for n in witness["reconfigured"]}}],
        "timing": {"seed": seed, "channel_delay": [0, 4], "fcm_delay": [0, 6]},
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
    if any(op["unique"] for op in witness["dataflow"]["operators"]):
        pytest.skip("the scenario catalogue has no function with the uniqueness property")
    broken = fixed = 0
    for seed in range(40):
        scenario = scenario_for(witness, seed)
        if not check_serializability(simulate(scenario, scheduler, **options).schedule).serializable:
            broken += 1
        if not check_serializability(simulate(scenario, "fries").schedule).serializable:
            fixed += 1
    assert broken > 0, "no timing realised Z3's counterexample"
    assert fixed == 0
