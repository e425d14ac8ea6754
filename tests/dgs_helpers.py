"""Shared helpers of the DGS tests: loading the shipped examples, writing small user programs."""

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


_SIMPLE_PROGRAM = '''
from hypothesis import strategies as st

class P:
    tags = frozenset({"a", "b"})
    @staticmethod
    def tag(e): return e
    @staticmethod
    def depends(x, y): return DEPENDS
    @staticmethod
    def init(): return 0
    @staticmethod
    def update(s, e): return UPDATE
    @staticmethod
    def out(s, e): return []
    @staticmethod
    def fork(s, l, r): return (s, 0)
    @staticmethod
    def join(a, b): return a + b
    @staticmethod
    def events(): return st.sampled_from(["a", "b"])
'''


def simple_program(depends: str = "x == y", update: str = "s + 1") -> str:
    """The source of a small simple-form user program ``P`` (a counter over tags "a", "b")
    with the given ``depends`` and ``update`` bodies; tests edit it further into bad input."""
    return _SIMPLE_PROGRAM.replace("DEPENDS", depends).replace("UPDATE", update)


def write_program(tmp_path: Path, text: str, name: str = "prog.py") -> str:
    """Write ``text`` to ``tmp_path / name`` and return the path (add ``":P"`` for a target)."""
    path = tmp_path / name
    path.write_text(text)
    return str(path)
