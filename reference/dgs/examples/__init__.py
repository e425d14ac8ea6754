"""DGS example programs shipped with streamproof (see docs/dgs.md).

Each module is a plain user program: it imports only the standard library and
``hypothesis.strategies`` - never streamproof - exactly like a user's file given to
``streamproof check-dgs FILE.py:NAME``.

Consistent: ``key_counter.py:KeyCounter`` (DGS Fig. 1), ``windowing.py:EventWindow``
(§4.1 event-based windowing), ``page_view.py:PageViewJoin`` (§4.1 page-view join),
``fraud_detection.py:FraudDetection`` (§4.1), ``windowing_typed.py:TypedWindow`` (the richer
multi-state-type form), ``concat.py:Concat`` (strings built from both ends: the one join that
is order-sensitive on reachable states, so a join taking its arguments right to left shows).

Deliberately inconsistent (used by the tests), each next to the program it breaks:
``key_counter.py:DuplicatingCounter`` (fork copies counts to both sides: C1, C2),
``key_counter.py:IndependentResetCounter`` (declares ``r(k)`` independent of ``i(k)``: C1, C3),
``windowing.py:MaxWindow`` (join takes the max: C1, C2), ``windowing.py:HalvingWindow``
(the literal §4.4 fork that always halves the sum: C1), ``fraud_detection.py:ForgetfulFraud``
(fork resets the right side's model: C1 on the right wire only).
"""

from __future__ import annotations

from pathlib import Path

EXAMPLES_DIR = Path(__file__).resolve().parent
"""The directory of the example files (a target is ``EXAMPLES_DIR / "file.py:NAME"``)."""

CONSISTENT: tuple[str, ...] = (
    "key_counter.py:KeyCounter",
    "windowing.py:EventWindow",
    "page_view.py:PageViewJoin",
    "fraud_detection.py:FraudDetection",
    "windowing_typed.py:TypedWindow",
    "concat.py:Concat",
)
"""The consistent examples."""

INCONSISTENT: dict[str, frozenset[str]] = {
    "key_counter.py:DuplicatingCounter": frozenset({"C1", "C2"}),
    "key_counter.py:IndependentResetCounter": frozenset({"C1", "C3"}),
    "windowing.py:MaxWindow": frozenset({"C1", "C2"}),
    "windowing.py:HalvingWindow": frozenset({"C1"}),
    "fraud_detection.py:ForgetfulFraud": frozenset({"C1"}),
}
"""The inconsistent examples and exactly the conditions each violates (the tests check it)."""


def target(name: str) -> str:
    """``path/to/examples/file.py:NAME`` for a shipped example ``file.py:NAME``."""
    return str(EXAMPLES_DIR / name)
