"""The output of ``streamproof check-dgs FILE.py:NAME --prove`` (all logic lives here; the
command module only delegates). Same exit codes and ``--json`` document as ``check-dgs``,
plus ``conditions[C]["scope"]``: what exactly was established for that condition."""

from __future__ import annotations

from conformance.cli.output import print_json
from proofs.dgs.prover import ProveSettings, prove_consistency
from spec.dgs.program import Program


def report_proofs(program: Program, target: str, *, examples: int, seed: int, as_json: bool) -> int:
    """Prove / refute / test C1-C3 of ``program``; print; return 0 consistent, 1 not."""
    proof = prove_consistency(program, ProveSettings(examples=examples, seed=seed))
    report = proof.report
    if as_json:
        document = proof.to_json()
        document["program"] = target
        print_json(document)
    else:
        print(f"{target}: C1-C3 with Z3 (fallback: {examples} hypothesis examples, seed {seed})")
        for result in report.results:
            scope = proof.scopes.get(result.condition, "")
            if result.counterexample is None:
                print(f"{result.condition} {result.status}: {scope}")
            else:
                print(f"{result.condition} violated ({scope}):")
                for line in result.counterexample.lines():
                    print(f"  {line}")
        violated = [r.condition for r in report.results if not r.holds]
        print("consistent" if not violated else f"inconsistent: {', '.join(violated)} violated")
    return 0 if report.consistent else 1
