"""The dependence relation D of Fries' consistency (``spec.fries.consistency.dependent``, module
docstring): two data operations conflict iff they read and write one state, the same object's
same key; everything else commutes. D is reflexive and symmetric; a different object or a
different key of the same object is independent."""

from __future__ import annotations

from hypothesis import given, strategies as st

from spec.fries.consistency import dependent

_OPS = st.tuples(st.sampled_from(["X#0", "X#1", "Y#0"]), st.integers(0, 3))


@given(_OPS, _OPS)
def test_operations_conflict_iff_they_touch_one_objects_one_key(a: tuple[str, int], b: tuple[str, int]) -> None:
    assert dependent(a, a)
    assert dependent(a, b) == dependent(b, a)
    assert dependent(a, b) == (a[0] == b[0] and a[1] == b[1])


def test_another_key_or_another_worker_of_the_same_operator_commutes() -> None:
    assert not dependent(("X#0", 1), ("X#0", 2))
    assert not dependent(("X#0", 1), ("X#1", 1))
