"""The plain-words report of ``streamproof check-dgs FILE.py:NAME --prove`` (the ``--json``
document is ``ProofReport.to_json()``, with ``conditions[C]["scope"]``: what exactly was
established for that condition)."""

from __future__ import annotations

from proofs.dgs.prover import ProofReport


def proof_lines(proof: ProofReport, target: str, *, examples: int, seed: int) -> list[str]:
    """The plain-words report of ``proof`` (what ``check-dgs --prove`` prints)."""
    lines = [f"{target}: C1-C3 with Z3 (fallback: {examples} hypothesis examples, seed {seed})"]
    lines += proof.report.text_lines(
        lambda r: f"{r.condition} violated ({proof.scopes.get(r.condition, '')}):"
        if r.counterexample is not None
        else f"{r.condition} {r.status}: {proof.scopes.get(r.condition, '')}"
    )
    return lines
