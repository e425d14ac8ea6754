"""Hypothesis strategies for random Fries scenarios (dataflow, functions, sources,
reconfigurations, workers) - importable by the conformance suite and by users' tests.

:func:`scenarios` draws a :class:`~spec.fries.scenario.Scenario` with the default (calm)
timing; add delays, stragglers and control-message delays with
:func:`conformance.fries.cases.timing.with_timing`. What is drawn:

* a random DAG of 1-2 sources and up to ``max_operators`` operators in total, every
  operator of every kind (one-to-one, one-to-many, replicate, blocking), each operator with
  1-2 parents among the earlier ones (so every operator is reachable from a source), some
  flagged ``unique``;
* a function from the catalogue fitting each operator's kind - often an order-sensitive one
  (``fold`` on one-to-one and one-to-many operators, ``digest`` on blocking ones, about one
  function in three), so that an object processing its input out of channel order (e.g.
  buffered new-version input before older buffered input) emits other values and is caught
  by the oracles of :mod:`spec.fries.consistency`; ``order_sensitive=False`` draws only the
  commutative functions (for the multi-version scheduler, which supports only those);
* workers: some operators (sources too) get 2-3 workers (hash partitioning, Fries §7.2);
* a few source tuples per source (small keys so workers and routing collide);
* 1-2 reconfigurations, each updating 1-3 operators with a new function and an affine state
  transformation, requested after a random number of source tuples.

A ``unique`` flag is a *claim* about the operator (at most one output tuple per data
transaction, Fries Alg. 4); drawn at random it can be false for a given run. The simulator
reports the operators whose claim a run broke (``SimulationResult.uniqueness_violations``);
the uniqueness pruning rule, and so the guarantee, only holds for runs that kept the claim.
"""

from __future__ import annotations

from hypothesis import strategies as st

from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.scenario import (
    Function,
    Reconfiguration,
    Scenario,
    SourceTuple,
    StateTransform,
    Update,
)

_KINDS = (OperatorKind.ONE_TO_ONE, OperatorKind.ONE_TO_ONE, OperatorKind.ONE_TO_ONE,
          OperatorKind.ONE_TO_MANY, OperatorKind.REPLICATE, OperatorKind.BLOCKING)


#: Fold multipliers: 2, 3 and -1 make the fold non-commutative, 0 keeps the last value, 1 a
#: running sum whose emitted prefix sums still reveal the order.
FOLD_MULS = (2, 3, -1, 0, 1, 2, 3)


def functions_for(kind: OperatorKind, order_sensitive: bool = True) -> st.SearchStrategy[Function]:
    """A catalogue function fitting an operator of ``kind`` (spec.fries.catalogue); with
    ``order_sensitive`` the order-sensitive ``fold`` / ``digest`` are drawn about as often as
    the commutative ones together."""
    maps = st.builds(lambda a, b: Function("map", (("mul", a), ("add", b))),
                     st.integers(-2, 3), st.integers(-3, 3))
    filters = st.integers(2, 3).flatmap(lambda m: st.integers(0, m - 1).map(
        lambda r: Function("filter", (("mod", m), ("rem", r)))))
    folds = st.sampled_from(FOLD_MULS).map(lambda a: Function("fold", (("mul", a),)))
    if kind is OperatorKind.ONE_TO_ONE:
        return st.one_of(maps, filters, folds, folds) if order_sensitive else st.one_of(maps, filters)
    if kind is OperatorKind.ONE_TO_MANY:
        fanouts = st.integers(0, 2).map(lambda c: Function("fanout", (("copies", c),)))
        return st.one_of(fanouts, fanouts, maps, filters, *([folds] if order_sensitive else []))
    if kind is OperatorKind.REPLICATE:
        return st.just(Function("replicate"))
    if kind is OperatorKind.BLOCKING:
        sums = st.builds(lambda a, b: Function("sum", (("mul", a), ("add", b))),
                         st.integers(-2, 3), st.integers(-3, 3))
        digests = st.builds(lambda a, b: Function("digest", (("mul", a), ("add", b))),
                            st.sampled_from(FOLD_MULS), st.integers(-3, 3))
        return st.one_of(sums, digests) if order_sensitive else sums
    raise ValueError(f"no functions for {kind.value}")


@st.composite
def dataflows(draw: st.DrawFn, max_operators: int = 6, *, min_inner: int = 1,
              kinds: tuple[OperatorKind, ...] = _KINDS, max_parents: int = 2) -> Dataflow:
    """A random DAG (see the module docstring); ``min_inner`` non-source operators at least,
    their kinds drawn from ``kinds``, each with 1 to ``max_parents`` parents."""
    n_sources = draw(st.integers(1, 2))
    n_inner = draw(st.integers(min(min_inner, max(1, max_operators - n_sources)), max(1, max_operators - n_sources)))
    operators = [Operator(f"S{i}", OperatorKind.SOURCE) for i in range(n_sources)]
    edges: list[tuple[str, str]] = []
    for i in range(n_inner):
        name = chr(ord("A") + i)
        kind = draw(st.sampled_from(kinds))
        unique = draw(st.integers(0, 5)) == 0
        earlier = [op.name for op in operators if op.kind is not OperatorKind.BLOCKING or draw(st.booleans())]
        if not earlier:
            earlier = [operators[0].name]
        parents = draw(st.lists(st.sampled_from(earlier), min_size=1, max_size=max_parents, unique=True))
        operators.append(Operator(name, kind, unique))
        edges.extend((parent, name) for parent in parents)
    return Dataflow(tuple(operators), tuple(edges))


@st.composite
def reconfigurations(draw: st.DrawFn, flow: Dataflow, total: int, order_sensitive: bool = True) -> Reconfiguration:
    """One reconfiguration of 1-3 non-source operators of ``flow``."""
    candidates = [n for n in flow.names if flow.kind(n) is not OperatorKind.SOURCE]
    chosen = draw(st.lists(st.sampled_from(candidates), min_size=1, max_size=min(3, len(candidates)),
                           unique=True))
    updates = {}
    for name in chosen:
        function = draw(functions_for(flow.kind(name), order_sensitive))
        transform = StateTransform(draw(st.integers(0, 3)), draw(st.integers(-2, 2)))
        updates[name] = Update(function, transform)
    return Reconfiguration(draw(st.integers(0, total)), updates)


@st.composite
def scenarios(draw: st.DrawFn, max_operators: int = 6, max_tuples: int = 6,
              max_reconfigurations: int = 2, workers: bool = True, order_sensitive: bool = True,
              flows: st.SearchStrategy[Dataflow] | None = None) -> Scenario:
    """A random scenario with calm timing (see the module docstring); ``flows`` draws the
    dataflow (default :func:`dataflows` of ``max_operators``)."""
    flow = draw(flows if flows is not None else dataflows(max_operators))
    functions = {n: draw(functions_for(flow.kind(n), order_sensitive))
                 for n in flow.names if flow.kind(n) is not OperatorKind.SOURCE}
    sources = {}
    for name in flow.names:
        if flow.kind(name) is OperatorKind.SOURCE:
            pairs = draw(st.lists(st.tuples(st.integers(0, 4), st.integers(-3, 9)), max_size=max_tuples))
            sources[name] = tuple(SourceTuple(f"{name}:{i}", k, v) for i, (k, v) in enumerate(pairs))
    total = sum(len(t) for t in sources.values())
    count = draw(st.integers(1, max_reconfigurations))
    drawn = [draw(reconfigurations(flow, total, order_sensitive)) for _ in range(count)]
    reconfigs = tuple(sorted(drawn, key=lambda r: r.at))
    parallelism: dict[str, int] = {}
    if workers:
        for name in flow.names:
            if draw(st.integers(0, 3)) == 0:
                parallelism[name] = draw(st.integers(2, 3))
    return Scenario(flow, functions, sources, reconfigs, parallelism)


#: Kinds of :func:`mcs_shapes`: one-to-many and replicate operators as often as the others, so
#: chains of several one-to-many ancestors (Alg. 3's "earliest") and every pruning rule occur.
MCS_KINDS = (OperatorKind.ONE_TO_MANY, OperatorKind.REPLICATE, OperatorKind.ONE_TO_ONE, OperatorKind.ONE_TO_MANY,
             OperatorKind.REPLICATE, OperatorKind.ONE_TO_ONE, OperatorKind.BLOCKING)


def mcs_shapes() -> st.SearchStrategy[Scenario]:
    """Scenarios for the Spark-free MCS check (``conformance.fries.driver_oracles.mcs``): 4-8 non-source
    operators with 1-3 parents each, one-to-many and replicate operators drawn as often as the
    rest; no source tuples (the shapes are never run, only their requests' MCS compared)."""
    flows = dataflows(10, min_inner=4, kinds=MCS_KINDS, max_parents=3)
    return scenarios(max_tuples=0, flows=flows)
