"""Every claim ``streamproof prove`` checks, in the order it prints them."""

from __future__ import annotations

from proofs.fries.items import fries_items
from proofs.oplus import oplus_items
from proofs.result import Finding, ProofItem, finding_of
from proofs.serializability import serial_order_iff_acyclic

#: Transactions in the serializability row (every precedence relation on this many).
SERIALIZABILITY_TRANSACTIONS = 6


def serializability_item() -> ProofItem:
    """Def. 4.9 (some serial order respects every conflict) iff the precedence graph is
    acyclic, for every precedence relation on up to 6 transactions."""
    def run(timeout_ms: int) -> Finding:
        outcome = serial_order_iff_acyclic(SERIALIZABILITY_TRANSACTIONS, timeout_ms)
        return finding_of(outcome, lambda model: Finding(
            "counterexample", "a precedence relation where the two tests disagree"))

    return ProofItem("a serial order exists iff the precedence graph is acyclic",
                     "Fries Def. 4.8, 4.9", f"every precedence relation on <= "
                     f"{SERIALIZABILITY_TRANSACTIONS} transactions", "proved", run,
                     f"quantified over every precedence relation (a Boolean per ordered pair) on "
                     f"{SERIALIZABILITY_TRANSACTIONS} transactions; model: 'some serial order "
                     f"respects every precedence' (all {SERIALIZABILITY_TRANSACTIONS}! "
                     f"permutations) vs. 'the transitive closure has no self-loop'; assumed: "
                     f"nothing (fewer transactions are the relations with isolated ones)")

#: The default bound of the Fries rows (operators per DAG); see docs/proofs.md for timings.
DEFAULT_MAX_OPERATORS = 10


def all_items(max_operators: int = DEFAULT_MAX_OPERATORS) -> list[ProofItem]:
    """The Fries rows at ``max_operators``, the serializability row, then the O+ rows."""
    return fries_items(max_operators) + [serializability_item()] + oplus_items()
