"""Fries Lemmas 5.5-6.3 and Theorems 5.8 / 6.4, bounded but exhaustive, as Z3 queries.

Each claim is checked by asking Z3 for a counterexample over the symbolic domain of
:mod:`proofs.fries.dag` (every DAG on ``n`` operators, every kind assignment, every unique flag,
every reconfiguration set). ``unsat`` = proved for that whole domain. A claim may split into
*cases* (e.g. the chain and the branch case of :mod:`proofs.fries.flow`); it is proved when
every case is unsat. A branch case first tries its *loose* over-approximation
(:class:`~proofs.fries.flow.LooseBranch`, much cheaper): unsat there is unsat for the exact
case; otherwise the exact case is solved, and a counterexample is minimised.

The schedule model behind the theorems (argued in docs/proofs.md): with one function-update
transaction R, data transactions never conflict with each other, so a schedule is
conflict-serializable iff no data transaction t has one operation before an update of R and
another after an update of R (the cycle t -> R -> t). Under the Fries scheduler the epoch
(before/after the update) of an operation inside an MCS component is inherited along component
edges (FIFO channels + marker alignment), and is free only where a tuple *enters* the MCS
(at a head, with the FCM, or over a non-MCS edge); outside the MCS nothing is reconfigured.
So Fries admits a non-serializable schedule iff two tuples of one transaction reach
reconfigured operators through different entries: a chain leaving the MCS in between, or a
branch whose branching operator or paths lie outside the MCS. The naive FCM scheduler applies
each update at an arbitrary moment, so it fails iff two tuples of one transaction can reach
reconfigured operators at all.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Sequence

from proofs import z3util as z
from proofs.fries.dag import SymbolicDag
from proofs.fries.flow import Branch, LooseBranch, chain, chain_leaves, one_hot, selected
from proofs.fries.mcs import SymbolicMcs, Variant, fries_seeds
from proofs.fries.witness import (
    TupleTree, confirmed, decode_dataflow, describe_dataflow, name, source_path, split_schedule,
)
from proofs.result import Finding, finding_of
from proofs.z3util import BoolTerm, Model
from spec.fries.dataflow import Dataflow
from spec.fries.workers import pipelined_view

ONE_TO_ONE_KINDS = ("source", "one-to-one")


@dataclass(frozen=True)
class Case:
    """One satisfiability query: a counterexample exists iff ``constraints`` are sat."""

    constraints: list[BoolTerm]
    describe: Callable[[Model], Finding]
    minimize: list[BoolTerm] = field(default_factory=list)
    #: an over-approximation of ``constraints`` tried first: unsat there means unsat here
    loose: list[BoolTerm] | None = None


def run_cases(cases: Sequence[Case], timeout_ms: int) -> Finding:
    """Proved iff every case is unsat; the first counterexample found otherwise."""
    timed_out = False
    for case in cases:
        if case.loose is not None and z.solve(case.loose, timeout_ms=timeout_ms).answer is z.Answer.UNSAT:
            continue
        outcome = z.solve(case.constraints, timeout_ms=timeout_ms)
        if outcome.answer is z.Answer.SAT and case.minimize:
            # a counterexample exists: ask the (slower) optimiser for a small one
            smallest = z.solve(case.constraints, timeout_ms=timeout_ms, minimize=case.minimize)
            outcome = smallest if smallest.answer is z.Answer.SAT else outcome
        finding = finding_of(outcome, case.describe)
        if finding.status == "counterexample":
            return finding
        timed_out = timed_out or finding.status == "timeout"
    return Finding("timeout", "Z3 gave up on a case") if timed_out else Finding("proved")


def _setting(n: int, kinds: Sequence[str], variant: Variant) -> tuple[SymbolicDag, SymbolicMcs, list[BoolTerm]]:
    dag = SymbolicDag(n, allowed_kinds=kinds)
    seeds, seed_eqs = fries_seeds(dag, variant)
    mcs = SymbolicMcs(dag, seeds)
    return dag, mcs, dag.constraints() + seed_eqs + mcs.constraints()


def smallness(dag: SymbolicDag) -> list[BoolTerm]:
    """Terms to minimise so a counterexample is small and plain: edges, reconfigured and
    unique flags, operators that are not one-to-one, and (counted twice more) reconfigured
    sources, which scenarios do not allow although the proofs cover them."""
    edges = [dag.edge[i][j] for i in range(dag.n) for j in range(i + 1, dag.n)]
    odd = [z.all_of([dag.reconfigured[v], dag.kind["source"][v]]) for v in range(dag.n)]
    special = [dag.kind[k][v] for k in ("one-to-many", "replicate", "blocking") for v in range(dag.n)]
    return edges + list(dag.reconfigured) + list(dag.unique) + odd + odd + special


def _dag_finding(dag: SymbolicDag, model: Model, what: str) -> Finding:
    flow, reconf = decode_dataflow(dag, model)
    return Finding("counterexample", f"{what} in: {describe_dataflow(flow, reconf)}",
                   {"dataflow": flow.to_json(), "reconfigured": reconf})


# --- Lemma 5.5 --------------------------------------------------------------------------------

def mcs_unique_minimal(n: int) -> list[Case]:
    """Lemma 5.5 (and Alg. 1's correctness): for every DAG and every vertex set V', Alg. 1's
    output covers V' and every vertex and edge on a path between two V' vertices (Def. 5.4
    (1), (2)), and is contained in every sub-DAG that does - so it is the unique minimal one."""
    dag = SymbolicDag(n)
    seeds = [z.boolean(f"vprime_{v}") for v in range(n)]
    mcs = SymbolicMcs(dag, seeds)
    base = dag.constraints() + mcs.constraints()
    star = dag.reach_star
    # Def. 5.4 (2): x is on a path a -> .. -> b between seeds a, b. "exists a, b with
    # P(a) and Q(b)" is written as "(exists a: P(a)) and (exists b: Q(b))" (n^2 terms, not n^4).
    from_seed = [z.any_of([z.all_of([seeds[a], star(a, x)]) for a in range(n)]) for x in range(n)]
    to_seed = [z.any_of([z.all_of([seeds[b], star(x, b)]) for b in range(n)]) for x in range(n)]
    on_vertex = [z.all_of([from_seed[x], to_seed[x]]) for x in range(n)]
    on_edge = [[z.all_of([dag.view[u][v], from_seed[u], to_seed[v]]) for v in range(n)]
               for u in range(n)]
    pairs = [(u, v) for u in range(n) for v in range(u + 1, n)]
    not_covering = z.any_of(
        [z.all_of([z.any_of([seeds[x], on_vertex[x]]), z.negate(mcs.vertex[x])]) for x in range(n)]
        + [z.all_of([on_edge[u][v], z.negate(mcs.edge[u][v])]) for u, v in pairs])
    sub_v = [z.boolean(f"sub_vertex_{v}") for v in range(n)]
    sub_e = {(u, v): z.boolean(f"sub_edge_{u}_{v}") for u, v in pairs}
    covering_sub = [z.implies(sub_e[u, v], z.all_of([dag.view[u][v], sub_v[u], sub_v[v]]))
                    for u, v in pairs]
    covering_sub += [z.implies(z.any_of([seeds[x], on_vertex[x]]), sub_v[x]) for x in range(n)]
    covering_sub += [z.implies(on_edge[u][v], sub_e[u, v]) for u, v in pairs]
    not_least = z.any_of([z.all_of([mcs.vertex[x], z.negate(sub_v[x])]) for x in range(n)]
                         + [z.all_of([mcs.edge[u][v], z.negate(sub_e[u, v])]) for u, v in pairs])

    def describe(model: Model) -> Finding:
        chosen = [name(v) for v in range(n) if z.holds(model, seeds[v])]
        return _dag_finding(dag, model, f"Alg. 1 is not the least covering sub-DAG of V'={chosen}")

    return [Case(base + [not_covering], describe, smallness(dag)),
            Case(base + covering_sub + [not_least], describe, smallness(dag))]


# --- Lemmas 5.6 / 6.1, 5.7 / 6.2, 6.3 --------------------------------------------------------

def components_hold_reconfigured(n: int, kinds: Sequence[str], variant: Variant) -> list[Case]:
    """Lemma 5.6 / 6.1: every component of the MCS contains a reconfigured operator."""
    dag, mcs, base = _setting(n, kinds, variant)
    component, closed = mcs.closed_set("component")
    bad = [z.any_of(component)]
    bad += [z.negate(z.all_of([component[r], dag.reconfigured[r]])) for r in range(n)]
    return [Case(base + closed + bad, lambda m: _dag_finding(dag, m, "a component without a "
                                                      "reconfigured operator"), smallness(dag))]


def one_component_per_transaction(n: int, kinds: Sequence[str], variant: Variant) -> list[Case]:
    """Lemma 5.7 / 6.2: the operators of one data transaction overlap at most one component."""
    dag, mcs, base = _setting(n, kinds, variant)
    a, b = one_hot("a", n), one_hot("b", n)
    side, closed = mcs.closed_set("side_of_a")
    apart = [z.exactly_one(a), z.exactly_one(b)] + closed
    for v in range(n):
        apart.append(z.implies(a[v], z.all_of([mcs.vertex[v], side[v]])))
        apart.append(z.implies(b[v], z.all_of([mcs.vertex[v], z.negate(side[v])])))
    branch = Branch(dag, "br", a, b)
    loose = LooseBranch(dag, "lb", a, b)

    def describe(model: Model) -> Finding:
        return _dag_finding(dag, model, f"one transaction reaches {name(selected(model, a))} and "
                            f"{name(selected(model, b))} in different components")

    return [Case(base + apart + [z.any_of([chain(dag, a, b), chain(dag, b, a)])], describe,
                 smallness(dag)),
            Case(base + apart + branch.constraints(), describe, smallness(dag),
                 base + apart + loose.constraints())]


def head_receives_one_tuple(n: int, kinds: Sequence[str], variant: Variant) -> list[Case]:
    """Lemma 6.3: a head of an MCS component receives at most one tuple per transaction."""
    dag, mcs, base = _setting(n, kinds, variant)
    h = one_hot("h", n)
    branch, loose = Branch(dag, "br", h, h), LooseBranch(dag, "lb", h, h)
    heads = [z.exactly_one(h)] + [z.implies(h[v], mcs.head[v]) for v in range(n)]
    return [Case(base + heads + branch.constraints(), lambda m: _dag_finding(
        dag, m, f"head {name(selected(m, h))} receives two tuples of one transaction"),
        smallness(dag), base + heads + loose.constraints())]


# --- Theorems 5.8 / 6.4 and the naive scheduler ---------------------------------------------

def _split_finding(dag: SymbolicDag, model: Model, scheduler: str, tree: TupleTree) -> Finding:
    flow, reconf = decode_dataflow(dag, model)
    schedule = split_schedule(flow, reconf, tree)
    witness = confirmed(schedule)
    before, after = tree.side1[-1] if tree.side1 else tree.stem[-1], tree.side2[-1]
    text = (f"{scheduler} admits a non-serializable schedule in: {describe_dataflow(flow, reconf)}; "
            f"transaction t is processed by {before} before its update and by {after} after "
            f"its update; precedence cycle {' -> '.join(witness['cycle'] + witness['cycle'][:1])}")
    return Finding("counterexample", text,
                   {"dataflow": flow.to_json(), "reconfigured": reconf, **witness})


def _view_path(flow: Dataflow, start: str, end: str) -> list[str]:
    """A path start -> .. -> end in the pipelined view (without ``start``)."""
    view = pipelined_view(flow)
    parent: dict[str, str] = {}
    frontier = [start]
    while frontier:
        node = frontier.pop(0)
        for child in view.children(node):
            if child not in parent:
                parent[child] = node
                frontier.append(child)
    path = [end]
    while path[0] != start:
        path.insert(0, parent[path[0]])
    return path[1:]


def non_serializable(n: int, kinds: Sequence[str], variant: Variant | None, *,
                     reconfigurable_sources: bool = True,
                     restrict: Callable[[SymbolicDag], list[BoolTerm]] | None = None) -> list[Case]:
    """Cases whose models are non-serializable schedules of the Fries scheduler of ``variant``
    (or of the naive FCM scheduler when ``variant`` is None). Proofs use the larger domain
    (sources may be reconfigured); counterexample searches exclude it, as scenarios do.
    ``restrict`` adds constraints on the DAG (tests pin it to a concrete dataflow)."""
    if variant is None:
        dag = SymbolicDag(n, allowed_kinds=kinds)
        base, inside = dag.constraints(), None
        label = "the naive FCM scheduler"
    else:
        dag, mcs, base = _setting(n, kinds, variant)
        inside = mcs.vertex
        label = f"the Fries scheduler ({variant.name})"
    a, b = one_hot("a", n), one_hot("b", n)
    ends = [z.exactly_one(a), z.exactly_one(b)]
    ends += [z.implies(a[v], dag.reconfigured[v]) for v in range(n)]
    ends += [z.implies(b[v], dag.reconfigured[v]) for v in range(n)]
    if not reconfigurable_sources:
        ends += [z.negate(z.all_of([dag.reconfigured[v], dag.kind["source"][v]])) for v in range(n)]
    if restrict is not None:
        ends += restrict(dag)
    chained = [chain(dag, a, b)] if inside is None else [chain_leaves(dag, a, b, inside)]
    branch, loose = Branch(dag, "br", a, b), LooseBranch(dag, "lb", a, b)
    branched, loosely = branch.constraints(), loose.constraints()
    if inside is not None:
        branched.append(branch.nodes_off(inside))
        loosely.append(loose.nodes_off(inside))

    def describe_chain(model: Model) -> Finding:
        flow, _ = decode_dataflow(dag, model)
        first, last = name(selected(model, a)), name(selected(model, b))
        tree = TupleTree(source_path(pipelined_view(flow), first), [], _view_path(flow, first, last))
        return _split_finding(dag, model, label, tree)

    def describe_branch(model: Model) -> Finding:
        flow, _ = decode_dataflow(dag, model)
        w = name(selected(model, branch.w))
        side1 = [name(v) for v in branch.path1.nodes(model)]
        side2 = [name(v) for v in branch.path2.nodes(model)]
        return _split_finding(dag, model, label,
                              TupleTree(source_path(pipelined_view(flow), w), side1, side2))

    return [Case(base + ends + chained, describe_chain, smallness(dag)),
            Case(base + ends + branched, describe_branch, smallness(dag), base + ends + loosely)]

