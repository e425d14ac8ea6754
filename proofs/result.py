"""What a proof item is and what running it reports (the rows of ``streamproof prove``).

A :class:`ProofItem` names a claim of a paper, the bound it is checked on, its ``scope`` (what
exactly is quantified over, in which model, what is assumed - so a row never claims more than
it proves), and whether Z3 is
*expected* to prove it or to find a counterexample (claims the papers make false on purpose,
such as "the naive FCM scheduler is serializable"). Running it gives a :class:`ProofResult`:
``proved`` (Z3 found the negated claim unsatisfiable on the whole bounded domain),
``counterexample`` (with the counterexample in words and as JSON) or ``timeout``.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Callable, Literal

from proofs.z3util import Answer, Outcome

Status = Literal["proved", "counterexample", "timeout"]


@dataclass(frozen=True)
class Finding:
    """What one check found: a status, a sentence and (for counterexamples) a JSON value."""

    status: Status
    detail: str = ""
    witness: Any = None


@dataclass(frozen=True)
class ProofItem:
    """One claim: ``run(timeout_ms)`` checks it and returns a :class:`Finding`."""

    name: str
    reference: str
    bound: str
    expected: Status
    run: Callable[[int], Finding] = field(repr=False)
    scope: str = ""


@dataclass(frozen=True)
class ProofResult:
    """The outcome of running one item, with the time it took."""

    name: str
    reference: str
    bound: str
    status: Status
    expected: Status
    seconds: float
    detail: str
    witness: Any
    scope: str = ""

    @property
    def as_expected(self) -> bool:
        """True when the status is the expected one (a timeout never is)."""
        return self.status == self.expected

    def to_json(self) -> dict[str, Any]:
        """The ``--json`` row: the contract's five fields, then the extensions (``scope``:
        what was quantified over, in which model, at which bound, under which assumptions)."""
        return {"name": self.name, "reference": self.reference, "bound": self.bound,
                "status": self.status, "seconds": round(self.seconds, 3),
                "expected": self.expected, "detail": self.detail, "witness": self.witness,
                "scope": self.scope}


def run_item(item: ProofItem, timeout_ms: int) -> ProofResult:
    """Run ``item`` and time it."""
    start = time.perf_counter()
    finding = item.run(timeout_ms)
    seconds = time.perf_counter() - start
    return ProofResult(item.name, item.reference, item.bound, finding.status, item.expected,
                       seconds, finding.detail, finding.witness, item.scope)


def finding_of(outcome: Outcome, describe: Callable[[Any], Finding]) -> Finding:
    """Turn the outcome of a "find a counterexample" query into a finding: unsat = proved,
    sat = the counterexample ``describe(model)`` builds, unknown = timeout."""
    if outcome.answer is Answer.UNSAT:
        return Finding("proved")
    if outcome.answer is Answer.SAT:
        return describe(outcome.model)
    return Finding("timeout", f"Z3 gave up: {outcome.reason}")
