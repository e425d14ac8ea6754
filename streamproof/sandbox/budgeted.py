"""``check-dgs`` without ``--prove``: Z3 first, within ``--prove-budget`` seconds per condition.

For each condition, :func:`proofs.dgs.prover.attempt` runs on the program's sampled shapes
with a deadline. A *confirmed* Z3 counterexample (the spec evaluated it) is the condition's
result; a proof for all states of the sampled shapes makes the condition ``proved`` - the
small-scope enumeration and hypothesis still run after it, because "all states" means "all
states of the shapes the samples showed", and a concrete violation they find wins. Any other
outcome (no answer within the budget, code that cannot run symbolically, only a bounded
proof) leaves the enumeration + hypothesis result as it is, and the output says why.

The prover never decides a verdict on its own failure: an error while sampling or running
symbolically (including the user's code raising on symbolic values) makes it
``unsupported`` for the program, and the tests that follow report real bad input as before.
"""

from __future__ import annotations

import time
from dataclasses import replace
from typing import TYPE_CHECKING, Any

from spec.dgs.program import Program, describe_error

if TYPE_CHECKING:
    from proofs.dgs.prover import Attempt
    from reference.dgs.checker import ConditionResult

SAMPLES = 100
"""At most this many examples for the shapes' sampling (the prover uses half of them)."""


class BudgetedProver:
    """The prover's attempts on one program's conditions (none when ``budget`` is 0)."""

    def __init__(self, program: Program, budget: float, examples: int, seed: int) -> None:
        self.program = program
        self.budget = budget
        self.examples = min(examples, SAMPLES)
        self.seed = seed
        self.attempts: dict[str, Attempt] = {}
        self.sampling_seconds = 0.0
        self._setting: Any = None
        self._failure: str | None = None

    def attempt(self, condition: str) -> "Attempt | None":
        """Z3's attempt on ``condition`` within the budget; None when the budget is 0."""
        if self.budget <= 0:
            return None
        from proofs.dgs.prover import Attempt, ProveSettings, attempt, symbolic_setting  # noqa: PLC0415 - loads z3 and hypothesis (via proofs.dgs)

        start = time.monotonic()
        if self._setting is None and self._failure is None:
            try:
                self._setting = symbolic_setting(self.program, ProveSettings(examples=self.examples, seed=self.seed))
            except Exception as error:  # noqa: BLE001 - the tests that follow report bad input
                self._failure = f"sampling the program's shapes failed ({describe_error(error)})"
            self.sampling_seconds = time.monotonic() - start
        if self._failure is not None:
            tried = Attempt(condition, "unsupported", 0.0, self._failure)
        else:
            try:
                tried = attempt(self._setting, condition, self.budget)
            except Exception as error:  # noqa: BLE001 - InputError on symbolic values included
                tried = Attempt(condition, "unsupported", time.monotonic() - start,
                                f"the code cannot run symbolically ({describe_error(error)})")
        self.attempts[condition] = tried
        return tried

    def annotate(self, document: dict[str, Any], lines: list[str]) -> None:
        """Add ``conditions[C]["prover"]`` to the ``--json`` document and one summary line
        before the verdict line of the text output."""
        if self.budget <= 0:
            return
        parts = []
        for condition, tried in self.attempts.items():
            entry = tried.to_json()
            if tried.status == "proved" and document["conditions"][condition]["status"] == "violated":
                entry["status"] = "contradicted"
                entry["scope"] += ("; but a concrete counterexample violates it: the sampled shapes "
                                   "missed some reachable state")
            document["conditions"][condition]["prover"] = entry
            parts.append(f"{condition} {entry['status']} ({tried.seconds:.1f} s)")
        fallback = [c for c, t in self.attempts.items() if not t.answered]
        summary = (f"Z3 first (--prove-budget {self.budget:g} s per condition, shapes sampled in "
                   f"{self.sampling_seconds:.1f} s): {', '.join(parts)}")
        if fallback:
            summary += f"; {', '.join(fallback)}: {FALLBACK}"
        lines.insert(len(lines) - 1, summary)
        for condition in fallback:
            document["conditions"][condition]["prover"]["note"] = FALLBACK


FALLBACK = ("the prover did not answer within the budget (see its status and scope); the result "
            "is the small-scope enumeration's and hypothesis's")


def merge(tested: "ConditionResult", tried: "Attempt | None") -> "ConditionResult":
    """The condition's result: ``proved`` when Z3 proved it and the tests agree, else the
    tests' result."""
    if tried is None or tried.status != "proved" or not tested.holds:
        return tested
    return replace(tested, status="proved", method=f"z3+{tested.method}")
