"""Drawing instances of C1-C3's domain (``spec.dgs.consistency``) with hypothesis.

Draws are interactive (inside ``st.composite``; ``draw`` is its draw function) because what
may be drawn next depends on the values computed so far: an update step needs an event of the current wire's predicate, a fork needs
predicates implying it. Events come from the program's own ``events()`` strategy; a drawn
event outside the required predicate is skipped (hypothesis then shrinks it away), which
avoids filters and keeps every example valid. Everything drawn is plain data (the history,
predicates, events), so hypothesis shrinks counterexamples to the fewest steps and smallest
events.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

from hypothesis import strategies as st

from spec.dgs.consistency import C1Instance, C2Instance, C3Instance
from spec.dgs.program import Event, Pred, Program, Tag
from spec.dgs.semantics import Block, Step, Update, Wire, initial_wire, run_diagram

Draw = Callable[[st.SearchStrategy[Any]], Any]

MAX_STEPS = 6
MAX_DEPTH = 2
EVENT_TRIES = 4


def draw_subset(draw: Draw, candidates: Sequence[Tag], label: str) -> Pred:
    """A subset of ``candidates`` (a deterministic sequence)."""
    if not candidates:
        return frozenset()
    flags = draw(st.lists(st.booleans(), min_size=len(candidates), max_size=len(candidates)))
    return frozenset(t for t, keep in zip(candidates, flags) if keep)


def draw_event(draw: Draw, program: Program, allowed: Pred, label: str) -> Event | None:
    """An event whose tag is in ``allowed``, or None if a few draws found none."""
    if not allowed:
        return None
    for _ in range(EVENT_TRIES):
        event = draw(program.event_strategy)
        if program.tag(event) in allowed:
            return event
    return None


def draw_events(draw: Draw, program: Program, allowed: Pred, label: str) -> tuple[Event, ...]:
    """A short list of events of ``allowed`` (others are dropped)."""
    if not allowed:
        return ()
    events = draw(st.lists(program.event_strategy, max_size=MAX_STEPS))
    return tuple(e for e in events if program.tag(e) in allowed)


def draw_fork_preds(
    draw: Draw, program: Program, wire: Wire, left_type: str, right_type: str, must_left: Pred = frozenset()
) -> tuple[Pred, Pred]:
    """Independent ``(pred1, pred2)`` implying the wire's predicate and the child types'
    predicates; ``pred1`` contains ``must_left``. Uses the program's ``splits`` when given."""
    left_ok = wire.pred & program.state_types[left_type].pred
    right_ok = wire.pred & program.state_types[right_type].pred
    if program.splits:
        usable = [
            (a, b) for a, b in program.splits if a <= left_ok and b <= right_ok and must_left <= a
        ]
        if usable and draw(st.booleans()):
            chosen: tuple[Pred, Pred] = draw(st.sampled_from(usable))
            return chosen
    left = must_left | draw_subset(draw, [t for t in program.sorted_tags if t in left_ok], "pred1")
    independent = [
        t for t in program.sorted_tags if t in right_ok and not (program.dependents[t] & left)
    ]
    return left, draw_subset(draw, independent, "pred2")


def draw_history(draw: Draw, program: Program, wire: Wire, depth: int) -> tuple[tuple[Step, ...], Wire]:
    """A well-formed wire diagram from ``wire`` and the wire it ends in (a reachable wire
    when ``wire`` is reachable)."""
    steps: list[Step] = []
    count = draw(st.integers(0, MAX_STEPS))
    for _ in range(count):
        pairs = program.fork_join_pairs(wire.state_type) if depth > 0 else []
        if pairs and draw(st.integers(0, 3)) == 0:
            fork, join = draw(st.sampled_from(pairs))
            p1, p2 = draw_fork_preds(draw, program, wire, fork.left, fork.right)
            s1, s2 = program.fork(fork.name, wire.state, p1, p2)
            left, _ = draw_history(draw, program, Wire(fork.left, s1, p1), depth - 1)
            right, _ = draw_history(draw, program, Wire(fork.right, s2, p2), depth - 1)
            step: Step = Block(fork.name, join.name, p1, p2, left, right)
        else:
            event = draw_event(draw, program, wire.pred, "event")
            if event is None:
                continue
            step = Update(event)
        wire = run_diagram(program, wire, [step]).end
        steps.append(step)
    return tuple(steps), wire


def draw_reachable(draw: Draw, program: Program) -> tuple[tuple[Step, ...], Wire]:
    """A history from the initial wire and the reachable wire it ends in."""
    return draw_history(draw, program, initial_wire(program), MAX_DEPTH)


def draw_c1(draw: Draw, program: Program) -> C1Instance | None:
    """An instance of C1's domain, or None if this reachable wire has no fork/join pair."""
    history, wire = draw_reachable(draw, program)
    pairs = program.fork_join_pairs(wire.state_type)
    if not pairs:
        return None
    fork, join = draw(st.sampled_from(pairs))
    side = draw(st.sampled_from(("left", "right")))
    branch_type = fork.left if side == "left" else fork.right
    event = draw_event(draw, program, wire.pred & program.state_types[branch_type].pred, "e")
    if event is None:
        return None
    must = frozenset({program.tag(event)})
    if side == "left":
        p1, p2 = draw_fork_preds(draw, program, wire, fork.left, fork.right, must)
    else:
        p2, p1 = draw_fork_preds(draw, program, wire, fork.right, fork.left, must)
    if not program.independent_sets(p1, p2):
        return None
    u1 = draw_events(draw, program, p1, "u1")
    u2 = draw_events(draw, program, p2, "u2")
    return C1Instance(history, fork.name, join.name, p1, p2, u1, u2, side, event)


def draw_c2(draw: Draw, program: Program) -> C2Instance | None:
    """An instance of C2's domain, or None if this reachable wire has no fork/join pair."""
    history, wire = draw_reachable(draw, program)
    pairs = program.fork_join_pairs(wire.state_type)
    if not pairs:
        return None
    fork, join = draw(st.sampled_from(pairs))
    p1, p2 = draw_fork_preds(draw, program, wire, fork.left, fork.right)
    return C2Instance(history, fork.name, join.name, p1, p2)


def draw_c3(draw: Draw, program: Program) -> C3Instance | None:
    """An instance of C3's domain, or None if no independent pair was drawn."""
    history, wire = draw_reachable(draw, program)
    e1 = draw_event(draw, program, wire.pred, "e1")
    if e1 is None:
        return None
    allowed = frozenset(t for t in wire.pred if not program.depends(program.tag(e1), t))
    e2 = draw_event(draw, program, allowed, "e2")
    if e2 is None:
        return None
    return C3Instance(history, e1, e2)

