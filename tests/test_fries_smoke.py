"""Smoke checks of the Fries part-A interfaces (the full properties live in
test_fries_serializability.py and test_fries_mcs.py)."""

from __future__ import annotations

from reference.fries.mcs import fries_mcs
from reference.fries.serializability import check_serializability
from spec.fries.dataflow import dataflow
from spec.fries.schedule import Schedule


def test_figure_8_needs_the_join() -> None:
    flow = dataflow([("S", "source"), ("J", "one-to-many"), ("Sp", "one-to-one"),
                     ("M1", "one-to-one"), ("M2", "one-to-one"), ("U", "one-to-one")],
                    [("S", "J"), ("J", "Sp"), ("Sp", "M1"), ("Sp", "M2"), ("M1", "U"),
                     ("M2", "U")])
    assert fries_mcs(flow, ["M1"]).to_json() == {"components": [["J", "M1", "Sp"]]}
    assert fries_mcs(flow, ["M1"], one_to_many=False).to_json() == {"components": [["M1"]]}


def test_two_sided_transaction_is_a_cycle() -> None:
    schedule = Schedule.from_json({"logs": {
        "B": [{"txn": "t3"}, {"txn": "R", "update": True}],
        "C": [{"txn": "R", "update": True}, {"txn": "t3"}]}})
    verdict = check_serializability(schedule)
    assert not verdict.serializable and verdict.cycle == ("t3", "R")
