"""Worker expansion (Fries §7.2) and pipelined regions (§7.1): shapes, channel counts and
bad input."""

from __future__ import annotations

import pytest

from spec.errors import InputError
from spec.fries.dataflow import OperatorKind, dataflow
from spec.fries.workers import Partitioning, expand_workers, pipelined_view

FLOW = dataflow([("S", "source"), ("J", "one-to-many", True), ("K", "one-to-one")],
                [("S", "J"), ("J", "K")])


def test_hash_workers_inherit_kind_and_uniqueness() -> None:
    parallel = expand_workers(FLOW, {"J": 2, "K": 3})
    assert parallel.workers == {"S": ("S#0",), "J": ("J#0", "J#1"),
                                "K": ("K#0", "K#1", "K#2")}
    assert all(parallel.flow.kind(w) is OperatorKind.ONE_TO_MANY for w in parallel.workers["J"])
    assert all(parallel.flow.operator(w).unique for w in parallel.workers["J"])
    assert parallel.physical_channels() == 2 + 6
    assert parallel.groups.port(("J#0", "K#2")) == parallel.groups.port(("J#0", "K#0"))
    assert parallel.groups.port(("J#0", "K#0")) != parallel.groups.port(("J#1", "K#0"))
    assert parallel.groups.operator("J#1") == "J"
    assert parallel.reconfiguration(["J"]) == {"J#0", "J#1"}


def test_forward_and_broadcast() -> None:
    forward = expand_workers(FLOW, {"J": 2, "K": 2}, {("J", "K"): Partitioning.FORWARD})
    assert set(forward.flow.edges) >= {("J#0", "K#0"), ("J#1", "K#1")}
    assert ("J#0", "K#1") not in forward.flow.edges
    broadcast = expand_workers(FLOW, {"J": 2, "K": 2}, {("J", "K"): "broadcast"})
    assert broadcast.flow.kind("J#1->K") is OperatorKind.REPLICATE
    assert broadcast.physical_channels() == 2 + 4


@pytest.mark.parametrize("workers, partitioning, fragment", [
    ({"Z": 2}, None, "unknown operator 'Z'"),
    ({"J": 0}, None, "at least one worker"),
    ({}, {("S", "K"): "hash"}, "no edge 'S' -> 'K'"),
    ({"J": 2}, {("J", "K"): "forward"}, "needs equal worker counts"),
])
def test_bad_expansions(workers: dict[str, int],
                        partitioning: dict[tuple[str, str], str] | None, fragment: str) -> None:
    with pytest.raises(InputError, match=fragment):
        expand_workers(FLOW, workers, partitioning)
    with pytest.raises(InputError, match="unknown reconfigured operator 'Q'"):
        expand_workers(FLOW, {}).reconfiguration(["Q"])


def test_pipelined_view_cuts_blocking_outputs_only() -> None:
    flow = dataflow([("S", "source"), ("B", "blocking"), ("C", "one-to-one")],
                    [("S", "B"), ("B", "C"), ("S", "C")])
    assert set(pipelined_view(flow).edges) == {("S", "B"), ("S", "C")}
    assert pipelined_view(FLOW) is FLOW
