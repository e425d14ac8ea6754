"""An online output matcher in the spirit of DiffStream (Kallas et al., OOPSLA 2020).

Two streams of items - the *expected* one (from the reference) and the *actual* one (from the
engine under test) - are equivalent *up to a dependence relation* D when one can be turned into
the other by swapping adjacent independent items (Mazurkiewicz trace equivalence). Two special
cases cover most uses:

* no dependence at all (``dependence=None``): the streams are equal as **multisets**;
* dependence "same class" (:func:`by_class`): items of one class (e.g. one key) must appear in
  the same order in both streams, items of different classes may interleave freely - each
  class compared as a **sequence**, the classes as a multiset.

The matcher is *online*: items are fed one at a time on either side (:meth:`Matcher.expected`,
:meth:`Matcher.actual`) and a mismatch is reported as soon as it is certain, with the first
unmatched items - which is what makes a failure readable. The rule (DiffStream §4): an item x
arriving on one side matches the earliest equal unmatched item y of the other side, provided
no unmatched item before y on that side depends on x (with no partner: no unmatched item of the
other side at all). If such a dependent item exists the two streams order x and that item
differently, which no reordering of independent items can repair: a mismatch. An item with no
equal partner waits. At the end (:meth:`Matcher.finish`) nothing may be waiting on either side.
Invariant: items waiting on the two sides are pairwise independent (a dependent pair is a
mismatch the moment its second item arrives), so x's own side never needs checking.

Cost: O(n) per item for a general dependence predicate (a scan of the waiting items; fine for
the few hundred outputs of a conformance case); O(1) amortised for multisets and for
:func:`by_class`, which keep waiting items per class.
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from typing import Callable, Generic, Hashable, Iterable, TypeVar

T = TypeVar("T", bound=Hashable)

Dependence = Callable[[T, T], bool]
"""A symmetric predicate: True when the two items must keep their relative order."""


@dataclass(frozen=True)
class ClassDependence(Generic[T]):
    """Dependence "same class": ``classify(a) == classify(b)``. Recognised by the matcher,
    which then keeps waiting items per class (O(1) matching)."""

    classify: Callable[[T], Hashable]

    def __call__(self, a: T, b: T) -> bool:
        return self.classify(a) == self.classify(b)


def by_class(classify: Callable[[T], Hashable]) -> ClassDependence[T]:
    """Items with equal ``classify(item)`` are dependent (compared as sequences per class)."""
    return ClassDependence(classify)


@dataclass(frozen=True)
class Mismatch(Generic[T]):
    """Why two streams differ.

    ``kind`` is ``"order"`` (an item appears on both sides, but after a dependent item on one
    side and before it on the other), ``"missing"`` (expected, never produced) or
    ``"unexpected"`` (produced, never expected). ``item`` is the first offending item,
    ``conflicting`` the dependent item it was ordered against (for ``"order"``);
    ``missing``/``unexpected`` list the first unmatched items of each side (at most
    ``limit``), with multiplicities."""

    kind: str
    item: T | None
    conflicting: T | None
    missing: tuple[tuple[T, int], ...]
    unexpected: tuple[tuple[T, int], ...]
    matched: int

    def explain(self, show: Callable[[T], str] = repr) -> str:
        """The mismatch in plain words, one fact per line."""
        lines: list[str] = []
        if self.kind == "order" and self.item is not None and self.conflicting is not None:
            lines.append(
                f"order: {show(self.item)} and {show(self.conflicting)} are dependent but the "
                "two streams put them in different orders"
            )
        for item, count in self.missing:
            times = f" (x{count})" if count > 1 else ""
            lines.append(f"missing    (expected, not produced): {show(item)}{times}")
        for item, count in self.unexpected:
            times = f" (x{count})" if count > 1 else ""
            lines.append(f"unexpected (produced, not expected): {show(item)}{times}")
        lines.append(f"{self.matched} item(s) matched before the first difference")
        return "\n".join(lines)

    def witness(self, show: Callable[[T], str] = repr) -> dict[str, object]:
        """The mismatch as JSON data (an oracle's witness): ``kind``, ``item`` and
        ``conflicting`` (shown, or None), ``missing`` and ``unexpected`` as ``[shown item,
        count]`` pairs, ``matched``."""
        return {"kind": self.kind, "item": None if self.item is None else show(self.item),
                "conflicting": None if self.conflicting is None else show(self.conflicting),
                "missing": [[show(item), count] for item, count in self.missing],
                "unexpected": [[show(item), count] for item, count in self.unexpected],
                "matched": self.matched}


@dataclass
class _Side(Generic[T]):
    """The unmatched items of one side, in arrival order (with an arrival counter)."""

    waiting: dict[int, T] = field(default_factory=dict)
    by_item: dict[T, deque[int]] = field(default_factory=lambda: defaultdict(deque))
    by_class: dict[Hashable, deque[int]] = field(default_factory=lambda: defaultdict(deque))
    next_id: int = 0


class Matcher(Generic[T]):
    """Online equivalence of two item streams up to a dependence relation (module docstring).

    Feed items with :meth:`expected` and :meth:`actual` in any interleaving; each returns the
    first :class:`Mismatch` once one is certain (then the matcher stays failed). Call
    :meth:`finish` after the last item."""

    def __init__(self, dependence: Dependence[T] | None = None, *, limit: int = 5) -> None:
        self._dependence = dependence
        self._classify = dependence.classify if isinstance(dependence, ClassDependence) else None
        self._limit = limit
        self._sides: tuple[_Side[T], _Side[T]] = (_Side(), _Side())
        self._matched = 0
        self.failure: Mismatch[T] | None = None

    @property
    def matched(self) -> int:
        """Number of matched pairs so far."""
        return self._matched

    def expected(self, item: T) -> Mismatch[T] | None:
        """Feed one item of the expected stream."""
        return self._feed(0, item)

    def actual(self, item: T) -> Mismatch[T] | None:
        """Feed one item of the actual stream."""
        return self._feed(1, item)

    def finish(self) -> Mismatch[T] | None:
        """End of both streams: anything still waiting is missing or unexpected."""
        if self.failure is None:
            expected_left, actual_left = self._sides
            if expected_left.waiting or actual_left.waiting:
                self.failure = self._unmatched("missing" if expected_left.waiting else "unexpected")
        return self.failure

    # --- the rule ------------------------------------------------------------------------

    def _feed(self, side: int, item: T) -> Mismatch[T] | None:
        if self.failure is not None:
            return self.failure
        own, other = self._sides[side], self._sides[1 - side]
        partner = other.by_item.get(item)
        partner_id = partner[0] if partner else None
        blocker = self._dependent_before(other, item, partner_id)
        if blocker is not None:
            self.failure = self._unmatched("order", item, blocker)
            return self.failure
        if partner_id is not None:
            self._remove(other, item, partner_id)
            self._matched += 1
        else:
            self._add(own, item)
        return None

    def _dependent_before(self, side: _Side[T], item: T, before: int | None) -> T | None:
        """The first waiting item of ``side`` (arrived before id ``before``, or any if None)
        that depends on ``item``, other than an equal item."""
        if self._dependence is None:
            return None
        if self._classify is not None:
            ids = side.by_class.get(self._classify(item))
            if ids:
                first = side.waiting[ids[0]]
                if first != item and (before is None or ids[0] < before):
                    return first
            return None
        for ident, other in side.waiting.items():
            if before is not None and ident >= before:
                break
            if other != item and self._dependence(other, item):
                return other
        return None

    def _add(self, side: _Side[T], item: T) -> None:
        ident = side.next_id
        side.next_id += 1
        side.waiting[ident] = item
        side.by_item[item].append(ident)
        if self._classify is not None:
            side.by_class[self._classify(item)].append(ident)

    def _remove(self, side: _Side[T], item: T, ident: int) -> None:
        del side.waiting[ident]
        queue = side.by_item[item]
        queue.popleft()
        if not queue:
            del side.by_item[item]
        if self._classify is not None:
            key = self._classify(item)
            ids = side.by_class[key]
            ids.remove(ident)
            if not ids:
                del side.by_class[key]

    def _unmatched(self, kind: str, item: T | None = None, conflicting: T | None = None) -> Mismatch[T]:
        expected_left, actual_left = self._sides
        return Mismatch(
            kind,
            item,
            conflicting,
            _first_counts(expected_left.waiting.values(), self._limit),
            _first_counts(actual_left.waiting.values(), self._limit),
            self._matched,
        )


def _first_counts(items: Iterable[T], limit: int) -> tuple[tuple[T, int], ...]:
    """The first ``limit`` distinct items in arrival order, with their multiplicities."""
    counts: Counter[T] = Counter()
    order: list[T] = []
    for item in items:
        if item not in counts:
            order.append(item)
        counts[item] += 1
    return tuple((item, counts[item]) for item in order[:limit])


def compare(
    expected: Iterable[T], actual: Iterable[T], dependence: Dependence[T] | None = None, *, limit: int = 5
) -> Mismatch[T] | None:
    """Match two complete streams (expected first, then actual, as a DiffStream run with the
    expected stream fully buffered); None when they are equivalent up to ``dependence``."""
    matcher: Matcher[T] = Matcher(dependence, limit=limit)
    for item in expected:
        matcher.expected(item)
    for item in actual:
        if matcher.actual(item) is not None:
            break
    return matcher.finish()
