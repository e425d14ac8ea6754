"""The output of ``streamproof check-dgs FILE.py:NAME --prove`` (all logic lives here; the
command module only delegates). Same exit codes and ``--json`` document as ``check-dgs``,
plus ``conditions[C]["scope"]``: what exactly was established for that condition."""

from __future__ import annotations

from conformance.cli.output import print_json
from proofs.dgs.prover import ProofReport, ProveSettings, prove_consistency
from spec.dgs.program import Program


def report_proofs(program: Program, target: str, *, examples: int, seed: int, as_json: bool) -> int:
    """Prove / refute / test C1-C3 of ``program``; print; return 0 consistent, 1 not."""
    proof = prove_consistency(program, ProveSettings(examples=examples, seed=seed))
    if as_json:
        document = proof.to_json()
        document["program"] = target
        print_json(document)
    else:
        for line in proof_lines(proof, target, examples=examples, seed=seed):
            print(line)
    return 0 if proof.report.consistent else 1


def proof_lines(proof: ProofReport, target: str, *, examples: int, seed: int) -> list[str]:
    """The plain-words report of ``proof`` (what ``check-dgs --prove`` prints)."""
    lines = [f"{target}: C1-C3 with Z3 (fallback: {examples} hypothesis examples, seed {seed})"]
    lines += proof.report.text_lines(
        lambda r: f"{r.condition} violated ({proof.scopes.get(r.condition, '')}):"
        if r.counterexample is not None
        else f"{r.condition} {r.status}: {proof.scopes.get(r.condition, '')}"
    )
    return lines
