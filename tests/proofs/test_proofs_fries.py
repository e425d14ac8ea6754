"""The symbolic Fries encoding (proofs.fries) is the reference model's MCS, and its proofs and
counterexamples are what `streamproof prove` reports (small bounds here; the CLI runs larger)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from proofs import z3util as z
from proofs.fries import lemmas as L
from proofs.fries.dag import KINDS, SymbolicDag
from proofs.fries.items import fries_items
from proofs.fries import mcs as mcs_module
from proofs.fries.mcs import ALG2, ALG3, ALG4, SymbolicMcs, Variant, fries_seeds
from proofs.fries.witness import pin_dataflow
from proofs.result import run_item
from reference.fries.mcs import fries_mcs
from reference.fries.serializability import check_serializability
from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.schedule import Schedule
from proofs.fries.flow import Branch, LooseBranch, one_hot


@st.composite
def flows(draw: st.DrawFn) -> tuple[Dataflow, list[str]]:
    """A random DAG (operators numbered topologically; parentless = source), kinds, unique
    flags and reconfiguration."""
    n = draw(st.integers(1, 6))
    edges = [(i, j) for i in range(n) for j in range(i + 1, n) if draw(st.booleans())]
    has_parent = {j for _, j in edges}
    ops = []
    for v in range(n):
        kind = "source" if v not in has_parent else draw(st.sampled_from(KINDS[1:]))
        ops.append(Operator(f"O{v}", OperatorKind(kind), draw(st.booleans())))
    flow = Dataflow(tuple(ops), tuple((f"O{i}", f"O{j}") for i, j in edges))
    reconf = [f"O{v}" for v in range(n) if draw(st.booleans())]
    return flow, reconf


@settings(max_examples=60)
@given(flows(), st.sampled_from([ALG2, ALG3, ALG4]))
def test_symbolic_mcs_is_the_reference_mcs(case: tuple[Dataflow, list[str]], variant: Variant) -> None:
    flow, reconf = case
    dag = SymbolicDag(len(flow.operators))
    seeds, eqs = fries_seeds(dag, variant)
    mcs = SymbolicMcs(dag, seeds)
    connected, conn_eqs = mcs.connectivity()
    pins, order = pin_dataflow(dag, flow, reconf)
    outcome = z.solve(dag.constraints() + eqs + mcs.constraints() + conn_eqs + pins)
    assert outcome.answer is z.Answer.SAT and outcome.model is not None
    model = outcome.model
    expected = fries_mcs(flow, reconf, one_to_many=variant.one_to_many,
                         prune_edgewise=variant.prune_edgewise,
                         prune_uniqueness=variant.prune_uniqueness)
    n = dag.n

    def chosen(terms: list[z.BoolTerm]) -> set[str]:
        return {order[v] for v in range(n) if z.holds(model, terms[v])}

    assert chosen(seeds) == set(expected.seeds)
    assert chosen(mcs.vertex) == set(expected.vertices)
    edges = {(order[u], order[v]) for u in range(n) for v in range(n)
             if z.holds(model, mcs.edge[u][v])}
    assert edges == set(expected.edges)
    comps = {frozenset(order[v] for v in range(n) if z.holds(model, connected[u][v]))
             for u in range(n) if z.holds(model, mcs.vertex[u])}
    assert comps == set(expected.components)
    heads = set().union(*(expected.heads(c) for c in expected.components)) if comps else set()
    assert chosen(mcs.head) == heads


def test_every_fries_claim_as_expected_at_five_operators() -> None:
    for item in fries_items(5):
        result = run_item(item, 60_000)
        assert result.as_expected, (result.name, result.status, result.detail)


@pytest.mark.parametrize("variant", [None, ALG2])
def test_counterexample_schedules_are_rejected_by_the_reference_checker(variant: Variant | None) -> None:
    finding = L.run_cases(L.non_serializable(4, KINDS, variant, reconfigurable_sources=False),
                          60_000)
    assert finding.status == "counterexample"
    witness = finding.witness
    schedule = Schedule.from_json(witness["schedule"])
    assert not check_serializability(schedule).serializable
    flow = Dataflow.from_json(witness["dataflow"])
    assert all(flow.kind(op) is not OperatorKind.SOURCE for op in witness["reconfigured"])
    if variant is ALG2:
        # Fig. 8: the tuples split at a one-to-many operator outside Alg. 2's MCS
        mcs = fries_mcs(flow, witness["reconfigured"], one_to_many=False)
        splitters = [op for op in flow.names if flow.kind(op).is_one_to_many]
        assert any(op not in mcs.vertices for op in splitters)


def test_a_broken_pruning_rule_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Mutation check: pruning every replicate operator (dropping the 'exactly one leading
    output edge' condition) must make Theorem 6.4 fail, so the proof is not vacuous."""
    def prune_every_replicate(dag: SymbolicDag, x: int) -> z.BoolTerm:
        return dag.kind["replicate"][x]

    monkeypatch.setattr(mcs_module, "edgewise_prunable", prune_every_replicate)
    cases = L.non_serializable(5, KINDS, Variant("prunes every replicate", True, True, False))
    assert L.run_cases(cases, 60_000).status == "counterexample"
    monkeypatch.undo()
    cases = L.non_serializable(5, KINDS, Variant("edge-wise only", True, True, False))
    assert L.run_cases(cases, 60_000).status == "proved"


@pytest.mark.parametrize("n", [4, 6])
def test_loose_branch_over_approximates_the_exact_one(n: int) -> None:
    """Z3 proof (on every DAG with n operators) that the cheap query the lemmas try first is
    an over-approximation: every exact branch witness, and every exact "leaves the MCS", is
    also a loose one. So "loose is unsat" soundly proves "exact is unsat"."""
    dag = SymbolicDag(n)
    seeds, eqs = fries_seeds(dag, ALG4)
    mcs = SymbolicMcs(dag, seeds)
    a, b = one_hot("a", n), one_hot("b", n)
    exact, loose = Branch(dag, "x", a, b), LooseBranch(dag, "y", a, b)
    tie = [x == y for xs, ys in ((exact.w, loose.w), (exact.c1, loose.c1), (exact.c2, loose.c2))
           for x, y in zip(xs, ys)]
    base = dag.constraints() + eqs + mcs.constraints() + exact.constraints() + tie
    base += loose.definitions() + [z.exactly_one(a), z.exactly_one(b)]
    escape = z.negate(z.all_of(loose.conditions()))
    assert z.solve(base + [escape]).answer is z.Answer.UNSAT
    leaves = [exact.nodes_off(mcs.vertex), z.negate(loose.nodes_off(mcs.vertex))]
    assert z.solve(base + leaves).answer is z.Answer.UNSAT
