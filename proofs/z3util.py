"""Small typed helpers around Z3 (which ships no type stubs).

Every term Z3 builds is typed ``Any`` by mypy; the aliases below document which kind of term a
function expects (``BoolTerm``, ``IntTerm``) so signatures stay readable, and the helpers keep
the few untyped calls (``Solver.check``, model evaluation) in one place.

A query is always phrased as "is there a counterexample?": :func:`solve` returns ``UNSAT``
when the negated claim has no model (the claim is *proved* for the whole encoded domain),
``SAT`` with the model when a counterexample exists, and ``UNKNOWN`` when Z3 gave up or hit
the time limit.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any, Iterable, Sequence

import z3

#: A Z3 Boolean term (``z3.BoolRef``).
BoolTerm = Any
#: A Z3 integer term (``z3.ArithRef``).
IntTerm = Any
#: A Z3 model (``z3.ModelRef``).
Model = Any


class Answer(str, Enum):
    """What Z3 said about a set of constraints."""

    SAT = "sat"
    UNSAT = "unsat"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Outcome:
    """The answer of one query, with the model when ``answer`` is ``SAT``."""

    answer: Answer
    model: Model | None
    reason: str = ""


def solve(constraints: Iterable[BoolTerm], *, timeout_ms: int | None = None,
          minimize: Sequence[BoolTerm] = (), small: Sequence[IntTerm] = ()) -> Outcome:
    """Check the conjunction of ``constraints``; ``timeout_ms`` bounds Z3's effort. With
    ``minimize``, a model makes as few of those terms true as possible; with ``small``, it
    keeps those integers as close to 0 as possible (both used to present the smallest
    counterexample; the optimiser is slower, so callers first check without)."""
    optimize = bool(minimize) or bool(small)
    solver = z3.Optimize() if optimize else z3.Solver()
    if minimize:
        solver.minimize(z3.Sum([z3.If(t, 1, 0) for t in minimize]))
    if small:
        solver.minimize(z3.Sum([z3.If(x >= 0, x, -x) for x in small]))
    if timeout_ms is not None:
        solver.set("timeout", max(1, int(timeout_ms)))
    for constraint in constraints:
        solver.add(constraint)
    result = solver.check()
    if result == z3.sat:
        return Outcome(Answer.SAT, solver.model())
    if result == z3.unsat:
        return Outcome(Answer.UNSAT, None)
    return Outcome(Answer.UNKNOWN, None, str(solver.reason_unknown()))


def boolean(name: str) -> BoolTerm:
    """A fresh Boolean variable."""
    return z3.Bool(name)


def integer(name: str) -> IntTerm:
    """A fresh integer variable (unbounded mathematical integer)."""
    return z3.Int(name)


def true() -> BoolTerm:
    """The constant true."""
    return z3.BoolVal(True)


def false() -> BoolTerm:
    """The constant false."""
    return z3.BoolVal(False)


def any_of(terms: Sequence[BoolTerm]) -> BoolTerm:
    """Disjunction (false when empty)."""
    return z3.Or(*terms) if terms else false()


def all_of(terms: Sequence[BoolTerm]) -> BoolTerm:
    """Conjunction (true when empty)."""
    return z3.And(*terms) if terms else true()


def implies(premise: BoolTerm, conclusion: BoolTerm) -> BoolTerm:
    """Logical implication."""
    return z3.Implies(premise, conclusion)


def negate(term: BoolTerm) -> BoolTerm:
    """Logical negation."""
    return z3.Not(term)


def ite(condition: BoolTerm, then: Any, otherwise: Any) -> Any:
    """If-then-else term."""
    return z3.If(condition, then, otherwise)


def exactly_one(terms: Sequence[BoolTerm]) -> BoolTerm:
    """Exactly one of ``terms`` holds (a one-hot selector)."""
    return z3.PbEq([(t, 1) for t in terms], 1)


def at_most_one(terms: Sequence[BoolTerm]) -> BoolTerm:
    """At most one of ``terms`` holds."""
    return z3.PbLe([(t, 1) for t in terms], 1)


def count_is(terms: Sequence[BoolTerm], k: int) -> BoolTerm:
    """Exactly ``k`` of ``terms`` hold."""
    return z3.PbEq([(t, 1) for t in terms], k) if terms else z3.BoolVal(k == 0)


def distinct(terms: Sequence[IntTerm]) -> BoolTerm:
    """Pairwise distinct integer terms."""
    return z3.Distinct(*terms) if len(terms) > 1 else true()


def holds(model: Model, term: BoolTerm) -> bool:
    """The value of a Boolean term in ``model`` (unconstrained terms count as false)."""
    return bool(z3.is_true(model.eval(term, model_completion=True)))


def int_value(model: Model, term: IntTerm) -> int:
    """The value of an integer term in ``model`` (unconstrained terms count as 0)."""
    return int(model.eval(term, model_completion=True).as_long())


def solve_named(constraints: Sequence[tuple[str, BoolTerm]],
                background: Sequence[BoolTerm] = ()) -> tuple[Model | None, list[str]]:
    """Check ``background`` and the named constraints together. Satisfiable: ``(model, [])``.
    Unsatisfiable: ``(None, names)`` with the names of an unsat core, minimised by Z3's core
    minimisation so it is small (the "why" of the contradiction)."""
    solver = z3.Solver()
    solver.set("core.minimize", True)
    for constraint in background:
        solver.add(constraint)
    trackers = {}
    for index, (name, constraint) in enumerate(constraints):
        tracker = z3.Bool(f"__track__{index}")
        trackers[str(tracker)] = name
        solver.assert_and_track(constraint, tracker)
    if solver.check() == z3.sat:
        return solver.model(), []
    return None, [trackers[str(t)] for t in solver.unsat_core()]
