"""Consistency conditions C1-C3 (DGS Def. 2.3) and the domain they quantify over.

The equations (with ``update``/``out`` of the state type at hand; ``==`` on states is the
program's ``state_eq`` when given; outputs compare as multisets):

* C1: ``join(update(s1, e), s2) == update(join(s1, s2), e)`` and
  ``out(s1, e) == out(join(s1, s2), e)``;
* C2: ``join(fork(s, pred1, pred2)) == s``;
* C3: ``update(update(s, e1), e2) == update(update(s, e2), e1)`` and
  ``out(s, e1) + out(update(s, e1), e2) == out(s, e2) + out(update(s, e2), e1)``.

**What they quantify over (the choice streamproof makes).** Read literally, Def. 2.3 quantifies
over *all* values of the state types, all predicates and all events satisfying ``pred_i``.
That reading makes the paper's own running example inconsistent: for the key counter
(Fig. 1), C1 with ``e = r(k)`` and ``s2`` holding a count for ``k`` gives
``out(s1, r(k)) = s1[k] != s1[k] + s2[k]``. Yet no execution ever reaches that situation:
after ``fork(s, pred1, pred2)`` the left wire only processes events of ``pred1``, and if
``r(k)`` is in ``pred1`` then ``i(k)`` is not in ``pred2`` and the fork gave ``k``'s count to
the left. So we quantify over the states that can *meet* in a parallel execution (Def. 2.2):

* **reachable wires**: ``(State_0, init, all tags)`` is reachable; updating a reachable wire
  with an event of its predicate is reachable; a fork/join block (Def. 2.2 case 4) run on a
  reachable wire ends in a reachable wire. A reachable wire is exactly the end of a wire
  diagram (:func:`spec.dgs.semantics.run_diagram`) from the initial wire: a :class:`History`.
* **C2** over reachable wires ``(S_i, s, pred)``, matching fork/join pairs
  ``S_i -> (S_j, S_k) -> S_i``, and independent ``pred1``, ``pred2`` implying ``pred`` and
  ``pred_j``, ``pred_k`` respectively.
* **C1** over the same forks, then ``s1``, ``s2`` updated only with events of their own
  predicate (``u1``, ``u2``), and ``e`` satisfying the predicate of the wire it is processed
  on. Def. 2.3 states C1 for an update of the *left* argument; the proof of Thm. 2.4 moves the
  *last* update out of the parallel section, which may be on either wire, so we check the
  mirrored equation ``join(s1, update(s2, e)) == update(join(s1, s2), e)`` (with
  ``out(s2, e) == out(join(s1, s2), e)``) too: ``side`` says which.
* **C3** over reachable wires ``(S_i, s, pred)`` and independent ``e1``, ``e2`` satisfying
  ``pred``.

Why Theorem 2.4 stays true: its proof (induction on Def. 2.2) only applies C1-C3 at states of
the diagram being reduced, and every such state is reachable by construction - the start wire
of a block is reachable, its branches are forks of it updated with their own events (after
the induction hypothesis has made nested blocks sequential, assuming ``state_eq`` is a
congruence for update/out/join/fork), and C3 is used to reorder independent events of a
reachable wire. ``tests/reference/dgs/test_dgs_semantics.py`` checks Thm. 2.4 on random diagrams.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

from spec.dgs.program import Event, Pred, Program
from spec.dgs.semantics import Step, Wire, initial_wire, multiset_equal, run_diagram
from spec.errors import InputError

History = tuple[Step, ...]


def reach(program: Program, history: Sequence[Step]) -> Wire:
    """The reachable wire at the end of ``history`` (a wire diagram from the initial wire)."""
    return run_diagram(program, initial_wire(program), history).end


@dataclass(frozen=True)
class Evaluation:
    """One instance of a condition, evaluated: ``holds`` and the values of both sides."""

    condition: str
    holds: bool
    equation: str
    values: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class C1Instance:
    """An instance of C1 (see the module docstring): ``side`` is ``"left"`` (Def. 2.3's
    equation) or ``"right"`` (its mirror)."""

    history: History
    fork: str
    join: str
    left_pred: Pred
    right_pred: Pred
    left_events: tuple[Event, ...]
    right_events: tuple[Event, ...]
    side: str
    event: Event


@dataclass(frozen=True)
class C2Instance:
    """An instance of C2."""

    history: History
    fork: str
    join: str
    left_pred: Pred
    right_pred: Pred


@dataclass(frozen=True)
class C3Instance:
    """An instance of C3."""

    history: History
    event1: Event
    event2: Event


def _forked(program: Program, wire: Wire, fork: str, join: str, p1: Pred, p2: Pred) -> tuple[Any, Any]:
    prim = program.forks[fork]
    jp = program.joins[join]
    if prim.source != wire.state_type or (jp.left, jp.right, jp.target) != (prim.left, prim.right, prim.source):
        raise InputError(f"fork {fork!r} and join {join!r} do not match state type {wire.state_type!r}")
    for pred, child in ((p1, prim.left), (p2, prim.right)):
        if not pred <= wire.pred & program.state_types[child].pred:
            raise InputError("a fork predicate does not imply the wire's and the child type's predicate")
    return program.fork(fork, wire.state, p1, p2)


def _run_updates(program: Program, state_type: str, state: Any, pred: Pred, events: Sequence[Event]) -> Any:
    for event in events:
        if program.tag(event) not in pred:
            raise InputError("an event outside its wire's predicate")
        state = program.update(state_type, state, event)
    return state


def evaluate_c1(program: Program, inst: C1Instance) -> Evaluation:
    """Evaluate C1 on one instance of its domain."""
    wire = reach(program, inst.history)
    s1, s2 = _forked(program, wire, inst.fork, inst.join, inst.left_pred, inst.right_pred)
    prim = program.forks[inst.fork]
    s1 = _run_updates(program, prim.left, s1, inst.left_pred, inst.left_events)
    s2 = _run_updates(program, prim.right, s2, inst.right_pred, inst.right_events)
    left_side = inst.side == "left"
    branch_type = prim.left if left_side else prim.right
    branch_pred = inst.left_pred if left_side else inst.right_pred
    if program.tag(inst.event) not in branch_pred:
        raise InputError("C1's event must satisfy the predicate of the wire it updates")
    branch = s1 if left_side else s2
    updated = program.update(branch_type, branch, inst.event)
    lhs = program.join(inst.join, updated, s2) if left_side else program.join(inst.join, s1, updated)
    joined = program.join(inst.join, s1, s2)
    rhs = program.update(wire.state_type, joined, inst.event)
    lhs_out = program.out(branch_type, branch, inst.event)
    rhs_out = program.out(wire.state_type, joined, inst.event)
    states_ok = program.states_equal(wire.state_type, lhs, rhs)
    outs_ok = multiset_equal(lhs_out, rhs_out)
    if left_side:
        equation = "join(update(s1, e), s2) == update(join(s1, s2), e) and out(s1, e) == out(join(s1, s2), e)"
    else:
        equation = "join(s1, update(s2, e)) == update(join(s1, s2), e) and out(s2, e) == out(join(s1, s2), e)"
    return Evaluation(
        "C1",
        states_ok and outs_ok,
        equation,
        {"s": wire.state, "s1": s1, "s2": s2, "e": inst.event, "lhs_state": lhs, "rhs_state": rhs,
         "lhs_out": lhs_out, "rhs_out": rhs_out, "states_equal": states_ok, "outputs_equal": outs_ok},
    )


def evaluate_c2(program: Program, inst: C2Instance) -> Evaluation:
    """Evaluate C2 on one instance of its domain."""
    wire = reach(program, inst.history)
    s1, s2 = _forked(program, wire, inst.fork, inst.join, inst.left_pred, inst.right_pred)
    joined = program.join(inst.join, s1, s2)
    ok = program.states_equal(wire.state_type, joined, wire.state)
    return Evaluation(
        "C2",
        ok,
        "join(fork(s, pred1, pred2)) == s",
        {"s": wire.state, "s1": s1, "s2": s2, "lhs_state": joined, "rhs_state": wire.state},
    )


def evaluate_c3(program: Program, inst: C3Instance) -> Evaluation:
    """Evaluate C3 on one instance of its domain."""
    wire = reach(program, inst.history)
    t1, t2 = program.tag(inst.event1), program.tag(inst.event2)
    if t1 not in wire.pred or t2 not in wire.pred or program.depends(t1, t2):
        raise InputError("C3's events must be independent and satisfy the wire's predicate")
    kind, s = wire.state_type, wire.state
    after1 = program.update(kind, s, inst.event1)
    after2 = program.update(kind, s, inst.event2)
    lhs = program.update(kind, after1, inst.event2)
    rhs = program.update(kind, after2, inst.event1)
    lhs_out = program.out(kind, s, inst.event1) + program.out(kind, after1, inst.event2)
    rhs_out = program.out(kind, s, inst.event2) + program.out(kind, after2, inst.event1)
    states_ok = program.states_equal(kind, lhs, rhs)
    outs_ok = multiset_equal(lhs_out, rhs_out)
    return Evaluation(
        "C3",
        states_ok and outs_ok,
        "update(update(s, e1), e2) == update(update(s, e2), e1) and "
        "out(s, e1) + out(update(s, e1), e2) == out(s, e2) + out(update(s, e2), e1)",
        {"s": s, "e1": inst.event1, "e2": inst.event2, "lhs_state": lhs, "rhs_state": rhs,
         "lhs_out": lhs_out, "rhs_out": rhs_out, "states_equal": states_ok, "outputs_equal": outs_ok},
    )
