"""Non-trivial DGS cases for the differential suite ("DGS on Spark for real").

A case is a shipped consistent example program (``reference.dgs.examples.CONSISTENT``), a
P-valid synchronization plan, a valid input instance on three streams, and how the input
reaches the executor: per-stream delays and jitter (reordering across streams), the driver's
polling period ``tick`` and the ``inline_below`` runtime optimization.

Drawn from hypothesis: a seeded ``random.Random`` and, per program, a pool of events from the
program's own ``events()`` strategy (filtered to pools with two tags at least one dependent
pair: a pool of one increment only could never synchronize). :func:`build` then makes every
choice with the ``Random``, so cases are uniform rather than hypothesis's small-first order
(hypothesis's order drew, at seed 5, 7 of the first 8 cases without an event and 4 with a one-worker plan), and
*non-trivial by construction*:

* the plan has at least two leaves (so forks and joins): 20 % of the cases of programs whose
  initial state type forks into itself use ``spark_impl.dgs.plans.balanced_plan`` (the plans
  ``dgs-plan`` and the live front end build), the others are built top-down like
  ``reference.dgs.strategies.valid_plans`` (split the non-kept tags along the dependence
  graph's components, V1 and V2 hold by construction), forking with high probability;
* the events are 5-20 leaf events and 1-4 synchronizing events (routed to a worker with
  children, so the executor must gather, join, process and fork back); a plan whose workers with children own no implementation
  tag of the pool is redrawn;
* timestamps may tie across streams (order key ``(ts, stream)``), heartbeats are sprinkled,
  every stream ends with a heartbeat (Def. 3.3 progress);
* *dense* cases (``build(..., dense=True)``; the suite makes every third round of the
  programs dense): 3-5 synchronizing events of one worker alternating with short runs of 1-3 leaf events, in one
  driver tick, ``inline_below`` 5, little delay - so consecutive synchronizing groups,
  short leaf segments between two groups of the same worker (the inlining optimization),
  and synchronizing events between dependent leaf events occur in every such case.

:func:`case_to_json` / :func:`case_from_json` are the replay form (plan and streams in their
``spec.dgs`` JSON forms; event tuples become arrays and back).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, replace
from itertools import count
from typing import Any, Hashable, Iterator, Sequence

from hypothesis import strategies as st

from spec.dgs.loader import load_program
from spec.dgs.plan import Plan, Worker, plan_from_json
from spec.dgs.program import Program
from spec.dgs.streams import Heartbeat, Item, StreamEvent, Streams, streams_from_json, streams_to_json
from spec.errors import InputError
from spec.jsonio import expect_int, expect_object, expect_str

from reference.dgs.examples import CONSISTENT, target
from reference.dgs.strategies import components, impl_universe

import spark_impl.dgs.plans as dgs_plans
import spark_impl.dgs.topology as dgs_topology

from conformance.core.cases import draw_cases
from conformance.core.results import SuiteResult

STREAMS = ("s0", "s1", "s2")
POOL = 16
TICKS = (1, 3, 8, 20, 1_000_000)
INLINE = (0, 0, 2, 5)
SYNCS = 4
BALANCED = 0.2
"""Share of the (non-dense) cases of programs with a one-type fork that use a balanced plan."""
RESTRICTED = 0.4
"""Share of the other non-dense cases whose plan handles only some implementation tags
(:func:`restricted_universe`)."""


@dataclass(frozen=True)
class DgsCase:
    """One case (module docstring); ``name`` is a shipped example ``file.py:NAME``."""

    name: str
    plan: Plan
    streams: Streams
    seed: int
    max_delay: int = 10
    max_jitter: int = 3
    tick: int = 40
    inline_below: int = 0


_PROGRAMS: dict[str, Program] = {}


def program_of(name: str) -> Program:
    """A shipped example program, loaded once."""
    program = _PROGRAMS.get(name)
    if program is None:
        program = _PROGRAMS[name] = load_program(target(name))
    return program


def _rich(program: Program, pool: Sequence[Any]) -> bool:
    tags = {program.tag(e) for e in pool}
    return len(tags) >= 2 and any(program.depends(a, b) for a in tags for b in tags)


def seeds(programs: Sequence[str] = CONSISTENT) -> st.SearchStrategy[tuple[random.Random, dict[str, list[Any]]]]:
    """A ``Random`` and an event pool per program (module docstring)."""
    def pool(name: str) -> st.SearchStrategy[list[Any]]:
        program = program_of(name)
        return st.lists(program.event_strategy, min_size=POOL, max_size=POOL).filter(lambda p: _rich(program, p))

    pools: st.SearchStrategy[dict[str, list[Any]]] = st.fixed_dictionaries({name: pool(name) for name in programs})
    return st.tuples(st.randoms(use_true_random=True), pools)


def build(name: str, rng: random.Random, pool: Sequence[Any], dense: bool = False) -> DgsCase:
    """A non-trivial case of program ``name``; ``dense``: a dense one (module docstring)."""
    program = program_of(name)
    for _ in range(50):
        restricted = not dense and rng.random() < RESTRICTED
        universe = restricted_universe(program, rng) if restricted else impl_universe(program, STREAMS)
        plan = (balanced(program, rng) if not dense and rng.random() < BALANCED else None) or random_plan(
            program, rng, universe=universe)
        owners = {impl: w for w in plan.workers() for impl in w.impl_tags}
        kinds = {impl: bool(w.children) for impl, w in owners.items()}
        usable = [(e, s) for e in pool for s in STREAMS if (program.tag(e), s) in kinds]
        if len(plan.root.children) == 2 and {kinds[(program.tag(e), s)] for e, s in usable} == {True, False}:
            if dense:
                return DgsCase(name, plan, _dense_streams(program, rng, usable, owners), rng.randint(0, 10_000),
                               max_delay=rng.choice((0, 3)), max_jitter=rng.choice((0, 2)), tick=1_000_000,
                               inline_below=5)
            held = _held_behind(program, rng, usable, universe) if restricted else None
            streams = _streams(program, rng, usable, kinds, held)
            if held is not None:  # the late stream must lag in arrival too: small delays, several ticks
                return DgsCase(name, plan, streams, rng.randint(0, 10_000), max_delay=rng.choice((0, 1)),
                               max_jitter=rng.choice((0, 1)), tick=rng.choice((1, 3)),
                               inline_below=rng.choice(INLINE))
            return DgsCase(name, plan, streams, rng.randint(0, 10_000), max_delay=rng.choice((0, 3, 10, 25)),
                           max_jitter=rng.choice((0, 2, 5)), tick=rng.choice(TICKS),
                           inline_below=rng.choice(INLINE))
    raise InputError(f"no plan of {name} with forks and synchronizing events in 50 draws", "dgs cases")


def balanced(program: Program, rng: random.Random) -> Plan | None:
    """A plan of :func:`spark_impl.dgs.plans.balanced_plan` (what ``dgs-plan`` and the live
    front end build): 30 % of the implementation tags at the root, the dependence components
    of the rest spread over 2-4 leaves. None for a program whose initial state type does not
    fork into itself (the multi-state-type examples) or when the plan is not P-valid."""
    pairs = [(f, j) for f, j in program.fork_join_pairs(program.initial)
             if (f.left, f.right) == (program.initial, program.initial)]
    if not pairs:
        return None
    fork, join = rng.choice(pairs)
    impls = impl_universe(program, STREAMS)
    root = [t for t in impls if rng.random() < 0.3]
    leaves: list[list[tuple[Hashable, str]]] = [[] for _ in range(rng.randint(2, 4))]
    for part in components(program, [t for t in impls if t not in root]):
        rng.choice(leaves).extend(part)
    plan = dgs_plans.balanced_plan(root, leaves, root_type=program.initial, root_prims=(fork.name, join.name))
    try:
        dgs_topology.check_valid_plan(program, plan)
    except InputError:
        return None
    return plan


def restricted_universe(program: Program, rng: random.Random) -> list[tuple[Hashable, str]]:
    """Implementation tags of streams that each carry only some of the program's tags (each
    pair kept with probability 1/2, every tag on at least one stream), as a user's streams do
    (one carries views, another updates): the mailbox's release streams ``D(tag, stream)``
    then differ between dependent tags, so an event can wait for a stream its dependent
    neighbour does not wait for - the release rule's fixpoint (an event stays held behind an
    earlier held dependent one) only matters in such plans."""
    kept = {(tag, s) for tag, s in impl_universe(program, STREAMS) if rng.random() < 0.5}
    for tag in program.sorted_tags:
        if not any(t == tag for t, _ in kept):
            kept.add((tag, rng.choice(STREAMS)))
    return [impl for impl in impl_universe(program, STREAMS) if impl in kept]


def random_plan(program: Program, rng: random.Random, max_depth: int = 3,
                universe: Sequence[tuple[Hashable, str]] | None = None) -> Plan:
    """A P-valid plan handling every implementation tag of ``universe`` (default: every tag on
    every one of :data:`STREAMS`), forking at each worker with probability 0.85 (0.5 below
    depth 1) and keeping each tag with probability 0.3."""
    ids = count()

    def make(impls: list[tuple[Hashable, str]], state_type: str, depth: int) -> Worker:
        worker_id = f"w{next(ids)}"
        pairs = program.fork_join_pairs(state_type)
        chance = 0.85 if depth >= max_depth - 1 else 0.5
        if depth == 0 or not pairs or rng.random() > chance:
            return Worker(worker_id, state_type, frozenset(impls))
        fork, join = rng.choice(pairs)
        left_pred = program.state_types[fork.left].pred
        right_pred = program.state_types[fork.right].pred
        keep = [t for t in impls if rng.random() < 0.3 or t[0] not in left_pred | right_pred]
        rest = [t for t in impls if t not in keep]
        left: list[tuple[Hashable, str]] = []
        right: list[tuple[Hashable, str]] = []
        for part in components(program, rest):
            tags = {t for t, _ in part}
            fits = [side for side, pred in ((left, left_pred), (right, right_pred)) if tags <= pred]
            if fits:
                rng.choice(fits).extend(part)
            else:
                keep += part
        children = (make(left, fork.left, depth - 1), make(right, fork.right, depth - 1))
        return Worker(worker_id, state_type, frozenset(keep), fork.name, join.name, children)

    return Plan(make(list(universe) if universe is not None else impl_universe(program, STREAMS), program.initial,
                     max_depth))


Held = tuple[str, list[tuple[Any, str]]]
"""A late stream and the events that open the case (:func:`_held_behind`)."""


def _held_behind(program: Program, rng: random.Random, usable: Sequence[tuple[Any, str]],
                 universe: Sequence[tuple[Hashable, str]]) -> Held | None:
    """The release rule's fixpoint, on purpose: events ``d1 < e < d2`` where ``d1, d2`` have a
    tag ``T`` dependent on ``e``'s tag ``σ``, on streams other than a *late* one that carries a
    tag ``U`` dependent on ``T`` but nothing dependent on ``σ``. Until the late stream's first
    item (``u``, after ``d2``) ``d1`` and ``d2`` are held, ``e``'s release streams are all
    past it, and only the held ``d1`` keeps ``e`` back. None when ``usable`` has no such shape."""
    def release_streams(tag: Hashable, stream: str) -> set[str]:
        return {stream} | {y for t, y in universe if program.depends(tag, t)}

    by_impl: dict[tuple[Hashable, str], list[tuple[Any, str]]] = {}
    for pair in usable:
        by_impl.setdefault((program.tag(pair[0]), pair[1]), []).append(pair)
    impls = sorted(by_impl, key=repr)
    shapes = [(late, d, e, u) for late in STREAMS for d in impls for e in impls for u in impls
              if late not in (d[1], e[1]) and u[1] == late and late not in release_streams(*e)
              and program.depends(e[0], d[0]) and program.depends(u[0], d[0])]
    if not shapes:
        return None
    late, d, e, u = rng.choice(shapes)
    first, middle, last = (rng.choice(by_impl[impl]) for impl in (d, e, u))
    return late, [first, middle, rng.choice(by_impl[d]), last]


def _streams(program: Program, rng: random.Random, usable: Sequence[tuple[Any, str]],
             kinds: dict[tuple[Hashable, str], bool], held: Held | None = None) -> Streams:
    """1-:data:`SYNCS` synchronizing events and 5-20 leaf events, heartbeats, ties across
    streams. (Each synchronizing group costs two shuffles per tick on Spark: more would make
    the suite slow without covering more of the executor.) ``held``: the case opens with
    :func:`_held_behind`'s events and its late stream is silent until ``u``."""
    by_kind = {k: [(e, s) for e, s in usable if kinds[(program.tag(e), s)] == k] for k in (True, False)}
    chosen = [rng.choice(by_kind[True]) for _ in range(rng.randint(1, SYNCS))]
    chosen += [rng.choice(by_kind[False]) for _ in range(rng.randint(5, 20))]
    rng.shuffle(chosen)
    if held is None:
        return _place(rng, chosen)
    late, opening = held
    early = [pair for pair in chosen if pair[1] != late]
    return _place(rng, opening[:3] + early + opening[3:] + [pair for pair in chosen if pair[1] == late], late)


def _place(rng: random.Random, chosen: Sequence[tuple[Any, str]], late: str | None = None) -> Streams:
    """Timestamp ``chosen`` in order (steps 0-3: ties across streams), with heartbeats."""
    items: dict[str, list[Item]] = {s: [] for s in STREAMS}
    last = {s: -1 for s in STREAMS}
    ts = 0
    for event, stream in chosen:
        ts += rng.choice((0, 1, 1, 2, 3))
        if rng.random() < 0.15:
            beat = rng.choice(STREAMS)
            if last[beat] < ts and not (beat == late and last[beat] < 0):  # ``late``: silent until its first event
                items[beat].append(Heartbeat(ts))
                last[beat] = ts
        if last[stream] >= ts:
            ts = last[stream] + 1
        items[stream].append(StreamEvent(ts, event))
        last[stream] = ts
    for stream in STREAMS:
        items[stream].append(Heartbeat(ts + 1))
    return items


def _dense_streams(program: Program, rng: random.Random, usable: Sequence[tuple[Any, str]],
                   owners: dict[tuple[Hashable, str], Worker]) -> Streams:
    """Synchronizing events of one worker (one below the root, 60 %, when there is one)
    alternating with 1-3 leaf events (of its subtree, 50 %; of any leaf otherwise: segments it
    may not inline)."""
    def worker(event: Any, stream: str) -> Worker:
        return owners[(program.tag(event), stream)]

    hosts = {worker(e, s).id: worker(e, s) for e, s in usable if worker(e, s).children}
    inner = sorted(h for h in hosts if h != "w0")  # w0: random_plan's root
    host = rng.choice(inner) if inner and rng.random() < 0.6 else rng.choice(sorted(hosts))
    syncs = [(e, s) for e, s in usable if worker(e, s).id == host]
    below = {w.id for w in hosts[host].walk()}
    everywhere = [(e, s) for e, s in usable if not worker(e, s).children]
    leaves = [(e, s) for e, s in everywhere if worker(e, s).id in below]
    leaves = leaves if leaves and rng.random() < 0.5 else everywhere  # also leaves outside the subtree
    chosen: list[tuple[Any, str]] = []
    for _ in range(rng.randint(3, 5)):
        chosen.append(rng.choice(syncs))
        chosen += [rng.choice(leaves) for _ in range(rng.randint(1, 3))]
    return _place(rng, chosen)


def case_to_json(case: DgsCase) -> dict[str, Any]:
    """The replay form of a case."""
    return {"program": case.name, "plan": case.plan.to_json(), "input": streams_to_json(case.streams),
            "seed": case.seed, "max_delay": case.max_delay, "max_jitter": case.max_jitter, "tick": case.tick,
            "inline_below": case.inline_below}


def case_from_json(value: Any, where: str = "case_data") -> DgsCase:
    """The inverse of :func:`case_to_json` (InputError naming the problem)."""
    obj = expect_object(value, where)
    name = expect_str(obj.get("program"), f"{where}.program")
    if name not in CONSISTENT:
        raise InputError(f"unknown program {name!r} (expected a shipped example: {', '.join(CONSISTENT)})",
                         f"{where}.program")
    numbers = {k: expect_int(obj.get(k), f"{where}.{k}") for k in ("seed", "max_delay", "max_jitter", "tick",
                                                                   "inline_below")}
    return DgsCase(name, plan_from_json(obj.get("plan"), f"{where}.plan"),
                   streams_from_json(obj.get("input"), f"{where}.input"), **numbers)


def draw_dgs_cases(n: int, seed: int) -> list[DgsCase]:
    """``n`` non-trivial cases, reproducibly from ``seed``: case ``i`` runs ``CONSISTENT[i % 6]``,
    every third round of the six programs dense (:func:`build`)."""
    programs = len(CONSISTENT)
    return [build(CONSISTENT[i % programs], rng, pools[CONSISTENT[i % programs]], dense=(i // programs) % 3 == 2)
            for i, (rng, pools) in enumerate(draw_cases(seeds(), n, seed))]


def shifted(case: DgsCase, by: int) -> DgsCase:
    """``case`` with every timestamp moved by ``by`` (the same instance otherwise: Def. 3.3 asks
    only that a stream's timestamps increase; a negative one is valid)."""
    return replace(case, streams={stream: [replace(item, ts=item.ts + by) for item in items]
                                  for stream, items in case.streams.items()})


def candidates(case: DgsCase) -> Iterator[DgsCase]:
    """Simpler cases: the one-worker plan, no delays, one tick, no inlining, then a stream
    without any event, then a stream without one event. Heartbeats stay, so each candidate is
    a valid input instance."""
    program = program_of(case.name)
    if case.plan.root.children:
        sequential = Plan(Worker("w0", program.initial, frozenset(impl_universe(program, STREAMS))))
        yield replace(case, plan=sequential)
    if case.max_delay or case.max_jitter:
        yield replace(case, max_delay=0, max_jitter=0)
    if case.tick != 1_000_000:
        yield replace(case, tick=1_000_000)
    if case.inline_below:
        yield replace(case, inline_below=0)
    for stream, items in case.streams.items():
        events = [i for i, item in enumerate(items) if isinstance(item, StreamEvent)]
        if len(events) > 1:
            yield replace(case, streams={**case.streams, stream: [x for x in items if not isinstance(x, StreamEvent)]})
        for i in events:
            yield replace(case, streams={**case.streams, stream: list(items[:i]) + list(items[i + 1:])})


def size(case: DgsCase) -> int:
    """The events of ``case`` (what shrinking makes smaller)."""
    return sum(1 for items in case.streams.values() for item in items if isinstance(item, StreamEvent))


def count_features(result: SuiteResult, drawn: Sequence[DgsCase]) -> None:
    """Count what the drawn cases exercise in the result's features."""
    for case in drawn:
        features = result.features
        features[case.name.split(":")[1]] += 1
        workers = list(case.plan.workers())
        if sum(1 for w in workers if not w.children) >= 3:
            features["plans with 3+ leaves"] += 1
        if case.max_delay or case.max_jitter:
            features["delayed / reordered input"] += 1
        if case.tick < 1_000_000:
            features["several driver ticks"] += 1
        if case.inline_below:
            features["inline_below > 0"] += 1
        impls = {impl for w in workers for impl in w.impl_tags}
        if len(impls) < len({t for t, _ in impls}) * len(STREAMS):
            features["streams carrying some tags only"] += 1
