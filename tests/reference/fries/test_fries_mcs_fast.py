"""The linear-time parts of the MCS. ``Dataflow.topological_order`` (a heap) gives
exactly the order of the former "re-sort the ready list at every step" Kahn algorithm, and
the one-pass seed set (earliest unpruned one-to-many ancestors, post-dominator uniqueness
rule) equals the spec's definition on DAGs dense in one-to-many and unique operators."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reference.fries.mcs import fries_mcs, uniqueness_prunable
from spec.fries.dataflow import Dataflow, OperatorKind
from spec.fries.mcs import fries_mcs_definition
from spec.fries.mcs import uniqueness_prunable as uniqueness_definition
from spec.fries.workers import WorkerGroups
from support.fries_dataflows import dags


def resorting_kahn(flow: Dataflow) -> tuple[str, ...]:
    """The former implementation, kept here as the oracle of the order."""
    indegree = {name: len(flow.parents(name)) for name in flow.names}
    position = {name: i for i, name in enumerate(flow.names)}
    ready = sorted((n for n, d in indegree.items() if d == 0), key=position.__getitem__)
    order: list[str] = []
    while ready:
        name = ready.pop(0)
        order.append(name)
        for child in flow.children(name):
            indegree[child] -= 1
            if indegree[child] == 0:
                ready.append(child)
        ready.sort(key=position.__getitem__)
    return tuple(order)


@settings(max_examples=100)
@given(dags())
def test_topological_order_is_unchanged(flow: Dataflow) -> None:
    assert flow.topological_order() == resorting_kahn(flow)


_pruning_kinds = (OperatorKind.ONE_TO_MANY, OperatorKind.REPLICATE, OperatorKind.ONE_TO_ONE)


@st.composite
def pruning_cases(draw: st.DrawFn) -> tuple[Dataflow, frozenset[str]]:
    flow = draw(dags(kinds=_pruning_kinds))
    return flow, frozenset(draw(st.sets(st.sampled_from(flow.names), min_size=1, max_size=3)))


@settings(max_examples=150)
@given(pruning_cases())
def test_seed_set_equals_the_definition(case: tuple[Dataflow, frozenset[str]]) -> None:
    flow, reconfigured = case
    mcs = fries_mcs(flow, reconfigured)
    vertices, edges, _, seeds = fries_mcs_definition(flow, reconfigured)
    assert (mcs.vertices, mcs.edges, mcs.seeds) == (vertices, edges, seeds)


@settings(max_examples=100)
@given(pruning_cases())
def test_uniqueness_rule_per_operator(case: tuple[Dataflow, frozenset[str]]) -> None:
    flow, targets = case
    trivial = WorkerGroups.trivial()
    for x in flow.names:
        if x not in targets and any(t in flow.descendants(x) for t in targets):
            assert uniqueness_prunable(flow, x, targets, trivial) == \
                uniqueness_definition(flow, x, targets, trivial)
