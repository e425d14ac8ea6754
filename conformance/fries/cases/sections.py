"""The Fries suite's case sections: the random scenarios, the race cases, the ``stepped`` path's
targeted cases, and the transformations every drawn case goes through (``unique`` claims that
hold, a restart while a request is being released, the live path's view of a case).

Each section is drawn reproducibly from the run's seed (:func:`conformance.core.cases.draw_cases`).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from spec.fries.dataflow import Dataflow
from spec.fries.scenario import Scenario

from reference.fries import simulator

from conformance.core.cases import draw_cases
from conformance.fries.cases import scenarios as generators
from conformance.fries.cases.alignment import PRUNING_SHAPES, alignment_probes, pruning_probes, with_second_request
from conformance.fries.cases.streams import stretch, stretched
from conformance.fries.cases.timing import with_timing
from conformance.fries.config import FriesConfig


def scenario_strategy() -> st.SearchStrategy[Scenario] | str:
    """Random scenarios with random timing, or why they cannot be generated here."""
    # a scenario whose source tuples reach no operator tests nothing: no data transaction can
    # conflict (a source without children drops its tuples; 10 of 120 drawn cases at seed 0)
    scenarios: st.SearchStrategy[Scenario] = generators.scenarios().filter(routes_data)
    return stretched(with_timing(scenarios))


def routes_data(scenario: Scenario) -> bool:
    """Some source tuple of ``scenario`` reaches an operator."""
    flow = scenario.dataflow
    return any(tuples and flow.children(name) for name, tuples in scenario.sources.items())


def race_strategy() -> st.SearchStrategy[Scenario] | str:
    """Race cases: a request reconfigures two operators on one path, streams are stretched 8x
    so the request lands after several micro-batches, and control messages are spread over
    seconds (timing profile ``race``) - the window in which an unaligned switch lets one
    transaction see the old function upstream and the new one downstream. Run in small
    batches (:attr:`FriesConfig.race_batch_size`): on Spark every case of a batch advances in
    lock step, so in a big batch one micro-batch outlasts every control delay."""
    base = scenario_strategy()
    if isinstance(base, str):
        return base
    raced = with_timing(generators.scenarios().filter(has_path_request), "race")
    return raced.map(lambda s: stretch(s, 8))


def has_path_request(scenario: Scenario) -> bool:
    """Some request reconfigures two operators one of which is upstream of the other, after
    at least one source tuple."""
    flow = scenario.dataflow
    return any(r.at >= 1 and any(flow.descendants(a) & set(r.updates) for a in r.updates)
               for r in scenario.reconfigurations)


def honest_claims(scenario: Scenario) -> Scenario:
    """``scenario`` without the ``unique`` claims that do not hold for it.

    A random ``unique`` flag is a claim (at most one output per data transaction, Fries
    Alg. 4) the generator cannot guarantee; a scheduler that prunes on a false claim may
    legitimately produce a non-serializable schedule. The reference simulator reports the
    operators whose claim a run broke; their flags are dropped (which only enlarges the MCS,
    never unsound). Without the simulator (or if it fails on the case) every claim is dropped."""
    flow = scenario.dataflow
    if not any(op.unique for op in flow.operators):
        return scenario
    try:
        broken: set[str] = set()
        for scheduler in ("fries", "epoch"):
            broken |= set(simulator.simulate(scenario, scheduler).uniqueness_violations)
    except Exception:  # noqa: BLE001 - the simulator failed: no claim can be confirmed
        broken = {op.name for op in flow.operators}
    if not broken:
        return scenario
    operators = tuple(replace(op, unique=op.unique and op.name not in broken) for op in flow.operators)
    return replace(scenario, dataflow=Dataflow(operators, flow.edges))


#: The ``stepped`` path's cases (one batch; :mod:`conformance.fries.engines.stepped`) by kind: alignment
#: probes, every MCS pruning shape and race cases; every other case has a restart while its
#: request's heads are being released.
STEPPED_KINDS = {"alignment": 4, **{shape: 1 for shape in PRUNING_SHAPES}, "race": 4}


def stepped_section(config: FriesConfig) -> list[Scenario]:
    """The ``stepped`` path's cases (:data:`STEPPED_KINDS`), drawn for the run's seed (the
    first, minimal draw of each kind is skipped: it is the same at every seed)."""
    race = race_strategy()
    drawn: list[Scenario] = []
    for number, (kind, n) in enumerate(STEPPED_KINDS.items()):
        # the one-to-many probe nested (S -> E -> F -> {A, B}): the earliest ancestor is synchronised
        strategy = alignment_probes() if kind == "alignment" else pruning_probes(kind, nested=True) \
            if kind != "race" else race
        if isinstance(strategy, str):
            continue
        cases = draw_cases(strategy, n + 1, config.seed * 1009 + 31 * number + 5)[1:]
        # two probes make a second request on the same component (alignment afresh)
        drawn += [with_second_request(c) if kind == "alignment" and i in (1, 2) else c for i, c in enumerate(cases)]
    # per-tuple costs only served the timing, which the stepped path replaces (and the epoch
    # path runs these cases too): dropped, so both run at batch speed
    untimed = [replace(sc, timing=replace(sc.timing, operator_cost={}, stragglers={})) for sc in drawn]
    return [honest_claims(restart_during_request(sc, 4 * (1 + i % 3)) if i % 2 else sc) for i, sc in enumerate(untimed)]


def restart_during_request(scenario: Scenario, after: int) -> Scenario:
    """``scenario`` crashing once ``after`` tuples past its first request's ``at`` were ingested
    (while the stepped path releases that request's heads)."""
    total = sum(len(t) for t in scenario.sources.values())
    first = min((r.at for r in scenario.reconfigurations), default=0)
    point = min(first + after, total - 1)
    if point < 1:
        return scenario
    return replace(scenario, timing=replace(scenario.timing, restarts=(point,)))


def race_section(race: st.SearchStrategy[Scenario], n: int, config: FriesConfig) -> list[Scenario]:
    """The ``n`` race-section cases in run order: each small batch of
    :attr:`FriesConfig.race_batch_size` starts with one probe and race cases fill the rest.
    Probes cycle through the alignment probe and the MCS pruning shapes
    (:mod:`conformance.fries.cases.alignment`), at least one of each whenever ``n`` allows
    (``n`` >= 4, i.e. every run of 20 cases or more). Without the probes an unaligned member is
    almost never observed on Spark (about 1 case in 200), and the pruning rules' shapes were
    left to chance."""
    if n <= 0:
        return []
    size = max(1, config.race_batch_size)
    kinds = ("alignment",) + PRUNING_SHAPES
    probes_n = min(n, max(-(-n // size), len(kinds)))
    drawn: list[list[Scenario]] = []
    for number, kind in enumerate(kinds):
        strategy = alignment_probes() if kind == "alignment" else pruning_probes(kind)
        count = len(range(number, probes_n, len(kinds)))  # how often probe i % len(kinds) == number
        drawn.append([honest_claims(s) for s in draw_cases(strategy, count, config.seed + number)])
    ordered = [drawn[i % len(kinds)].pop(0) for i in range(probes_n)]  # alignment, one-to-many, ...
    races = [honest_claims(s) for s in draw_cases(race, n - probes_n, config.seed)]
    out: list[Scenario] = []
    while ordered or races:
        if ordered:
            out.append(ordered.pop(0))
        out.extend(races[: size - 1])
        del races[: size - 1]
    return out


def live_case(scenario: Scenario) -> Scenario:
    """``scenario`` as the live path runs and judges it: no source reordering (the files fix
    the order); restarts kept (the first one is the driver crash)."""
    return replace(scenario, timing=replace(scenario.timing, reorder_bound=0))
