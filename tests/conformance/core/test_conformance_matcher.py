"""The online matcher (conformance/matcher.py) against a brute-force definition of trace
equivalence, plus the shapes of its reports."""

from __future__ import annotations

import random
from collections import Counter
from itertools import permutations
from typing import Callable

from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.core.matcher import Matcher, by_class, compare

Item = tuple[int, int]  # (class, payload)


def _class_of(item: Item) -> int:
    return item[0]


def _same_class(a: Item, b: Item) -> bool:
    return a[0] == b[0]


def _projections_equal(left: list[Item], right: list[Item], dep: Callable[[Item, Item], bool]) -> bool:
    """Trace equivalence by its projection characterisation: equal multisets, and every pair
    of dependent letters appears in the same relative order (Mazurkiewicz, Cori-Perrin)."""
    if Counter(left) != Counter(right):
        return False
    letters = sorted(set(left))
    for a in letters:
        for b in letters:
            if a <= b and dep(a, b):
                if [x for x in left if x in (a, b)] != [x for x in right if x in (a, b)]:
                    return False
    return True


items = st.tuples(st.integers(0, 2), st.integers(0, 2))


@settings(max_examples=300)
@given(st.lists(items, max_size=7), st.data())
def test_matches_iff_trace_equivalent_for_class_dependence(left: list[Item], data: st.DataObject) -> None:
    right = data.draw(st.one_of(st.permutations(left), st.lists(items, max_size=7)))
    truth = _projections_equal(left, right, _same_class)
    assert (compare(left, right, by_class(_class_of)) is None) == truth
    # the general (predicate) path agrees with the per-class fast path
    assert (compare(left, right, _same_class) is None) == truth


@settings(max_examples=200)
@given(st.lists(items, max_size=6), st.lists(items, max_size=6), st.randoms(use_true_random=False))
def test_online_interleaving_does_not_change_the_verdict(left: list[Item], right: list[Item], rnd: object) -> None:
    """Feeding the two streams in any interleaving gives the same verdict as feeding one
    after the other (the matcher is online)."""
    assert isinstance(rnd, random.Random)
    dep = by_class(_class_of)
    matcher: Matcher[Item] = Matcher(dep)
    i = j = 0
    while i < len(left) or j < len(right):
        if j >= len(right) or (i < len(left) and rnd.random() < 0.5):
            matcher.expected(left[i])
            i += 1
        else:
            matcher.actual(right[j])
            j += 1
    assert (matcher.finish() is None) == (compare(left, right, dep) is None)


def test_no_dependence_is_multiset_equality() -> None:
    assert compare([1, 2, 2, 3], [2, 3, 2, 1]) is None
    mismatch = compare([1, 2, 2, 3], [2, 3, 1])
    assert mismatch is not None and mismatch.kind == "missing"
    assert mismatch.missing == ((2, 1),)


def test_full_dependence_is_sequence_equality() -> None:
    def always(a: int, b: int) -> bool:
        return True

    assert compare([1, 2, 3], [1, 2, 3], always) is None
    assert compare([1, 2, 3], [2, 1, 3], always) is not None
    for perm in permutations([1, 2, 3]):
        assert (compare([1, 2, 3], list(perm), always) is None) == (list(perm) == [1, 2, 3])


def test_reports_first_unmatched_items_with_multiplicity() -> None:
    mismatch = compare(["a", "b", "c", "c"], ["a", "x", "x", "b"])
    assert mismatch is not None
    assert mismatch.missing == (("c", 2),)
    assert mismatch.unexpected == (("x", 2),)
    assert mismatch.matched == 2
    text = mismatch.explain()
    assert "missing    (expected, not produced): 'c' (x2)" in text
    assert "unexpected (produced, not expected): 'x' (x2)" in text


def test_order_violation_is_reported_as_soon_as_certain() -> None:
    matcher: Matcher[Item] = Matcher(by_class(_class_of))
    assert matcher.expected((0, 1)) is None
    assert matcher.expected((0, 2)) is None
    assert matcher.actual((1, 9)) is None  # independent: waits
    failure = matcher.actual((0, 2))  # class 0 out of order: certain now
    assert failure is not None and failure.kind == "order"
    assert failure.item == (0, 2) and failure.conflicting == (0, 1)
    assert "different orders" in failure.explain()
