"""The Fries input formats (DAG.json, SCHEDULE.json) parse and reject bad input clearly."""

from __future__ import annotations

from pathlib import Path

import pytest

from spec.errors import InputError
from spec.fries.dataflow import Dataflow, OperatorKind, dataflow
from spec.fries.schedule import Operation, Schedule, conflicting_pairs, conflicts
from spec.jsonio import load_json


def test_dataflow_round_trips_through_json() -> None:
    flow = dataflow([("A", "source"), ("B", "replicate"), ("C", "one-to-one", True)],
                    [("A", "B"), ("B", "C")])
    again = Dataflow.from_json(flow.to_json())
    assert again == flow
    assert again.kind("B") is OperatorKind.REPLICATE
    assert again.operator("C").unique
    assert again.topological_order() == ("A", "B", "C")
    assert again.descendants("A") == {"B", "C"}
    assert again.ancestors("C") == {"A", "B"}


@pytest.mark.parametrize(
    "value, fragment",
    [
        ([], "expected a JSON object"),
        ({"edges": []}, "missing field 'operators'"),
        ({"operators": [{"name": "A", "kind": "magic"}]}, "unknown kind 'magic'"),
        ({"operators": [{"name": "A", "kind": "source"}] * 2}, "duplicate operator name 'A'"),
        ({"operators": [{"name": "A", "kind": "source"}], "edges": [["A", "Z"]]}, "unknown operator 'Z'"),
        ({"operators": [{"name": "A", "kind": "one-to-one"}, {"name": "B", "kind": "one-to-one"}],
          "edges": [["A", "B"], ["B", "A"]]}, "cycle: A -> B -> A"),
        ({"operators": [{"name": "A", "kind": "source", "uniq": True}]}, "unknown field 'uniq'"),
    ],
)
def test_bad_dataflows_are_rejected_with_location(value: object, fragment: str) -> None:
    with pytest.raises(InputError) as caught:
        Dataflow.from_json(value, "dag.json")
    message = str(caught.value)
    assert message.startswith("dag.json")
    assert fragment in message
    assert "\n" not in message


def test_schedule_parses_and_conflicts_follow_def_4_6() -> None:
    schedule = Schedule.from_json(
        {"logs": {"A": [{"txn": "t1"}, {"txn": "R", "update": True}, {"txn": "t2"}],
                  "B": [{"txn": "t1"}, {"txn": "t2"}]}}
    )
    assert schedule.transactions() == ("t1", "R", "t2")
    assert schedule.update_transactions() == {"R"}
    assert conflicts(Operation("t1"), Operation("R", True))
    assert not conflicts(Operation("t1"), Operation("t2"))
    assert not conflicts(Operation("R", True), Operation("R", True))
    assert conflicting_pairs(schedule) == {("A", 0, 1), ("A", 1, 2)}


def test_schedule_rejects_mixed_transaction_types() -> None:
    with pytest.raises(InputError, match="function update elsewhere"):
        Schedule.from_json({"logs": {"A": [{"txn": "R", "update": True}], "B": [{"txn": "R"}]}})


def test_duplicate_json_keys_are_bad_input_not_last_one_wins(tmp_path: Path) -> None:
    # Regression: Python's json keeps the last duplicate, so a second "logs" silently
    # replaced the schedule the user wrote.
    path = tmp_path / "schedule.json"
    path.write_text('{"logs": {"A": [{"txn": "t1"}]}, "logs": {}}')
    with pytest.raises(InputError, match="key 'logs' appears twice") as caught:
        load_json(path)
    assert str(caught.value).startswith(str(path))


def test_user_dataflows_have_sources_exactly_at_the_roots() -> None:
    # A source fed by an edge, or an operator nothing feeds, is rejected when read from JSON.
    fed_source = {"operators": [{"name": "A", "kind": "source"}, {"name": "B", "kind": "source"}],
                  "edges": [["A", "B"]]}
    with pytest.raises(InputError, match="source 'B' has an input edge from 'A'"):
        Dataflow.from_json(fed_source, "dag.json")
    orphan = {"operators": [{"name": "A", "kind": "source"}, {"name": "B", "kind": "one-to-one"}]}
    with pytest.raises(InputError, match="operator 'B' has no input edge"):
        Dataflow.from_json(orphan, "dag.json")
