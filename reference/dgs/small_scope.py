"""Exhaustive small-scope search of C1-C3's domain (``spec.dgs.consistency``), before the
random search of :mod:`reference.dgs.checker`.

Random search finds a violation that needs one particular pair of fork predicates and one
particular history only by luck (a key counter whose join does not add the two sides'
counts is violated only when both predicates hold the same increment tag and neither holds
its read-reset). The tag set of a DGS program is finite and usually small, so we enumerate:

* **payloads** - a few events per tag, sampled once from the program's ``events()`` with a
  derandomized hypothesis run (the simplest events hypothesis produces first; every tag the
  strategy ever produced in :data:`SAMPLE_EXAMPLES` draws);
* **predicates** - every pair of independent fork predicates ``(pred1, pred2)`` implying the
  wire's and the child types' predicates (each tag: in neither, in pred1, in pred2, or in
  both when it is independent of itself), when there are at most :data:`MAX_PAIRS` of them
  per fork;
* **histories** - every sequence of sampled events, by *depth*: the total number of events
  before the condition's own ones (the history from ``init``, plus for C1 the updates ``u1``
  and ``u2`` of the two wires), depth 0, 1, 2, ... while the time budget lasts.

Every instance is evaluated by the spec (:func:`spec.dgs.consistency.evaluate_c1` ...), so a
violation found here is a violation of the spec's domain - never a false alarm. The search
reports exactly what it covered (:class:`Scope`): the deepest depth completed, the number of
payloads and predicate pairs, the instances evaluated. Histories are sequential (updates
only; fork/join blocks inside the history are left to the random search). Histories that
reach a state printing like one an earlier (shorter) history reached are skipped: the
instances from them are the same.
"""

from __future__ import annotations

import time
import warnings
from dataclasses import dataclass
from itertools import product
from typing import Any, Callable, Iterator, Sequence

from hypothesis import HealthCheck, given, settings
from hypothesis.errors import HypothesisDeprecationWarning, Unsatisfiable

from spec.dgs.consistency import (
    C1Instance,
    C2Instance,
    C3Instance,
    Evaluation,
    evaluate_c1,
    evaluate_c2,
    evaluate_c3,
    reach,
)
from spec.dgs.program import Event, Pred, Program, Tag
from spec.dgs.semantics import Update, Wire
from spec.errors import InputError

SAMPLE_EXAMPLES = 150
PAYLOADS_PER_TAG = 2
MAX_PAIRS = 5000
MAX_DEPTH = 3


@dataclass(frozen=True)
class Scope:
    """What the exhaustive search covered for one condition: every instance with at most
    ``depth`` events (``depth`` = -1: not even depth 0 finished), over ``events`` sampled
    events of ``tags`` tags and, per fork, every independent predicate pair
    (``all_pairs``; else the pairs were too many and only sampled ones were used)."""

    condition: str
    depth: int
    events: int
    tags: int
    all_pairs: bool
    instances: int
    seconds: float
    complete: bool
    found_at: int | None = None
    evaluated: int = 0

    def text(self) -> str:
        """The scope in words."""
        if self.found_at is not None:
            return (f"violation found by exhaustive search at depth {self.found_at} "
                    f"(instance {self.instances}, every shallower one holds)")
        if self.events == 0:
            return "exhaustive search skipped: events() produced no event"
        if self.depth < 0:
            return (f"exhaustive search did not finish depth 0 in {self.seconds:.1f}s "
                    f"({self.instances} instances)")
        pairs = "every independent fork-predicate pair" if self.all_pairs else \
            "the fork-predicate pairs of the program's splits"
        extent = "every depth" if self.complete else f"depth <= {self.depth}"
        if self.instances == 0:
            return (f"exhaustive search found no instance in its scope ({self.events} sampled "
                    f"events of {self.tags} tags, {pairs})")
        return (f"exhaustive for {extent} (events before the condition's own, from init, "
                f"sequential histories) over {self.events} sampled events of {self.tags} tags "
                f"and {pairs}: {self.instances} instances ({self.evaluated} distinct evaluated)")

    def to_json(self) -> dict[str, Any]:
        """The scope as JSON (``check-dgs --json``'s ``conditions[C]["exhaustive"]``)."""
        return {"depth": self.depth, "events": self.events, "tags": self.tags,
                "all_pairs": self.all_pairs, "instances": self.instances,
                "complete": self.complete, "found_at": self.found_at,
                "evaluated": self.evaluated, "text": self.text()}


@dataclass(frozen=True)
class Found:
    """A violating instance and the spec's evaluation of it."""

    instance: Any
    evaluation: Evaluation


def sample_events(program: Program, per_tag: int = PAYLOADS_PER_TAG,
                  examples: int = SAMPLE_EXAMPLES) -> tuple[Event, ...]:
    """Up to ``per_tag`` distinct events per tag from ``events()`` (derandomized, so the
    same program always gets the same sample), ordered by tag then by first appearance."""
    by_tag: dict[Tag, list[Event]] = {}
    seen: set[str] = set()

    failures: list[Exception] = []

    @settings(max_examples=examples, database=None, deadline=None, derandomize=True,
              report_multiple_bugs=False, suppress_health_check=list(HealthCheck))
    @given(program.event_strategy)
    def collect(event: Event) -> None:
        # an error in the user's code is kept and re-raised as itself after the run: raised
        # here, hypothesis would replay it and wrap it in a FlakyFailure (the dedup below
        # makes the replay pass)
        if failures:
            return
        try:
            key = print_key(event)
            if key is not None and key in seen:
                return
            if key is not None:
                seen.add(key)
            bucket = by_tag.setdefault(program.tag(event), [])
        except Exception as error:  # noqa: BLE001 - the user's error, re-raised below
            failures.append(error)
            return
        if len(bucket) < per_tag:
            bucket.append(event)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", HypothesisDeprecationWarning)
        try:
            collect()
        except Unsatisfiable:
            return ()  # the random search reports the strategy as bad input
        except BaseExceptionGroup as group:  # an error raised while drawing, wrapped
            raise _first_leaf(group) from None
    if failures:
        raise failures[0]
    order = {t: i for i, t in enumerate(program.sorted_tags)}
    return tuple(e for t in sorted(by_tag, key=order.__getitem__) for e in by_tag[t])


def print_key(value: Any) -> str | None:
    """``repr(value)`` to recognise values printing alike, or None when the user's value
    cannot be printed (a failing ``__repr__``, an integer beyond Python's digit limit): the
    caller then treats it as new (no deduplication, never a crash)."""
    try:
        return repr(value)
    except Exception:  # noqa: BLE001 - the value's own __repr__ / int-to-str limit
        return None


def _first_leaf(group: BaseExceptionGroup[BaseException]) -> BaseException:
    """The first exception inside ``group`` that is not itself a group (an InputError first)."""
    leaves: list[BaseException] = []
    pending: list[BaseException] = [group]
    while pending:
        error = pending.pop(0)
        if isinstance(error, BaseExceptionGroup):
            pending[:0] = list(error.exceptions)
        else:
            leaves.append(error)
    return next((e for e in leaves if isinstance(e, InputError)), leaves[0] if leaves else group)


def fork_pairs(program: Program, wire: Wire, left_type: str,
               right_type: str) -> tuple[list[tuple[Pred, Pred]], bool]:
    """Every independent ``(pred1, pred2)`` a fork of ``wire`` into the two types may get
    (the domain of :func:`reference.dgs.domain.draw_fork_preds`), and True; or, when there
    are more than :data:`MAX_PAIRS`, the program's ``splits`` that fit, and False."""
    left_ok = wire.pred & program.state_types[left_type].pred
    right_ok = wire.pred & program.state_types[right_type].pred
    tags = [t for t in program.sorted_tags if t in left_ok or t in right_ok]
    options: list[list[tuple[bool, bool]]] = []
    for t in tags:
        here = [(False, False)]
        if t in left_ok:
            here.append((True, False))
        if t in right_ok:
            here.append((False, True))
        if t in left_ok and t in right_ok and not program.depends(t, t):
            here.append((True, True))
        options.append(here)
    total = 1
    for here in options:
        total *= len(here)
    if total > MAX_PAIRS:
        fits = [(a, b) for a, b in (program.splits or ()) if a <= left_ok and b <= right_ok
                and program.independent_sets(a, b)]
        return fits, False
    pairs = []
    for choice in product(*options):
        p1 = frozenset(t for t, (a, _) in zip(tags, choice) if a)
        p2 = frozenset(t for t, (_, b) in zip(tags, choice) if b)
        if program.independent_sets(p1, p2):
            pairs.append((p1, p2))
    return pairs, True


def _sequences(events: Sequence[Event], allowed: Pred, length: int,
               tag_of: dict[int, Tag]) -> Iterator[tuple[Event, ...]]:
    usable = [e for i, e in enumerate(events) if tag_of[i] in allowed]
    return (tuple(s) for s in product(usable, repeat=length))


class _Search:
    """The enumeration for one program (shared sample, histories cached per depth)."""

    def __init__(self, program: Program, deadline: float) -> None:
        self.program = program
        self.deadline = deadline
        self.events = sample_events(program)
        self.tag_of = {i: program.tag(e) for i, e in enumerate(self.events)}
        self.instances = 0
        self.covered = 0
        self.all_pairs = True
        self.cut = False  # a generator stopped on the deadline (its depth did not finish)
        self._wires: dict[tuple[Event, ...], Wire] = {}
        self._checked: dict[str, set[str]] = {"C2": set(), "C3": set()}

    def expired(self) -> bool:
        """Past the deadline (a generator that stops for it sets ``cut``)."""
        if time.monotonic() > self.deadline:
            self.cut = True
        return self.cut

    def wire(self, prefix: tuple[Event, ...]) -> Wire:
        if prefix not in self._wires:
            self._wires[prefix] = reach(self.program, tuple(Update(e) for e in prefix))
        return self._wires[prefix]

    def prefixes(self, length: int) -> Iterator[tuple[Event, ...]]:
        """Histories from init of exactly ``length`` events (each within its wire's
        predicate: the initial wire has every tag, updates keep it)."""
        return _sequences(self.events, self.program.tags, length, self.tag_of)

    def new_state(self, wire: Wire, seen: set[str]) -> bool:
        """Record ``wire``'s state in ``seen``; False if a state that prints alike was there:
        its instances were (or are being) enumerated from a shorter history."""
        printed = print_key(wire.state)
        if printed is None:
            return True
        key = f"{wire.state_type}|{printed}"
        if key in seen:
            return False
        seen.add(key)
        return True

    def pairs(self, wire: Wire, left: str, right: str) -> list[tuple[Pred, Pred]]:
        found, complete = fork_pairs(self.program, wire, left, right)
        self.all_pairs = self.all_pairs and complete
        return found

    def c1(self, depth: int) -> Iterator[C1Instance]:
        """C1 instances with ``depth`` events before ``e`` (history + u1 + u2). Two predicate
        pairs whose forks print the same states give the same equation for the same u1, u2,
        e and side: it is evaluated once (``covered`` counts both)."""
        program = self.program
        seen: set[tuple[object, ...]] = set()
        states: set[str] = set()  # shorter histories come first and leave more room
        for before in range(depth + 1):
            for prefix in self.prefixes(before):
                if self.expired():
                    return
                wire = self.wire(prefix)
                if not self.new_state(wire, states):
                    continue
                history = tuple(Update(e) for e in prefix)
                for fork, join in program.fork_join_pairs(wire.state_type):
                    for p1, p2 in self.pairs(wire, fork.left, fork.right):
                        if self.expired():
                            return
                        forked = print_key(program.fork(fork.name, wire.state, p1, p2)) or object()
                        for n1 in range(depth - before + 1):
                            for u1 in _sequences(self.events, p1, n1, self.tag_of):
                                for u2 in _sequences(self.events, p2, depth - before - n1,
                                                     self.tag_of):
                                    for i, event in enumerate(self.events):
                                        tag = self.tag_of[i]
                                        for side, pred in (("left", p1), ("right", p2)):
                                            if tag not in pred:
                                                continue
                                            self.covered += 1
                                            key = (tuple(map(id, prefix)), fork.name, join.name, forked,
                                                   tuple(map(id, u1)), tuple(map(id, u2)), side, i)
                                            if key in seen:
                                                continue
                                            seen.add(key)
                                            yield C1Instance(history, fork.name, join.name,
                                                             p1, p2, u1, u2, side, event)

    def c2(self, depth: int) -> Iterator[C2Instance]:
        for prefix in self.prefixes(depth):
            if self.expired():
                return
            wire = self.wire(prefix)
            if not self.new_state(wire, self._checked["C2"]):
                continue
            history = tuple(Update(e) for e in prefix)
            for fork, join in self.program.fork_join_pairs(wire.state_type):
                forks: set[str] = set()
                for p1, p2 in self.pairs(wire, fork.left, fork.right):
                    self.covered += 1
                    forked = print_key(self.program.fork(fork.name, wire.state, p1, p2))
                    if forked is not None and forked in forks:
                        continue  # C2 depends on the predicates only through the fork's result
                    if forked is not None:
                        forks.add(forked)
                    yield C2Instance(history, fork.name, join.name, p1, p2)

    def c3(self, depth: int) -> Iterator[C3Instance]:
        program = self.program
        for prefix in self.prefixes(depth):
            wire = self.wire(prefix)
            if not self.new_state(wire, self._checked["C3"]):
                continue
            history = tuple(Update(e) for e in prefix)
            for i, e1 in enumerate(self.events):
                if self.expired():
                    return
                for j, e2 in enumerate(self.events):
                    t1, t2 = self.tag_of[i], self.tag_of[j]
                    if t1 in wire.pred and t2 in wire.pred and not program.depends(t1, t2):
                        self.covered += 1
                        yield C3Instance(history, e1, e2)


_EVALUATE: dict[str, Callable[[Program, Any], Evaluation]] = {
    "C1": evaluate_c1, "C2": evaluate_c2, "C3": evaluate_c3}


def search(program: Program, condition: str, budget: float = 3.0) -> tuple[Found | None, Scope]:
    """Enumerate ``condition``'s small scope by increasing depth (module docstring) for at
    most ``budget`` seconds; return the first violation (smallest depth first) and the
    scope covered."""
    start = time.monotonic()
    engine = _Search(program, start + budget)
    generate = {"C1": engine.c1, "C2": engine.c2, "C3": engine.c3}[condition]
    evaluate = _EVALUATE[condition]
    done = -1
    complete = False
    for depth in range(MAX_DEPTH + 1):
        count = 0
        for instance in generate(depth):
            count += 1
            engine.instances += 1
            evaluation = evaluate(program, instance)
            if not evaluation.holds:
                return Found(instance, evaluation), _scope(engine, condition, done, start, False,
                                                           depth)
            if engine.expired():
                break
        if engine.cut:
            break
        done = depth
        if count == 0 and depth > 0:
            complete = True  # no instance of this depth: none deeper either
            break
    return None, _scope(engine, condition, done, start, complete)


def _scope(engine: _Search, condition: str, depth: int, start: float, complete: bool,
           found_at: int | None = None) -> Scope:
    return Scope(condition, depth, len(engine.events), len(engine.program.tags),
                 engine.all_pairs, engine.covered, time.monotonic() - start, complete, found_at,
                 engine.instances)
