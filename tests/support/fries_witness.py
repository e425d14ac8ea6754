"""A simulator scenario on a witness dataflow (a dataflow and the operators it reconfigures),
as the Z3 counterexamples and the model checker give them: the same catalogue functions before
and after the reconfiguration for every run, random timing per seed."""

from __future__ import annotations

from typing import Any

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
