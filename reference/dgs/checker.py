"""The consistency checker: C1, C2 and C3 (DGS Def. 2.3), enumerated on a small scope, then
tested with hypothesis.

Each condition is checked separately - a violated condition does not stop the others - first
by the exhaustive small-scope search of :mod:`reference.dgs.small_scope` (every independent
fork-predicate pair over the program's tags, every sequential history up to a depth over a
few sampled payloads, for ``exhaustive_seconds``; a violation that needs one particular pair
of predicates and one particular history is found there, not by luck), then by a
hypothesis run of ``examples`` examples over the condition's domain
(:mod:`reference.dgs.domain`, ``spec.dgs.consistency``); a violation is shrunk by hypothesis
to a minimal instance and returned as a :class:`Counterexample` with the states, predicates,
events and both sides of the equation.

The result types are meant to be reused: a :class:`ConsistencyReport` holds one
:class:`ConditionResult` per condition, whose ``status`` is ``"holds"`` (no counterexample in
``examples`` tries) or ``"violated"``; ``method`` says how it was established, so a later
prover (``proofs/``) can add results with ``method="z3"`` and ``status="proved"``.

An exception inside the user's code is an InputError (:class:`spec.dgs.program.UserCodeError`)
naming the function; hypothesis shrinks it first, so the message shows a small input.
Non-deterministic user code (hypothesis ``Flaky``) and an ``events()`` strategy that never
produces an event (hypothesis ``Unsatisfiable``) are reported as bad input too.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass, field, replace
from typing import Any, Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st
from hypothesis.errors import Flaky, HypothesisDeprecationWarning, Unsatisfiable

from reference.dgs.domain import Draw, draw_c1, draw_c2, draw_c3
from reference.dgs.report import Counterexample, counterexample_for
from reference.dgs.small_scope import Scope, search
from spec.dgs.consistency import Evaluation, evaluate_c1, evaluate_c2, evaluate_c3
from spec.dgs.program import Program
from spec.errors import InputError

CONDITIONS = ("C1", "C2", "C3")
DEFAULT_EXAMPLES = 200
DEFAULT_EXHAUSTIVE_SECONDS = 1.0
"""Time budget of the small-scope enumeration per condition (depths finish or not whole)."""

_DRAW: dict[str, Callable[[Draw, Program], Any]] = {"C1": draw_c1, "C2": draw_c2, "C3": draw_c3}
_EVAL: dict[str, Callable[[Program, Any], Evaluation]] = {
    "C1": evaluate_c1,
    "C2": evaluate_c2,
    "C3": evaluate_c3,
}


@dataclass(frozen=True)
class ConditionResult:
    """The verdict on one condition. ``checked`` counts the test cases that were in the domain
    (the rest drew no fork/join pair or no independent events and were skipped), including
    hypothesis's replays while shrinking a violation. ``exhaustive`` is what the small-scope
    enumeration covered (None when it did not run)."""

    condition: str
    status: str
    method: str = "hypothesis"
    examples: int = 0
    checked: int = 0
    counterexample: Counterexample | None = None
    exhaustive: Scope | None = None

    @property
    def holds(self) -> bool:
        """True unless a counterexample was found."""
        return self.status != "violated"


@dataclass(frozen=True)
class ConsistencyReport:
    """Per-condition results for one program; ``consistent`` iff no condition is violated."""

    program: str
    results: tuple[ConditionResult, ...]
    seed: int = 0
    notes: tuple[str, ...] = field(default=())

    @property
    def consistent(self) -> bool:
        """True iff every condition holds (as far as checked)."""
        return all(r.holds for r in self.results)

    def result(self, condition: str) -> ConditionResult:
        """The result for ``condition`` ("C1", "C2" or "C3")."""
        return next(r for r in self.results if r.condition == condition)

    def text_lines(self, headline: Callable[[ConditionResult], str]) -> list[str]:
        """The human output of ``check-dgs`` (with or without ``--prove``): per condition
        ``headline(result)``, then a violation's counterexample indented; last the verdict.
        The caller words the headline (tested examples or the proof's scope)."""
        lines: list[str] = []
        for result in self.results:
            lines.append(headline(result))
            if result.exhaustive is not None and result.counterexample is None:
                lines.append(f"  {result.exhaustive.text()}")
            if result.counterexample is not None:
                lines.extend(f"  {line}" for line in result.counterexample.lines())
        violated = [r.condition for r in self.results if not r.holds]
        lines.append("consistent" if not violated else f"inconsistent: {', '.join(violated)} violated")
        return lines

    def to_json(self) -> dict[str, Any]:
        """The ``check-dgs --json`` document: ``{"consistent", "violations", ...}``."""
        return {
            "consistent": self.consistent,
            "violations": [
                {"condition": r.condition, "counterexample": r.counterexample.to_json()}
                for r in self.results
                if r.counterexample is not None
            ],
            "conditions": {
                r.condition: {"status": r.status, "method": r.method, "examples": r.examples, "checked": r.checked,
                              **({"exhaustive": r.exhaustive.to_json()} if r.exhaustive else {})}
                for r in self.results
            },
            "seed": self.seed,
        }


class _Violation(Exception):
    def __init__(self, instance: Any, evaluation: Evaluation) -> None:
        super().__init__(evaluation.condition)
        self.instance = instance
        self.evaluation = evaluation


def check_condition(program: Program, condition: str, *, examples: int = DEFAULT_EXAMPLES, seed: int = 0,
                    exhaustive_seconds: float = DEFAULT_EXHAUSTIVE_SECONDS) -> ConditionResult:
    """Enumerate one condition's small scope for ``exhaustive_seconds`` (0: skip), then test
    it on ``examples`` hypothesis examples; shrink a violation."""
    scope: Scope | None = None
    if exhaustive_seconds > 0:
        found, scope = search(program, condition, exhaustive_seconds)
        if found is not None:
            cex = counterexample_for(program, found.instance, found.evaluation)
            return ConditionResult(condition, "violated", method="enumeration", examples=examples,
                                   checked=scope.instances, counterexample=cex, exhaustive=scope)
    tested = _hypothesis_condition(program, condition, examples=examples, seed=seed)
    if scope is None:
        return tested
    return replace(tested, method="enumeration+hypothesis", exhaustive=scope)


def _hypothesis_condition(program: Program, condition: str, *, examples: int, seed: int) -> ConditionResult:
    """Test one condition on ``examples`` hypothesis examples; shrink a violation."""
    draw, evaluate = _DRAW[condition], _EVAL[condition]
    checked = 0

    @st.composite
    def instances(draw_fn: Draw) -> Any:
        return draw(draw_fn, program)

    @hypothesis_seed(seed)
    @settings(
        max_examples=examples,
        database=None,
        deadline=None,
        derandomize=False,
        report_multiple_bugs=False,
        suppress_health_check=list(HealthCheck),
    )
    @given(instances())
    def run(instance: Any) -> None:
        nonlocal checked
        if instance is None:
            return
        checked += 1
        evaluation = evaluate(program, instance)
        if not evaluation.holds:
            raise _Violation(instance, evaluation)

    try:
        with warnings.catch_warnings():
            # user code runs inside our strategies; hypothesis's advice about the random
            # module there is meant for strategy authors, not for the user's program
            warnings.simplefilter("ignore", HypothesisDeprecationWarning)
            run()
    except _Violation as found:
        cex = counterexample_for(program, found.instance, found.evaluation)
        return ConditionResult(condition, "violated", examples=examples, checked=checked, counterexample=cex)
    except Unsatisfiable:
        # the domain draws use no filters (reference.dgs.domain), so every rejected draw
        # comes from the user's events() strategy (st.nothing(), a filter that never passes)
        raise InputError(
            "the events() strategy produced no events (every draw was rejected by its filters "
            "or assumptions)",
            f"{program.name}.events",
        ) from None
    except Flaky as error:
        raise InputError(
            f"the program's code is not deterministic: the same input gave different results ({error})",
            program.name,
        ) from None
    return ConditionResult(condition, "holds", examples=examples, checked=checked)


def check_consistency(
    program: Program, *, examples: int = DEFAULT_EXAMPLES, seed: int = 0, conditions: tuple[str, ...] = CONDITIONS,
    exhaustive_seconds: float = DEFAULT_EXHAUSTIVE_SECONDS,
) -> ConsistencyReport:
    """Check every condition in ``conditions`` (all three by default), none stopping the
    others."""
    results = tuple(check_condition(program, c, examples=examples, seed=seed, exhaustive_seconds=exhaustive_seconds)
                    for c in conditions)
    return ConsistencyReport(program.name, results, seed)
