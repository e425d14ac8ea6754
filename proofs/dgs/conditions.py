"""C1, C2 and C3 (DGS Def. 2.3) as symbolic *skeletons*, explored path by path.

A skeleton fixes what the equations need concretely - the state type, the fork/join pair,
the side, the tags of the events - and leaves symbolic what the user's code computes on: the
state ``s``, the event payloads and the fork predicates (a :class:`~proofs.dgs.symbolic.SymSet`
constrained to be independent and to imply the wire's and the child type's predicates, as in
``spec.dgs.consistency``). Running the equation of :mod:`spec.dgs.consistency` on it with the
:class:`~proofs.dgs.symbolic.Explorer` covers every value of the symbolic parts.

Where ``s`` comes from is a :class:`Start`: an arbitrary state of the sampled shape ("for all
states"), or the state reached from ``init`` by a history of events with given tags and
symbolic payloads (to find a *reachable* counterexample). A violating path yields concrete
values (Z3's model) from which :func:`concrete_instance` builds an instance of the checker's
domain; the caller re-evaluates it with the spec before reporting anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Sequence

import z3

from proofs.dgs.shapes import EventTemplates
from proofs.dgs.symbolic import Explorer, SymSet, concretize
from proofs.z3util import BoolTerm
from spec.dgs.consistency import C1Instance, C2Instance, C3Instance
from spec.dgs.program import ForkPrim, JoinPrim, Pred, Program, Tag
from spec.dgs.semantics import Update, multiset_equal


@dataclass(frozen=True)
class Start:
    """Where ``s`` comes from: ``state`` (symbolic, for all states) or ``history`` (events
    applied to ``init`` on the initial wire)."""

    state_type: str
    pred: Pred
    state: Any = None
    history: tuple[Any, ...] | None = None

    def make(self, program: Program) -> Any:
        """The wire's state on this path."""
        if self.history is None:
            return self.state
        st = program.state_types[self.state_type]
        state = program.init_fn()
        for event in self.history:
            state = st.update(state, event)
        return state


@dataclass
class Skeleton:
    """One symbolic instance shape of a condition."""

    condition: str
    start: Start
    background: list[BoolTerm]
    parts: dict[str, Any]
    run: Callable[[], bool]
    key: tuple[Any, ...] = ()


def _pred_set(program: Program, name: str, universe: Sequence[Tag]) -> SymSet:
    return SymSet({t: z3.Bool(f"{name}[{t!r}]") for t in universe})


def _independent(program: Program, p1: SymSet, p2: SymSet) -> list[BoolTerm]:
    return [z3.Not(z3.And(a_term, b_term))
            for a, a_term in p1.members.items() for b, b_term in p2.members.items()
            if program.depends(a, b)]


def _equal(program: Program, state_type: str, a: Any, b: Any) -> bool:
    eq = program.state_types[state_type].state_eq
    return bool(eq(a, b) if eq is not None else a == b)


def _pair(value: Any) -> tuple[Any, Any]:
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        raise TypeError("fork did not return a pair")
    return value[0], value[1]


def _forked_preds(program: Program, start: Start, fork: ForkPrim) -> tuple[SymSet, SymSet, list[BoolTerm]]:
    left_ok = [t for t in program.sorted_tags if t in start.pred and t in program.state_types[fork.left].pred]
    right_ok = [t for t in program.sorted_tags if t in start.pred and t in program.state_types[fork.right].pred]
    p1, p2 = _pred_set(program, "pred1", left_ok), _pred_set(program, "pred2", right_ok)
    return p1, p2, _independent(program, p1, p2)


def c2(program: Program, start: Start, fork: ForkPrim, join: JoinPrim) -> Skeleton:
    """C2: ``join(fork(s, pred1, pred2)) == s``."""
    p1, p2, background = _forked_preds(program, start, fork)

    def run() -> bool:
        s = start.make(program)
        fork_fn: Any = fork.fn  # called with symbolic predicates
        s1, s2 = _pair(fork_fn(s, p1, p2))
        return _equal(program, start.state_type, join.fn(s1, s2), s)

    return Skeleton("C2", start, background, {"fork": fork.name, "join": join.name, "p1": p1, "p2": p2},
                    run, ("C2", fork.name, join.name))


def c3(program: Program, start: Start, e1: Any, e2: Any, tags: tuple[Tag, Tag]) -> Skeleton:
    """C3 for independent events ``e1``, ``e2`` of the wire's predicate."""
    st = program.state_types[start.state_type]

    def run() -> bool:
        s = start.make(program)
        after1, after2 = st.update(s, e1), st.update(s, e2)
        lhs, rhs = st.update(after1, e2), st.update(after2, e1)
        lhs_out = list(st.out(s, e1)) + list(st.out(after1, e2))
        rhs_out = list(st.out(s, e2)) + list(st.out(after2, e1))
        return _equal(program, start.state_type, lhs, rhs) and multiset_equal(lhs_out, rhs_out)

    return Skeleton("C3", start, [], {"e1": e1, "e2": e2}, run, ("C3", *tags))


def c1(program: Program, start: Start, fork: ForkPrim, join: JoinPrim, side: str, event: Any,
       event_tag: Tag, u1: Sequence[tuple[Tag, Any]], u2: Sequence[tuple[Tag, Any]]) -> Skeleton:
    """C1 (``side`` = "left": Def. 2.3's equation; "right": its mirror), with the events
    ``u1``/``u2`` processed on the two wires first."""
    p1, p2, background = _forked_preds(program, start, fork)
    for tag, _ in u1:
        background.append(p1.members[tag] if tag in p1.members else z3.BoolVal(False))
    for tag, _ in u2:
        background.append(p2.members[tag] if tag in p2.members else z3.BoolVal(False))
    branch_pred = p1 if side == "left" else p2
    background.append(branch_pred.members.get(event_tag, z3.BoolVal(False)))
    left_t, right_t = program.state_types[fork.left], program.state_types[fork.right]
    whole = program.state_types[start.state_type]

    def run() -> bool:
        s = start.make(program)
        fork_fn: Any = fork.fn  # called with symbolic predicates
        s1, s2 = _pair(fork_fn(s, p1, p2))
        for _, e in u1:
            s1 = left_t.update(s1, e)
        for _, e in u2:
            s2 = right_t.update(s2, e)
        branch_type = left_t if side == "left" else right_t
        branch = s1 if side == "left" else s2
        updated = branch_type.update(branch, event)
        lhs = join.fn(updated, s2) if side == "left" else join.fn(s1, updated)
        joined = join.fn(s1, s2)
        rhs = whole.update(joined, event)
        outs_ok = multiset_equal(list(branch_type.out(branch, event)), list(whole.out(joined, event)))
        return _equal(program, start.state_type, lhs, rhs) and outs_ok

    parts = {"fork": fork.name, "join": join.name, "p1": p1, "p2": p2, "side": side, "e": event,
             "u1": [e for _, e in u1], "u2": [e for _, e in u2]}
    key = ("C1", fork.name, join.name, side, event_tag, tuple(t for t, _ in u1), tuple(t for t, _ in u2))
    return Skeleton("C1", start, background, parts, run, key)


def skeletons(program: Program, condition: str, start: Start, events: EventTemplates,
              branch_events: int) -> list[Skeleton]:
    """Every skeleton of ``condition`` from ``start`` (C1 with at most ``branch_events``
    events on each wire before ``e``)."""
    tags = [t for t in events.tags if t in start.pred]
    out: list[Skeleton] = []
    if condition == "C3":
        for i, t1 in enumerate(tags):
            for t2 in tags[i:]:
                if program.depends(t1, t2):
                    continue
                for e1 in events.fresh(t1, "e1"):
                    for e2 in events.fresh(t2, "e2"):
                        out.append(c3(program, start, e1, e2, (t1, t2)))
        return out
    pairs = program.fork_join_pairs(start.state_type)
    for fork, join in pairs:
        if condition == "C2":
            out.append(c2(program, start, fork, join))
            continue
        left_tags = [t for t in tags if t in program.state_types[fork.left].pred]
        right_tags = [t for t in tags if t in program.state_types[fork.right].pred]
        for side in ("left", "right"):
            own = left_tags if side == "left" else right_tags
            for e_tag in own:
                for e in events.fresh(e_tag, "e"):
                    for u1 in _sequences(events, left_tags, branch_events, "u1"):
                        for u2 in _sequences(events, right_tags, branch_events, "u2"):
                            out.append(c1(program, start, fork, join, side, e, e_tag, u1, u2))
    return out


def _sequences(events: EventTemplates, tags: Sequence[Tag], limit: int, name: str) -> list[list[tuple[Tag, Any]]]:
    seqs: list[list[tuple[Tag, Any]]] = [[]]
    frontier: list[list[tuple[Tag, Any]]] = [[]]
    for depth in range(limit):
        nxt = []
        for seq in frontier:
            for tag in tags:
                for e in events.fresh(tag, f"{name}.{depth}"):
                    nxt.append(seq + [(tag, e)])
        seqs += nxt
        frontier = nxt
    return seqs


def concrete_instance(skeleton: Skeleton, model: Any) -> Any:
    """The checker-domain instance (spec.dgs.consistency) of a violating path's model."""
    values = {k: concretize(v, model) for k, v in skeleton.parts.items()}
    history = tuple(Update(e) for e in concretize(list(skeleton.start.history or ()), model))
    if skeleton.condition == "C2":
        return C2Instance(history, values["fork"], values["join"], values["p1"], values["p2"])
    if skeleton.condition == "C3":
        return C3Instance(history, values["e1"], values["e2"])
    return C1Instance(history, values["fork"], values["join"], values["p1"], values["p2"],
                      tuple(values["u1"]), tuple(values["u2"]), values["side"], values["e"])


def explore(skeleton: Skeleton, *, max_paths: int, timeout_ms: int,
            deadline: float | None = None) -> tuple[int, Any | None]:
    """Explore every path of ``skeleton``: (paths run, the model of a violating path or
    None). An infeasible skeleton (its predicates cannot be chosen) has no path. Past
    ``deadline`` (``time.monotonic()``), :class:`proofs.dgs.symbolic.OutOfTime`."""
    explorer = Explorer(skeleton.background, max_paths=max_paths, timeout_ms=timeout_ms, deadline=deadline)
    explorer.check_deadline()
    if explorer.solver.check() == z3.unsat:
        return 0, None
    found: list[Any] = []

    def run() -> bool:
        holds = skeleton.run()
        if not holds:
            found.append(explorer.model())
        return holds

    for holds in explorer.explore(run):
        if not holds:
            return explorer.paths, found[0]
    return explorer.paths, None
