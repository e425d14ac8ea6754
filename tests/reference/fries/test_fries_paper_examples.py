"""The MCS examples of the Fries paper: Figures 2, 5/7, 6, 8, 9, 10 and Tables 4-7.

The text extraction lost the figures, so the dataflows are reconstructed from the prose and
from the MCS columns of Tables 4-6; each reconstruction is explained next to it (also in
docs/fries.md). Where a table's value depends on operators the text never names (the
longest path of Table 5's F2 row), we say so instead of asserting it.
"""

from __future__ import annotations

import pytest

from reference.fries.mcs import MCS, fries_mcs
from spec.fries.dataflow import Dataflow, dataflow
from spec.fries.workers import expand_workers, pipelined_regions


def comps(mcs: MCS) -> list[set[str]]:
    return [set(c) for c in mcs.components]


def chain(*names: str) -> list[tuple[str, str]]:
    return list(zip(names, names[1:]))


def test_figure_2_chain_one_component_headed_by_the_first() -> None:
    """Figure 1/2: Source -> customer detector -> merchant detector -> combiner -> Sink;
    reconfiguring the merchant detector and the combiner synchronises them (one component,
    head = merchant detector)."""
    flow = dataflow([("S", "source"), ("CD", "one-to-one"), ("MD", "one-to-one"),
                     ("MC", "one-to-one"), ("K", "one-to-one")], chain("S", "CD", "MD", "MC", "K"))
    mcs = fries_mcs(flow, ["MD", "MC"])
    assert comps(mcs) == [{"MC", "MD"}]
    assert mcs.heads(mcs.components[0]) == {"MD"}


def test_figure_7_two_components() -> None:
    """Figure 5/7 (reconstructed from §5.3's walk-through): X is the only head of the first
    component and forwards the marker to A and B, which forward it to Z; Y forms the second
    component alone."""
    flow = dataflow([("S", "source"), ("X", "one-to-one"), ("A", "one-to-one"),
                     ("B", "one-to-one"), ("Z", "one-to-one"), ("Y", "one-to-one"),
                     ("K", "one-to-one")],
                    [("S", "X"), ("X", "A"), ("X", "B"), ("A", "Z"), ("B", "Z"), ("Z", "K"),
                     ("S", "Y"), ("Y", "K")])
    mcs = fries_mcs(flow, ["X", "Z", "Y"])
    assert comps(mcs) == [{"A", "B", "X", "Z"}, {"Y"}]
    assert [set(mcs.heads(c)) for c in mcs.components] == [{"X"}, {"Y"}]
    assert mcs.longest_path(mcs.components[0]) == 2


def test_figure_6_split_gives_separate_components() -> None:
    """Example 5.3: a one-to-one Split sends each tuple to A or B; reconfiguring both needs
    no synchronisation (two components, the naive scheduler is safe here)."""
    flow = dataflow([("S", "source"), ("P", "one-to-one"), ("A", "one-to-one"),
                     ("B", "one-to-one"), ("U", "one-to-one")],
                    [("S", "P"), ("P", "A"), ("P", "B"), ("A", "U"), ("B", "U")])
    assert comps(fries_mcs(flow, ["A", "B"])) == [{"A"}, {"B"}]


def test_figure_8_join_is_the_earliest_one_to_many_ancestor() -> None:
    """§6.1/6.2: Alg. 2 gives {M1} (unsafe); Alg. 3 adds the Join: one component J, Split,
    M1 headed by J. If Split were one-to-many too, J is still the earliest."""
    ops = [("S", "source"), ("J", "one-to-many"), ("Sp", "one-to-one"), ("M1", "one-to-one"),
           ("M2", "one-to-one"), ("U", "one-to-one")]
    edges = [("S", "J"), ("J", "Sp"), ("Sp", "M1"), ("Sp", "M2"), ("M1", "U"), ("M2", "U")]
    flow = dataflow(ops, edges)
    assert comps(fries_mcs(flow, ["M1"], one_to_many=False)) == [{"M1"}]
    mcs = fries_mcs(flow, ["M1"])
    assert comps(mcs) == [{"J", "Sp", "M1"}] and mcs.heads(mcs.components[0]) == {"J"}
    ops[2] = ("Sp", "one-to-many")
    assert fries_mcs(dataflow(ops, edges), ["M1"]).seeds == {"J", "M1"}


# Figure 9: a Replicate X in front of one-to-one operators.
FIG9 = dataflow([("S", "source"), ("X", "replicate"), ("A", "one-to-one"), ("B", "one-to-one"),
                 ("C", "one-to-one")],
                [("S", "X"), ("X", "A"), ("A", "B"), ("X", "C")])


def test_figure_9_I_edgewise_rule_prunes_the_replicate() -> None:
    """(I): only X's edge towards A leads to the reconfigured B: X is pruned."""
    assert comps(fries_mcs(FIG9, ["B"], prune_edgewise=False)) == [{"X", "A", "B"}]
    assert comps(fries_mcs(FIG9, ["B"])) == [{"B"}]


def test_figure_9_II_two_edges_lead_to_reconfigured_operators() -> None:
    """(II): B and C both reconfigured: each replicated tuple must meet the same version
    of both, so X stays."""
    assert comps(fries_mcs(FIG9, ["B", "C"])) == [{"A", "B", "C", "X"}]


def test_figure_9_III_replicas_meet_again() -> None:
    """(III): both replicas reach the reconfigured D, so X stays."""
    flow = dataflow([("S", "source"), ("X", "replicate"), ("A", "one-to-one"),
                     ("C", "one-to-one"), ("D", "one-to-one")],
                    [("S", "X"), ("X", "A"), ("X", "C"), ("A", "D"), ("C", "D")])
    assert comps(fries_mcs(flow, ["D"])) == [{"A", "C", "D", "X"}]


# Table 6 / Figure 10, workflow W4 (reconstructed from Table 6's MCS columns):
# Src -> RE; RE -> FD3 -> S1 -> F3 -> SJ; RE -> F4 -> FD4 -> SJ; SJ (self-join on the
# primary key: the uniqueness property) -> E1 -> Sink.
W4 = dataflow(
    [("Src", "source"), ("RE", "replicate"), ("FD3", "one-to-one"), ("S1", "one-to-one"),
     ("F3", "one-to-one"), ("F4", "one-to-one"), ("FD4", "one-to-one"),
     ("SJ", "one-to-one", True), ("E1", "one-to-one"), ("Sink", "one-to-one")],
    [("Src", "RE"), ("RE", "FD3"), ("FD3", "S1"), ("S1", "F3"), ("F3", "SJ"), ("RE", "F4"),
     ("F4", "FD4"), ("FD4", "SJ"), ("SJ", "E1"), ("E1", "Sink")])


@pytest.mark.parametrize("reconfigured, pruned, unpruned", [
    (["FD4"], [{"FD4"}], [{"RE", "F4", "FD4"}]),
    (["F3"], [{"F3"}], [{"RE", "FD3", "S1", "F3"}]),
    (["F4"], [{"F4"}], [{"RE", "F4"}]),
    (["FD3", "FD4"], [{"RE", "FD3", "F4", "FD4"}], [{"RE", "FD3", "F4", "FD4"}]),
    (["E1"], [{"E1"}], [{"RE", "FD3", "S1", "F3", "F4", "FD4", "SJ", "E1"}]),
])
def test_table_6(reconfigured: list[str], pruned: list[set[str]],
                 unpruned: list[set[str]]) -> None:
    assert comps(fries_mcs(W4, reconfigured)) == pruned
    assert comps(fries_mcs(W4, reconfigured, prune_edgewise=False,
                           prune_uniqueness=False)) == unpruned


def test_figure_10_only_the_uniqueness_rule_prunes_for_E1() -> None:
    assert comps(fries_mcs(W4, ["E1"], prune_uniqueness=False)) != [{"E1"}]
    assert comps(fries_mcs(W4, ["E1"], prune_edgewise=False)) == [{"E1"}]


def test_literal_uniqueness_rule_would_be_unsound() -> None:
    """docs/fries.md, choice 3: two *different* unique operators on the two branches do not
    make the Replicate prunable - a replicated transaction reaches both A and B, so they
    must stay in one component."""
    flow = dataflow([("S", "source"), ("X", "replicate"), ("P", "one-to-one"),
                     ("Q", "one-to-one"), ("U1", "one-to-one", True), ("U2", "one-to-one", True),
                     ("A", "one-to-one"), ("B", "one-to-one")],
                    [("S", "X"), ("X", "P"), ("X", "Q"), ("P", "U1"), ("Q", "U2"), ("U1", "A"),
                     ("U2", "B")])
    assert len(fries_mcs(flow, ["A", "B"]).components) == 1
    merged = dataflow([("S", "source"), ("X", "replicate"), ("P", "one-to-one"),
                       ("Q", "one-to-one"), ("U", "one-to-one", True), ("A", "one-to-one"),
                       ("B", "one-to-one")],
                      [("S", "X"), ("X", "P"), ("X", "Q"), ("P", "U"), ("Q", "U"), ("U", "A"),
                       ("U", "B")])
    assert comps(fries_mcs(merged, ["A", "B"])) == [{"A"}, {"B"}]


# Table 4, W1 (TPC-DS q40, joins in a chain) and W2 (q71, reconstructed: J5 -> J7 -> U1,
# J6 -> U1, U1 -> J8 -> J9; J5 and J6 share no path, Table 4's {J5, J6} row).
W1 = dataflow([("S", "source")] + [(f"J{i}", "one-to-one") for i in range(1, 5)] +
              [("K", "one-to-one")], chain("S", "J1", "J2", "J3", "J4", "K"))
W2 = dataflow([("Sw", "source"), ("Sc", "source"), ("Ss", "source"), ("J5", "one-to-one"),
               ("J6", "one-to-one"), ("J7", "one-to-one"), ("U1", "one-to-one"),
               ("J8", "one-to-one"), ("J9", "one-to-one"), ("K", "one-to-one")],
              [("Sw", "J5"), ("Sc", "J6"), ("J5", "J7"), ("Ss", "J7"), ("J6", "U1"),
               ("J7", "U1"), ("U1", "J8"), ("J8", "J9"), ("J9", "K")])


@pytest.mark.parametrize("flow, reconfigured, expected, longest", [
    (W1, ["J1"], [{"J1"}], [0]),
    (W1, ["J2"], [{"J2"}], [0]),
    (W1, ["J1", "J3"], [{"J1", "J2", "J3"}], [2]),
    (W1, ["J1", "J4"], [{"J1", "J2", "J3", "J4"}], [3]),
    (W1, ["J3", "J4"], [{"J3", "J4"}], [1]),
    (W2, ["J5"], [{"J5"}], [0]),
    (W2, ["J5", "J6"], [{"J5"}, {"J6"}], [0, 0]),
    (W2, ["J5", "J6", "J7", "J8"], [{"J5", "J6", "J7", "U1", "J8"}], [3]),
    (W2, ["J5", "J6", "J7", "J9"], [{"J5", "J6", "J7", "U1", "J8", "J9"}], [4]),
    (W2, ["J7", "J8", "J9"], [{"J7", "U1", "J8", "J9"}], [3]),
])
def test_table_4(flow: Dataflow, reconfigured: list[str], expected: list[set[str]],
                 longest: list[int]) -> None:
    mcs = fries_mcs(flow, reconfigured)
    assert comps(mcs) == expected
    assert [mcs.longest_path(c) for c in mcs.components] == longest


def test_table_5() -> None:
    """W3: F1 -> U2 (one-to-many unnest) -> FD1 -> FD2 -> F2 (reconstructed; the paper's
    longest path 5 for F2 counts operators the text does not name, so path lengths are not
    asserted for that row)."""
    flow = dataflow([("S", "source"), ("F1", "one-to-one"), ("U2", "one-to-many"),
                     ("FD1", "one-to-one"), ("FD2", "one-to-one"), ("F2", "one-to-one")],
                    chain("S", "F1", "U2", "FD1", "FD2", "F2"))
    assert comps(fries_mcs(flow, ["F1", "U2"])) == [{"F1", "U2"}]
    assert comps(fries_mcs(flow, ["FD1"])) == [{"U2", "FD1"}]
    assert comps(fries_mcs(flow, ["F2"])) == [{"U2", "FD1", "FD2", "F2"}]


@pytest.mark.parametrize("workers, all_channels, mcs_channels", [
    (1, 5, 3), (4, 68, 48), (12, 588, 432), (20, 1620, 1200), (40, 6440, 4800)])
def test_table_7_channel_counts(workers: int, all_channels: int, mcs_channels: int) -> None:
    """Table 7: a single-worker source feeding a chain of four hash-partitioned joins and a
    sink with ``workers`` workers each; reconfiguring J1 and J4 synchronises the three
    join-to-join edges (counts as reported by the paper: 4w^2 + w and 3w^2)."""
    counts = {name: workers for name in ("J1", "J2", "J3", "J4", "K")}
    parallel = expand_workers(W1, counts)
    assert parallel.physical_channels() == all_channels
    mcs = fries_mcs(parallel.flow, parallel.reconfiguration(["J1", "J4"]),
                    groups=parallel.groups)
    assert parallel.physical_channels(mcs.edges) == mcs_channels


def test_broadcast_worker_behaves_as_if_followed_by_a_replicate() -> None:
    """§7.2: a broadcasting worker sends each tuple to every worker of B, so B's workers
    must be synchronised from the (virtual) Replicate after each A worker; with a single B
    worker the Replicate has one port and the edge-wise rule prunes it."""
    flow = dataflow([("A", "source"), ("B", "one-to-one")], [("A", "B")])
    wide = expand_workers(flow, {"A": 2, "B": 2}, {("A", "B"): "broadcast"})
    assert wide.virtual == {"A#0->B", "A#1->B"}
    assert wide.physical_channels() == 4
    mcs = fries_mcs(wide.flow, wide.reconfiguration(["B"]), groups=wide.groups)
    assert comps(mcs) == [{"A#0->B", "A#1->B", "B#0", "B#1"}]
    assert mcs.heads(mcs.components[0]) == {"A#0->B", "A#1->B"}
    narrow = expand_workers(flow, {"A": 2, "B": 1}, {("A", "B"): "broadcast"})
    assert comps(fries_mcs(narrow.flow, narrow.reconfiguration(["B"]),
                           groups=narrow.groups)) == [{"B#0"}]


def test_blocking_operator_splits_regions() -> None:
    """§7.1: the sort K is blocking; the one-to-many J before it is not an ancestor of C
    within C's pipelined region."""
    flow = dataflow([("S", "source"), ("J", "one-to-many"), ("K", "blocking"),
                     ("C", "one-to-one")], chain("S", "J", "K", "C"))
    assert pipelined_regions(flow) == (frozenset({"C"}), frozenset({"J", "K", "S"}))
    assert comps(fries_mcs(flow, ["C"])) == [{"C"}]
    assert comps(fries_mcs(flow, ["K"])) == [{"J", "K"}]
