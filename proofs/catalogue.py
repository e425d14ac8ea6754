"""Every claim ``streamproof prove`` checks, in the order it prints them."""

from __future__ import annotations

from proofs.fries.items import fries_items
from proofs.oplus import oplus_items
from proofs.result import ProofItem

#: The default bound of the Fries rows (operators per DAG); see docs/proofs.md for timings.
DEFAULT_MAX_OPERATORS = 10


def all_items(max_operators: int = DEFAULT_MAX_OPERATORS) -> list[ProofItem]:
    """The Fries rows at ``max_operators``, then the O+ rows."""
    return fries_items(max_operators) + oplus_items()
