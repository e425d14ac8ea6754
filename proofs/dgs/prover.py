"""``check-dgs --prove``: C1-C3 proved with Z3 where possible, and exact about the scope.

For each condition, in order:

1. **For all states** (:mod:`proofs.dgs.conditions` from arbitrary states of each state type's
   sampled shape). No violating path: *proved* - "for all states of shape ...". The domain
   is a superset of the checker's (every reachable state has a sampled shape, assuming the
   samples saw every shape), so a proof covers the checker's domain.
2. A violating path over all states may be unreachable (the key counter's C1 is false for
   arbitrary ``s1``, ``s2``, true for those a fork produces). So it is **never reported as
   such**: we search a *reachable* counterexample - histories of up to ``depth`` events from
   ``init`` with symbolic payloads, the failing skeleton first. A model is turned into a
   concrete instance of the checker's domain and re-evaluated by ``spec.dgs.consistency``;
   only a confirmed violation is reported ("violated", method z3).
3. If that search explored *every* path from *every* history up to ``depth`` (within
   ``search_seconds``) without a violation, that is a bounded proof: "for all executions up
   to depth k" (sequential histories), and the hypothesis examples are run as well.
4. Otherwise - the symbolic run is unsupported (e.g. the code hashes a symbolic value), the
   path budget or the search time is exceeded - the condition is tested with the reference
   checker's hypothesis examples instead, and the scope says so ("not provable symbolically:
   tested N examples instead").
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable

from proofs.dgs import conditions as C
from proofs.dgs.shapes import EventTemplates, Shape, generalize, instances, sample
from proofs.dgs.symbolic import OutOfTime, PathLimit, Unsupported
from reference.dgs.checker import ConditionResult, ConsistencyReport, check_condition
from reference.dgs.report import counterexample_for
from spec.dgs.consistency import Evaluation, evaluate_c1, evaluate_c2, evaluate_c3
from spec.dgs.program import Program, describe_error
from spec.errors import InputError

EVALUATE: dict[str, Callable[[Program, Any], Evaluation]] = {
    "C1": evaluate_c1, "C2": evaluate_c2, "C3": evaluate_c3}


@dataclass(frozen=True)
class ProveSettings:
    """Bounds of the symbolic search (see the module docstring)."""

    depth: int = 3
    branch_events: int = 1
    max_paths: int = 20_000
    timeout_ms: int = 10_000
    examples: int = 200
    seed: int = 0
    search_seconds: float = 60.0
    all_states_seconds: float = 300.0
    max_skeletons: int = 20_000


@dataclass(frozen=True)
class ProofReport:
    """The checker's report plus, per condition, the scope of what was established."""

    report: ConsistencyReport
    scopes: dict[str, str] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        """``check-dgs --json`` with ``conditions[C]["scope"]`` added."""
        data = self.report.to_json()
        for condition, scope in self.scopes.items():
            data["conditions"][condition]["scope"] = scope
        return data


class _Symbolic:
    """The symbolic setting of one program: sampled shapes and event templates."""

    def __init__(self, program: Program, settings: ProveSettings) -> None:
        self.program = program
        self.settings = settings
        self.deadline: float | None = None  # of the condition being attempted (a budget)
        samples = sample(program, examples=max(50, settings.examples // 2), seed=settings.seed)
        self.events = EventTemplates(program, samples.events)
        self.shapes: dict[str, Shape | None] = {
            name: generalize(samples.states[name]) if samples.states.get(name) else None
            for name in program.state_types
        }

    def relevant_types(self, condition: str) -> list[str]:
        if condition == "C3":
            return list(self.program.state_types)
        return sorted({f.source for f, _ in self.program.fork_join_pairs()})

    def all_states_scope(self, condition: str, types: list[str]) -> str:
        known = [(t, shape) for t in types if (shape := self.shapes.get(t)) is not None]
        shapes = "; ".join(f"{t}: {shape.describe()}" for t, shape in known)
        what = {"C1": f"every fork/join pair, all independent fork predicates, every event e and up "
                      f"to {self.settings.branch_events} event(s) on each wire before e",
                "C2": "every fork/join pair and all independent fork predicates",
                "C3": "every pair of independent events"}[condition]
        return (f"proved with Z3 for all states ({shapes or 'no state type has a fork'}), {what}; "
                f"event payloads: {self.events.describe()}")

    def explore_all(self, skeletons: list[C.Skeleton]) -> C.Skeleton | None:
        """The first skeleton with a violating path, or None. Too many skeletons, or more
        than ``all_states_seconds`` spent, is Unsupported (the caller falls back)."""
        if len(skeletons) > self.settings.max_skeletons:
            raise Unsupported(f"{len(skeletons)} symbolic cases, more than {self.settings.max_skeletons}")
        deadline = time.monotonic() + self.settings.all_states_seconds
        for skeleton in skeletons:
            self.check_budget()
            if time.monotonic() > deadline:
                raise Unsupported(f"more than {self.settings.all_states_seconds:.0f} s")
            _, model = C.explore(skeleton, max_paths=self.settings.max_paths,
                                 timeout_ms=self.settings.timeout_ms, deadline=self.deadline)
            if model is not None:
                return skeleton
        return None

    def check_budget(self) -> None:
        """:class:`OutOfTime` past the attempted condition's budget."""
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise OutOfTime("the time budget ran out")

    def all_states(self, condition: str) -> tuple[list[C.Skeleton], C.Skeleton | None]:
        skeletons: list[C.Skeleton] = []
        for state_type in self.relevant_types(condition):
            shape = self.shapes.get(state_type)
            if shape is None:
                raise Unsupported(f"no shape for the states of {state_type!r}")
            for state in instances(shape, f"s:{state_type}"):
                start = C.Start(state_type, self.program.state_types[state_type].pred, state=state)
                skeletons += C.skeletons(self.program, condition, start, self.events,
                                         self.settings.branch_events)
        return skeletons, self.explore_all(skeletons)

    def reachable(self, condition: str, failing: C.Skeleton) -> "_Search":
        """Search a violation reachable from ``init`` by a history of <= depth events (the
        failing skeleton first); confirmed by the spec before it counts."""
        program = self.program
        search = _Search()
        deadline = time.monotonic() + self.settings.search_seconds
        tags = [t for t in self.events.tags if t in program.tags]
        for depth in range(self.settings.depth + 1):
            for tag_seq in _tag_sequences(tags, depth):
                history = tuple(self.events.fresh(tag, f"h{i}")[0] for i, tag in enumerate(tag_seq))
                start = C.Start(program.initial, program.tags, history=history)
                self._search_from(condition, failing, start, search, deadline)
                if search.found is not None:
                    search.depth = depth
                    return search
                if not search.complete:
                    return search
        return search

    def _search_from(self, condition: str, failing: C.Skeleton, start: C.Start, search: "_Search",
                     deadline: float) -> None:
        candidates = C.skeletons(self.program, condition, start, self.events, self.settings.branch_events)
        candidates.sort(key=lambda s: s.key != failing.key)
        for skeleton in candidates:
            self.check_budget()
            if time.monotonic() > deadline:
                search.complete = False
                return
            _, model = C.explore(skeleton, max_paths=self.settings.max_paths,
                                 timeout_ms=self.settings.timeout_ms, deadline=self.deadline)
            if model is None:
                continue
            instance = C.concrete_instance(skeleton, model)
            try:
                evaluation = EVALUATE[condition](self.program, instance)
            except InputError:
                evaluation = None
            if evaluation is not None and not evaluation.holds:
                search.found = (instance, evaluation)
                return
            search.complete = False  # a path the spec does not confirm: stop claiming a proof
            return


@dataclass
class _Search:
    """The outcome of the reachable-counterexample search: a confirmed violation (with the
    history length), or ``complete`` when every path from every history up to the depth was
    explored and none violates (a bounded proof)."""

    found: tuple[Any, Evaluation] | None = None
    complete: bool = True
    depth: int = 0


def _tag_sequences(tags: list[Any], depth: int) -> list[tuple[Any, ...]]:
    seqs: list[tuple[Any, ...]] = [()]
    for _ in range(depth):
        seqs = [s + (t,) for s in seqs for t in tags]
    return seqs


@dataclass(frozen=True)
class Attempt:
    """What the symbolic part alone established for one condition, in ``seconds``:
    ``status`` is ``proved`` (for all states of the sampled shapes) or ``violated`` (a
    counterexample reachable from init, confirmed by the spec) - both with ``result`` -, or
    ``bounded`` (no violation in any history up to the depth; the caller tests as well),
    ``no answer`` (the time budget ran out), ``unsupported`` (the code cannot run
    symbolically, or the search stopped on its own limits). ``scope`` is what was
    established, or why not."""

    condition: str
    status: str
    seconds: float
    scope: str
    result: ConditionResult | None = None

    @property
    def answered(self) -> bool:
        """True iff proved or refuted (the caller need not test)."""
        return self.result is not None

    def to_json(self) -> dict[str, Any]:
        """``check-dgs --json``'s ``conditions[C]["prover"]``."""
        return {"status": self.status, "seconds": round(self.seconds, 3), "scope": self.scope}


def attempt(symbolic: _Symbolic, condition: str, budget: float | None = None) -> Attempt:
    """The symbolic part of :func:`prove_condition` for one condition, within ``budget``
    seconds (None: only the settings' own limits). Never tests examples."""
    program, settings = symbolic.program, symbolic.settings
    start = time.monotonic()
    symbolic.deadline = None if budget is None else start + budget

    def done(status: str, scope: str, result: ConditionResult | None = None) -> Attempt:
        symbolic.deadline = None
        return Attempt(condition, status, time.monotonic() - start, scope, result)

    try:
        skeletons, failing = symbolic.all_states(condition)
        if failing is None:
            types = symbolic.relevant_types(condition)
            return done("proved", symbolic.all_states_scope(condition, types),
                        ConditionResult(condition, "proved", method="z3", checked=len(skeletons)))
        search = symbolic.reachable(condition, failing)
        if search.found is not None:
            instance, evaluation = search.found
            cex = counterexample_for(program, instance, evaluation)
            return done("violated", f"Z3 counterexample reachable from init by {search.depth} event(s), "
                        "confirmed by evaluating the spec on it",
                        ConditionResult(condition, "violated", method="z3", checked=1, counterexample=cex))
        reason = (f"Z3 finds a violation for some states of the sampled shape, but none reachable "
                  f"within {settings.depth} events (those states may be unreachable)")
        if search.complete:
            return done("bounded", (
                f"for all executions up to depth {settings.depth}: proved with Z3 for every "
                f"sequential history of at most {settings.depth} events from init (string "
                f"payloads: the first sampled value; C1: up to {settings.branch_events} event(s) "
                f"on each wire before e); not for all states: {reason}"))
        return done("unsupported", reason)
    except OutOfTime:
        return done("no answer", f"Z3 did not answer within the {budget:g} s budget")
    except (Unsupported, PathLimit) as error:
        return done("unsupported", f"the code cannot run symbolically ({error})")
    except InputError:
        symbolic.deadline = None
        raise
    except Exception as error:  # noqa: BLE001 - user code on symbolic values may raise anything
        return done("unsupported", f"the code cannot run symbolically ({describe_error(error)})")


def prove_condition(symbolic: _Symbolic, condition: str) -> tuple[ConditionResult, str]:
    """Establish one condition (see the module docstring): the result and its scope."""
    program, settings = symbolic.program, symbolic.settings
    tried = attempt(symbolic, condition)
    if tried.result is not None:
        return tried.result, tried.scope
    tested = check_condition(program, condition, examples=settings.examples, seed=settings.seed)
    if tried.status == "bounded":
        if not tested.holds:
            return tested, f"tested {tested.examples} examples: hypothesis found a violation"
        bounded = ConditionResult(condition, "holds", method="z3-bounded+hypothesis",
                                  examples=tested.examples, checked=tested.checked)
        return bounded, (f"{tried.scope}; also tested {tested.examples} examples "
                         f"({tested.checked} in the domain)")
    small = f"; {tested.exhaustive.text()}" if tested.exhaustive is not None else ""
    return tested, (f"not provable symbolically: {tried.scope}; tested {tested.examples} examples "
                    f"instead ({tested.checked} in the domain){small}")


def symbolic_setting(program: Program, settings: ProveSettings) -> _Symbolic:
    """The sampled shapes and event templates of ``program`` (shared by its conditions)."""
    return _Symbolic(program, settings)


def prove_consistency(program: Program, settings: ProveSettings | None = None,
                      conditions: tuple[str, ...] = ("C1", "C2", "C3")) -> ProofReport:
    """C1-C3 for ``program``, each proved, refuted with a confirmed counterexample, or
    tested, with its scope."""
    settings = settings or ProveSettings()
    symbolic = symbolic_setting(program, settings)
    results = []
    scopes = {}
    for condition in conditions:
        result, scope = prove_condition(symbolic, condition)
        results.append(result)
        scopes[condition] = scope
    return ProofReport(ConsistencyReport(program.name, tuple(results), settings.seed), scopes)
