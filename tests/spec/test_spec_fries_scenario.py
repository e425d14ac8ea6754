"""The scenario format and the serial semantics (spec/fries/scenario.py)."""

from __future__ import annotations

import re
from typing import Any

import pytest

from spec.errors import InputError
from spec.fries.scenario import ingestion_order, scenario_from_json, serial_execution


def _scenario() -> dict[str, Any]:
    return {
        "dataflow": {
            "operators": [{"name": "S", "kind": "source"}, {"name": "R", "kind": "replicate"},
                          {"name": "B", "kind": "one-to-one"}, {"name": "C", "kind": "one-to-one"},
                          {"name": "K", "kind": "blocking"}],
            "edges": [["S", "R"], ["R", "B"], ["R", "C"], ["C", "K"]],
        },
        "functions": {"R": {"op": "replicate"}, "B": {"op": "map", "mul": 2, "add": 1},
                      "C": {"op": "filter", "mod": 2, "rem": 0}, "K": {"op": "sum", "mul": 1, "add": 0}},
        "sources": {"S": [{"key": 1, "value": 2}, {"key": 2, "value": 3}, {"key": 1, "value": 4}]},
        "reconfigurations": [{"at": 1, "updates": {"B": {"function": {"op": "map", "mul": 10, "add": 0},
                                                         "state": {"mul": 2}}}}],
    }


def test_serial_execution_applies_update_between_transactions() -> None:
    scenario = scenario_from_json(_scenario())
    result = serial_execution(scenario, ["S:0", "R1", "S:1", "S:2"])
    assert dict(result.outputs) == {("B", "S:0", 1, 5): 1, ("B", "S:1", 2, 30): 1,
                                    ("B", "S:2", 1, 40): 1, ("K", "K:final", 1, 6): 1}
    # B's state for key 1: 2 before the update, transformed to 2*2 = 4, then + 4.
    assert result.states[("B", 1)] == 8
    assert [t.txn for t in ingestion_order(scenario)] == ["S:0", "S:1", "S:2"]


def test_data_order_does_not_matter_only_the_update_position() -> None:
    scenario = scenario_from_json(_scenario())
    one = serial_execution(scenario, ["S:2", "S:0", "R1", "S:1"])
    two = serial_execution(scenario, ["S:0", "S:2", "R1", "S:1"])
    three = serial_execution(scenario, ["S:0", "R1", "S:2", "S:1"])
    assert one == two
    assert one.outputs != three.outputs


@pytest.mark.parametrize(
    "patch, fragment",
    [
        ({"functions": {"R": {"op": "replicate"}}}, "operator 'B' has no function"),
        ({"reconfigurations": [{"at": 0, "updates": {"Z": {"function": {"op": "map", "mul": 1, "add": 0}}}}]},
         "unknown operator 'Z'"),
        ({"reconfigurations": [{"at": 0, "updates": {"B": {"function": {"op": "fanout", "copies": 2}}}}]},
         "does not fit a one-to-one operator"),
        ({"sources": {"S": [{"key": "x", "value": 1}]}}, "sources.S[0].key"),
    ],
)
def test_bad_scenarios_are_rejected(patch: dict[str, Any], fragment: str) -> None:
    raw = _scenario()
    raw.update(patch)
    with pytest.raises(InputError, match=re.escape(fragment)):
        scenario_from_json(raw)
