"""spark_impl's own MCS / components (Fries Alg. 1-4, §7.1, §7.2) on the paper's figures.

Pure Python, no Spark: the Spark executor's Fries scheduler is only as good as these sets.
"""

from __future__ import annotations
import random

from spec.fries.dataflow import dataflow
from spark_impl.reconfig.mcs import components, minimal_covering_subdag, object_components, sync_operators
from spec.fries.mcs import fries_mcs_definition


def test_fig7_two_components_with_alignment_inside() -> None:
    # Fig. 5/7 shape: S -> A -> {B, C} -> D -> E, S -> F; reconfigure A, D and F.
    flow = dataflow([("S", "source"), ("A", "one-to-one"), ("B", "one-to-one"), ("C", "one-to-one"),
                     ("D", "one-to-one"), ("E", "one-to-one"), ("F", "one-to-one")],
                    [("S", "A"), ("A", "B"), ("A", "C"), ("B", "D"), ("C", "D"), ("D", "E"), ("S", "F")])
    vertices, edges = minimal_covering_subdag(flow, {"A", "D", "F"})
    assert vertices == {"A", "B", "C", "D", "F"}
    assert ("D", "E") not in edges and ("A", "B") in edges
    found = {frozenset(c.operators): c.heads for c in components(flow, {"A", "D", "F"})}
    assert found == {frozenset({"A", "B", "C", "D"}): frozenset({"A"}), frozenset({"F"}): frozenset({"F"})}


def test_fig8_one_to_many_ancestor_joins_the_mcs() -> None:
    flow = dataflow([("S", "source"), ("J", "one-to-many"), ("P", "one-to-one"), ("M", "one-to-one")],
                    [("S", "J"), ("J", "P"), ("P", "M")])
    assert sync_operators(flow, {"M"}) == {"J", "M"}
    (only,) = components(flow, {"M"})
    assert only.operators == {"J", "P", "M"} and only.heads == {"J"}


def test_fig9_edgewise_one_to_one_pruning() -> None:
    # I: R replicates to B and C; only B is reconfigured -> R pruned.
    flow = dataflow([("S", "source"), ("R", "replicate"), ("B", "one-to-one"), ("C", "one-to-one")],
                    [("S", "R"), ("R", "B"), ("R", "C")])
    assert sync_operators(flow, {"B"}) == {"B"}
    assert sync_operators(flow, {"B"}, pruning=False) == {"R", "B"}
    # II: both branches reconfigured -> R stays.
    assert sync_operators(flow, {"B", "C"}) == {"R", "B", "C"}
    # III: both branches meet at a reconfigured D -> R stays.
    flow3 = dataflow([("S", "source"), ("R", "replicate"), ("B", "one-to-one"), ("C", "one-to-one"),
                      ("D", "one-to-one")], [("S", "R"), ("R", "B"), ("R", "C"), ("B", "D"), ("C", "D")])
    assert "R" in sync_operators(flow3, {"D"})


def test_fig10_uniqueness_pruning() -> None:
    flow = dataflow([("S", "source"), ("R", "replicate"), ("B", "one-to-one"), ("C", "one-to-one"),
                     ("J", "one-to-one", True), ("D", "one-to-one")],
                    [("S", "R"), ("R", "B"), ("R", "C"), ("B", "J"), ("C", "J"), ("J", "D")])
    assert sync_operators(flow, {"D"}) == {"D"}
    assert "R" in sync_operators(flow, {"D"}, pruning=False)


def test_blocking_operators_split_regions_and_workers_expand() -> None:
    # §7.1: K's output edge carries nothing while reconfigurations run.
    flow = dataflow([("S", "source"), ("A", "one-to-one"), ("K", "blocking"), ("D", "one-to-one")],
                    [("S", "A"), ("A", "K"), ("K", "D")])
    assert {frozenset(c.operators) for c in components(flow, {"A", "D"})} == {frozenset({"A"}), frozenset({"D"})}
    # §7.2: a lone reconfigured operator with 2 workers: two components, each worker a head;
    # a component A -> K with workers: every worker of K aligns on every worker of A.
    workers = {"S": ("S",), "A": ("A#0", "A#1"), "K": ("K#0", "K#1"), "D": ("D",)}
    roles = object_components(flow, workers, {"A"})
    assert set(roles) == {"A#0", "A#1"} and all(r.head and not r.parents for r in roles.values())
    roles = object_components(flow, workers, {"A", "K"})
    assert roles["K#1"].parents == {"A#0", "A#1"} and not roles["K#1"].head
    assert roles["A#0"].children == {"K#0", "K#1"}


def test_uniqueness_rule_needs_one_operator_on_every_path_to_any_target() -> None:
    # X -> P -> U1 -> A and X -> Q -> U2 -> B, R = {A, B}: the literal per-path rule would
    # prune X and split {A} and {B}; one transaction replicated by X reaches both.
    flow = dataflow([("S", "source"), ("X", "replicate"), ("P", "one-to-one"), ("Q", "one-to-one"),
                     ("U1", "one-to-one", True), ("U2", "one-to-one", True), ("A", "one-to-one"),
                     ("B", "one-to-one")],
                    [("S", "X"), ("X", "P"), ("X", "Q"), ("P", "U1"), ("Q", "U2"), ("U1", "A"), ("U2", "B")])
    assert "X" in sync_operators(flow, {"A", "B"})
    # a unique operator at the end of the path does not count
    flow2 = dataflow([("S", "source"), ("X", "one-to-many"), ("P", "one-to-one"), ("U", "one-to-one", True)],
                     [("S", "X"), ("X", "P"), ("P", "U")])
    assert sync_operators(flow2, {"U"}) == {"X", "U"}
    # prune first, then take the earliest: X1 prunable Replicate -> X2 one-to-many -> O
    flow3 = dataflow([("S", "source"), ("X1", "replicate"), ("X2", "one-to-many"), ("O", "one-to-one"),
                      ("Z", "one-to-one")], [("S", "X1"), ("X1", "X2"), ("X1", "Z"), ("X2", "O")])
    assert sync_operators(flow3, {"O"}) == {"X2", "O"}


def test_components_agree_with_the_spec_on_random_dags() -> None:
    """spark_impl's own MCS code computes what spec/fries/mcs.py defines (seeded DAGs)."""
    rng = random.Random(6)
    kinds = ["one-to-one", "one-to-many", "replicate", "blocking"]
    for _ in range(300):
        names = ["S"]
        ops: list[tuple[str, str] | tuple[str, str, bool]] = [("S", "source")]
        edges = []
        for i in range(rng.randint(2, 7)):
            name = f"O{i}"
            ops.append((name, rng.choice(kinds), rng.random() < 0.25))
            for parent in rng.sample(names, k=min(len(names), rng.choice([1, 1, 2]))):
                edges.append((parent, name))
            names.append(name)
        flow = dataflow(ops, edges)
        chosen = set(rng.sample(names[1:], k=rng.randint(1, min(3, len(names) - 1))))
        vertices, _, comps, seeds = fries_mcs_definition(flow, chosen)
        assert sync_operators(flow, chosen) == seeds, (flow.to_json(), chosen)
        assert {frozenset(c.operators) for c in components(flow, chosen)} == set(comps), (flow.to_json(), chosen)
