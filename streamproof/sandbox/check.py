"""What the sandboxed child computes: load the program, check (or prove) C1-C3, and render
the verdict as the ``--json`` document and the plain-words lines the parent prints.

The conditions are checked one at a time through the checker's public entry points
(``reference.dgs.checker.check_consistency`` / ``proofs.dgs.prover.prove_consistency`` with
``conditions=(C,)``), so the parent's progress bar knows which condition runs; the results are
the same as one call over all three (each condition is checked independently).

A condition whose domain is empty for structural reasons is reported as *vacuous* rather than
"holds (0 examples)": C1 and C2 when no fork/join pair applies to a state type reachable from
``State_0``, C3 when every two tags depend on each other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from streamproof.sandbox.guard import SandboxMonitor
from spec.dgs.loader import load_program
from spec.dgs.program import Program
from streamproof.sandbox.budgeted import BudgetedProver, merge

CONDITIONS = ("C1", "C2", "C3")


@dataclass(frozen=True)
class Request:
    """What the parent asks for (``check-dgs``'s arguments)."""

    target: str
    examples: int
    seed: int
    prove: bool
    memory_mb: int = 0  # the child's address-space limit; 0: none
    prove_budget: float = 0.0  # without --prove: Z3's seconds per condition first; 0: none

    @staticmethod
    def from_json(data: dict[str, Any]) -> "Request":
        """The request the parent wrote (see :func:`streamproof.sandbox.runner.run_check`)."""
        return Request(
            str(data["target"]), int(data["examples"]), int(data["seed"]), bool(data["prove"]), int(data["memory_mb"]),
            float(data.get("prove_budget", 0.0)),
        )


def check_program(request: Request, monitor: SandboxMonitor) -> dict[str, Any]:
    """Load and check; ``{"kind": "report", "consistent", "document", "lines"}``."""
    with monitor.phase("loading the program"):
        program = load_program(request.target, monitor)
    vacuous = vacuous_conditions(program)
    if request.prove:
        document, lines, consistent = _prove(program, request, monitor)
    else:
        document, lines, consistent = _test(program, request, monitor, vacuous)
    for condition, reason in vacuous.items():
        document["conditions"][condition].update({"vacuous": True, "note": reason})
    if vacuous and request.prove:
        lines.append(f"vacuous: {', '.join(vacuous)} ({'; '.join(sorted(set(vacuous.values())))})")
    document["program"] = request.target
    return {"kind": "report", "consistent": consistent, "document": document, "lines": lines}


def _test(
    program: Program, request: Request, monitor: SandboxMonitor, vacuous: dict[str, str]
) -> tuple[dict[str, Any], list[str], bool]:
    from reference.dgs.checker import ConditionResult, ConsistencyReport, check_consistency  # noqa: PLC0415 - loads hypothesis

    prover = BudgetedProver(program, request.prove_budget, request.examples, request.seed)
    results: list[ConditionResult] = []
    for index, condition in enumerate(CONDITIONS):
        monitor.writer.condition(index)
        with monitor.phase(f"proving {condition} (--prove-budget {request.prove_budget:g} s)"):
            tried = prover.attempt(condition)
        if tried is not None and tried.status == "violated" and tried.result is not None:
            results.append(tried.result)  # a Z3 counterexample the spec confirmed
            continue
        with monitor.phase(f"checking {condition}"):
            part = check_consistency(program, examples=request.examples, seed=request.seed, conditions=(condition,))
        results.append(merge(part.results[0], tried))
    report = ConsistencyReport(program.name, tuple(results), request.seed)

    def headline(r: ConditionResult) -> str:
        tried = prover.attempts.get(r.condition)
        if tried is not None and tried.status == "violated" and r.counterexample is not None:
            return f"{r.condition} violated ({tried.scope}):"
        if r.counterexample is not None:
            return f"{r.condition} violated:"
        if r.condition in vacuous:
            return f"{r.condition} holds vacuously: {vacuous[r.condition]}"
        if r.status == "proved" and tried is not None:
            return f"{r.condition} proved: {tried.scope}; also tested {r.examples} examples ({r.checked} in its domain)"
        if r.checked == 0:
            return f"{r.condition} holds untested: none of the {r.examples} examples was in its domain"
        return f"{r.condition} holds ({r.checked} examples in its domain checked)"

    document = report.to_json()
    for r in report.results:
        if r.checked == 0 and r.holds and r.condition not in vacuous:
            document["conditions"][r.condition]["note"] = "untested: no example was in its domain"
    lines = [f"{request.target}: {request.examples} examples per condition, seed {request.seed}"]
    lines += report.text_lines(headline)
    prover.annotate(document, lines)
    return document, lines, report.consistent


def _prove(program: Program, request: Request, monitor: SandboxMonitor) -> tuple[dict[str, Any], list[str], bool]:
    from streamproof.sandbox.proof_report import proof_lines  # noqa: PLC0415 - loads z3 and hypothesis (via proofs.dgs)
    from proofs.dgs.prover import ProofReport, ProveSettings, prove_consistency  # noqa: PLC0415 - loads z3 and hypothesis (via proofs.dgs)
    from reference.dgs.checker import ConditionResult, ConsistencyReport  # noqa: PLC0415 - loads hypothesis

    settings = ProveSettings(examples=request.examples, seed=request.seed)
    results: list[ConditionResult] = []
    scopes: dict[str, str] = {}
    for index, condition in enumerate(CONDITIONS):
        monitor.writer.condition(index)
        with monitor.phase(f"proving {condition}"):
            part = prove_consistency(program, settings, conditions=(condition,))
        results.extend(part.report.results)
        scopes.update(part.scopes)
    proof = ProofReport(ConsistencyReport(program.name, tuple(results), request.seed), scopes)
    lines = proof_lines(proof, request.target, examples=request.examples, seed=request.seed)
    return proof.to_json(), lines, proof.report.consistent


def vacuous_conditions(program: Program) -> dict[str, str]:
    """The conditions whose domain is empty, each with the reason in words."""
    reachable = {program.initial}
    frontier = [program.initial]
    while frontier:
        for fork, _ in program.fork_join_pairs(frontier.pop()):
            for child in (fork.left, fork.right):
                if child not in reachable:
                    reachable.add(child)
                    frontier.append(child)
    result: dict[str, str] = {}
    if not any(program.fork_join_pairs(t) for t in reachable):
        reason = (
            "the program has no usable fork: no fork S_i -> (S_j, S_k) with a join (S_j, S_k) -> S_i "
            "from a state type reachable from the initial one, so there is nothing to check"
        )
        result["C1"] = result["C2"] = reason
    if all(program.dependents[t] == program.tags for t in program.tags):
        result["C3"] = "every two tags depend on each other, so there is nothing to check"
    return result
