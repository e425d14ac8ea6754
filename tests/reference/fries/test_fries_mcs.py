"""The MCS reference (reference/fries/mcs.py: Alg. 1-4) equals the definitions
(spec/fries/mcs.py: Def. 5.4 and the seed set) on random DAGs with every combination of
switches, satisfies Lemmas 5.6/6.1 and 6.3, and commutes with worker expansion (§7.2)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from reference.fries.mcs import fries_mcs, minimal_covering_subdag
from spec.fries.dataflow import Dataflow, Operator
from spec.fries.mcs import components, fries_mcs_definition, mcs_edges, mcs_vertices
from spec.fries.workers import Partitioning, WorkerGroups, expand_workers, pipelined_view
from support.fries_dataflows import dags


@st.composite
def dag_and_subset(draw: st.DrawFn) -> tuple[Dataflow, frozenset[str]]:
    flow = draw(dags())
    return flow, frozenset(draw(st.sets(st.sampled_from(flow.names), min_size=1)))


@settings(max_examples=200)
@given(dag_and_subset())
def test_algorithm_1_computes_definition_5_4(case: tuple[Dataflow, frozenset[str]]) -> None:
    flow, vprime = case
    mcs = minimal_covering_subdag(flow, vprime)
    assert mcs.vertices == mcs_vertices(flow, vprime)
    assert mcs.edges == mcs_edges(flow, vprime)
    assert set(mcs.components) == components(mcs.vertices, mcs.edges)
    assert list(mcs.components) == sorted(mcs.components, key=min)
    assert mcs.seeds == vprime


def reference(flow: Dataflow, reconfigured: frozenset[str], flags: dict[str, bool],
              groups: WorkerGroups | None = None) -> tuple[object, ...]:
    mcs = fries_mcs(flow, reconfigured, prune_edgewise=flags["prune_edgewise"],
                    prune_uniqueness=flags["prune_uniqueness"],
                    one_to_many=flags["one_to_many"], groups=groups)
    return mcs.vertices, mcs.edges, frozenset(mcs.components), mcs.seeds


def definition(flow: Dataflow, reconfigured: frozenset[str], flags: dict[str, bool],
               groups: WorkerGroups | None = None) -> tuple[object, ...]:
    return fries_mcs_definition(flow, reconfigured, prune_edgewise=flags["prune_edgewise"],
                                prune_uniqueness=flags["prune_uniqueness"],
                                one_to_many=flags["one_to_many"], groups=groups)


switches = st.fixed_dictionaries({"prune_edgewise": st.booleans(),
                                  "prune_uniqueness": st.booleans(),
                                  "one_to_many": st.booleans()})


@settings(max_examples=300)
@given(dag_and_subset(), switches)
def test_fries_mcs_equals_the_definition(case: tuple[Dataflow, frozenset[str]],
                                         flags: dict[str, bool]) -> None:
    flow, reconfigured = case
    assert reference(flow, reconfigured, flags) == definition(flow, reconfigured, flags)


@st.composite
def grouped(draw: st.DrawFn) -> tuple[Dataflow, frozenset[str], WorkerGroups]:
    """Random worker groups and ports on a random DAG (members of a group share the
    uniqueness flag, as workers of one operator do)."""
    base = draw(dags(max_size=6))
    labels = {n: draw(st.sampled_from("xyz")) for n in base.names}
    flag = {label: draw(st.booleans()) for label in "xyz"}
    flow = Dataflow(tuple(Operator(op.name, op.kind, flag[labels[op.name]])
                          for op in base.operators), base.edges)
    ports = {e: f"{e[0]}:{draw(st.sampled_from('pq'))}" for e in flow.edges}
    reconfigured = frozenset(draw(st.sets(st.sampled_from(flow.names), min_size=1)))
    return flow, reconfigured, WorkerGroups(labels, ports)


@settings(max_examples=200)
@given(grouped(), switches)
def test_fries_mcs_with_groups_equals_the_definition(
        case: tuple[Dataflow, frozenset[str], WorkerGroups], flags: dict[str, bool]) -> None:
    flow, reconfigured, groups = case
    assert reference(flow, reconfigured, flags, groups) == definition(
        flow, reconfigured, flags, groups)


@settings(max_examples=200)
@given(dag_and_subset(), switches)
def test_lemmas_5_6_6_1_and_6_3(case: tuple[Dataflow, frozenset[str]],
                                flags: dict[str, bool]) -> None:
    """Every component holds a reconfigured operator (Lemma 5.6/6.1); every head is a seed
    (first half of Lemma 6.3); with Alg. 3 and no pruning, no head has a one-to-many
    ancestor (second half: a head receives at most one tuple per transaction)."""
    flow, reconfigured = case
    mcs = fries_mcs(flow, reconfigured, prune_edgewise=flags["prune_edgewise"],
                    prune_uniqueness=flags["prune_uniqueness"], one_to_many=flags["one_to_many"])
    view = pipelined_view(flow)
    for component in mcs.components:
        assert component & reconfigured
        assert mcs.heads(component) <= mcs.seeds
        if flags["one_to_many"] and not (flags["prune_edgewise"] or flags["prune_uniqueness"]):
            for head in mcs.heads(component):
                assert not any(view.kind(a).is_one_to_many for a in view.ancestors(head))


@settings(max_examples=100)
@given(dag_and_subset(), switches, st.lists(st.integers(1, 3), min_size=7, max_size=7),
       st.sampled_from([Partitioning.HASH, Partitioning.RANGE]))
def test_worker_expansion_commutes_with_the_mcs(case: tuple[Dataflow, frozenset[str]],
                                                flags: dict[str, bool], counts: list[int],
                                                mode: Partitioning) -> None:
    """§7.2 with hash/range partitioning: the MCS of the worker-expanded DAG is exactly the
    workers of the logical MCS, with the same seeds (workers inherit kinds; ports and
    operator groups keep both pruning rules as strong as on the logical DAG)."""
    flow, reconfigured = case
    workers = dict(zip(flow.names, counts))
    parallel = expand_workers(flow, workers, default=mode)
    logical = fries_mcs(flow, reconfigured, prune_edgewise=flags["prune_edgewise"],
                        prune_uniqueness=flags["prune_uniqueness"],
                        one_to_many=flags["one_to_many"])
    expanded = fries_mcs(parallel.flow, parallel.reconfiguration(reconfigured),
                         prune_edgewise=flags["prune_edgewise"],
                         prune_uniqueness=flags["prune_uniqueness"],
                         one_to_many=flags["one_to_many"], groups=parallel.groups)
    assert expanded.vertices == {w for v in logical.vertices for w in parallel.workers[v]}
    assert expanded.seeds == {w for v in logical.seeds for w in parallel.workers[v]}
    # a one-operator component becomes one component per worker (each worker gets its own
    # FCM, as in Fries §8.3); a larger one stays connected through all-to-all channels
    expected = sum(len(parallel.workers[min(c)]) if len(c) == 1 else 1
                   for c in logical.components)
    assert len(expanded.components) == expected
