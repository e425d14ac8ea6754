"""A bounded, exhaustive check of DGS Theorem 2.4 for one program: every small wire diagram
(Def. 2.2) over sampled events, every interleaving of its input.

Theorem 2.4: for a consistent program, every wire diagram's output equals, as a multiset,
``spec(u)`` for *every* interleaving ``u`` of its input (Def. 2.2), and its end state equals
the sequential one. The property tests sample diagrams; this enumerates them:

* events: one sampled event per tag (:func:`reference.dgs.small_scope.sample_events`);
* diagrams: a sequential prefix from ``init``, then one fork/join block (every matching pair,
  every independent predicate pair of :func:`reference.dgs.small_scope.fork_pairs`) whose two
  sub-diagrams are sequences of events of their predicate, then a sequential suffix, with at
  most ``max_events`` events in all; plus every purely sequential diagram;
* interleavings: every one Def. 2.2 allows (:func:`spec.dgs.semantics.interleave` over every
  choice sequence).

Two predicate pairs whose forks give states that print alike give the same run for the same
branch events: such a diagram is run once (the count says how many distinct diagrams ran). A counterexample is a diagram and an interleaving that differ.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import product
from typing import Any, Iterator, Sequence

from reference.dgs.small_scope import fork_pairs, sample_events
from spec.dgs.consistency import reach
from spec.dgs.program import Event, Program
from spec.dgs.semantics import Block, Step, Update, initial_wire, interleave, multiset_equal, run_diagram, spec_run


@dataclass(frozen=True)
class DiagramCheck:
    """``diagrams`` distinct diagrams run, ``interleavings`` checked, ``complete`` when the
    whole bound was covered within the budget; ``counterexample`` = (diagram, interleaving)."""

    diagrams: int
    interleavings: int
    complete: bool
    counterexample: tuple[tuple[Step, ...], list[Event]] | None


def _sequences(events: Sequence[Event], program: Program, allowed: Any, most: int) -> Iterator[tuple[Event, ...]]:
    usable = [e for e in events if program.tag(e) in allowed]
    for length in range(most + 1):
        yield from product(usable, repeat=length)


def diagrams(program: Program, events: Sequence[Event], max_events: int) -> Iterator[tuple[Step, ...]]:
    """Every diagram of the bound (module docstring), purely sequential ones first."""
    for sequence in _sequences(events, program, program.tags, max_events):
        yield tuple(Update(e) for e in sequence)
    for prefix in _sequences(events, program, program.tags, max_events):
        wire = reach(program, tuple(Update(e) for e in prefix))
        room = max_events - len(prefix)
        for fork, join in program.fork_join_pairs(wire.state_type):
            pairs, _ = fork_pairs(program, wire, fork.left, fork.right)
            seen: set[tuple[object, ...]] = set()
            for p1, p2 in pairs:
                forked = repr(program.fork(fork.name, wire.state, p1, p2))
                for left in _sequences(events, program, p1, room):
                    for right in _sequences(events, program, p2, room - len(left)):
                        key = (forked, left, right)
                        if key in seen:
                            continue  # same fork result, same branches: the same diagram run
                        seen.add(key)
                        block = Block(fork.name, join.name, p1, p2, tuple(Update(e) for e in left),
                                      tuple(Update(e) for e in right))
                        rest = room - len(left) - len(right)
                        for suffix in _sequences(events, program, program.tags, rest):
                            yield (tuple(Update(e) for e in prefix) + (block,)
                                   + tuple(Update(e) for e in suffix))


def check_theorem_2_4(program: Program, max_events: int = 3, budget: float = 10.0) -> DiagramCheck:
    """Run every diagram of the bound against every interleaving of its input."""
    events = sample_events(program, per_tag=1)
    deadline = time.monotonic() + budget
    count = checked = 0
    for diagram in diagrams(program, events, max_events):
        if time.monotonic() > deadline:
            return DiagramCheck(count, checked, False, None)
        count += 1
        run = run_diagram(program, initial_wire(program), diagram)
        total = sum(1 for step in diagram for _ in _events_of(step))
        for choices in product((True, False), repeat=total):
            u = interleave(run.inputs, choices)
            checked += 1
            state, outputs = spec_run(program, u)
            if not (multiset_equal(run.outputs, outputs)
                    and program.states_equal(program.initial, run.end.state, state)):
                return DiagramCheck(count, checked, False, (diagram, u))
    return DiagramCheck(count, checked, True, None)


def _events_of(step: Step) -> Iterator[Event]:
    if isinstance(step, Update):
        yield step.event
    else:
        for inner in step.left + step.right:
            yield from _events_of(inner)
