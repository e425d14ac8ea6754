"""Shared helpers of the DGS tests: loading the shipped examples, writing small user programs."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path

from reference.dgs.examples import CONSISTENT, EXAMPLES_DIR, INCONSISTENT, target
from spec.dgs.loader import load_program
from spec.dgs.program import Program

__all__ = ["CONSISTENT", "EXAMPLES", "INCONSISTENT", "example", "simple_program", "target", "write_program"]

EXAMPLES = EXAMPLES_DIR
"""The shipped examples' directory (``reference.dgs.examples.EXAMPLES_DIR``)."""


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
