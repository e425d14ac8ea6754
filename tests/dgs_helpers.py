"""Shared helpers of the DGS tests: loading the shipped examples."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from spec.dgs.loader import load_program
from spec.dgs.program import Program

EXAMPLES = Path(__file__).resolve().parent.parent / "reference" / "dgs" / "examples"

CONSISTENT = (
    "key_counter.py:KeyCounter",
    "windowing.py:EventWindow",
    "page_view.py:PageViewJoin",
    "fraud_detection.py:FraudDetection",
    "windowing_typed.py:TypedWindow",
)

# program -> the conditions it violates
INCONSISTENT = {
    "key_counter.py:DuplicatingCounter": {"C1", "C2"},
    "key_counter.py:IndependentResetCounter": {"C1", "C3"},
    "windowing.py:MaxWindow": {"C1", "C2"},
    "windowing.py:HalvingWindow": {"C1"},
    "fraud_detection.py:ForgetfulFraud": {"C1"},
}


def target(name: str) -> str:
    """``path/to/examples/file.py:NAME`` for a shipped example."""
    return str(EXAMPLES / name)


@lru_cache(maxsize=None)
def example(name: str) -> Program:
    """A shipped example program, loaded once."""
    return load_program(target(name))
