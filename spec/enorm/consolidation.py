"""Efficient consolidation (Enorm §6.1, Fig. 7-8): build each complete window from the
fewest partial results, using smaller complete windows when they are "compatible".

Setting (the paper's example): one consolidate operator produces tumbling windows of several
sizes (e.g. 5, 10, 15, 20 minutes) from base partials of size ``base`` (1 minute), all
aligned at 0. A window ``[a, a + S)`` may be formed from any *exact tiling* of it by pieces
that are available when it completes: base partials ``[b, b + base)`` and complete windows
of another size ``s < S`` at ``[c, c + s)`` with ``c`` a multiple of ``s`` (that window is
itself produced). Naive consolidation uses ``S / base`` base partials; efficient
consolidation uses a tiling with the fewest pieces - the paper counts 86 instead of 240 per
hour for 5/10/15/20 - or, when the number of keys per piece is known at runtime, the least
total weight ("the best choice is the one which has the smallest number of keys to
consolidate").

Here the definition is by exhaustive enumeration of all tilings (:func:`tilings`), slow and
obviously right; ``reference/enorm/plan.py`` computes the same optimum by a shortest path
over the paper's DAG of ways to form results.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Iterator, Sequence

from spec.errors import InputError


@dataclass(frozen=True)
class Piece:
    """A piece of a tiling: the interval ``[start, start + size)``; ``size == base`` for a
    base partial, else a complete window of that size."""

    start: int
    size: int


def validate_sizes(base: int, sizes: Sequence[int]) -> None:
    """Window sizes must be positive multiples of the base partial size."""
    if base <= 0:
        raise InputError(f"the base partial size must be > 0, got {base}", "base")
    for size in sizes:
        if size <= 0 or size % base:
            raise InputError(f"window size {size} is not a positive multiple of {base}",
                             "sizes")


def available(base: int, sizes: Sequence[int], start: int, window: int) -> list[Piece]:
    """Pieces usable inside ``[start, start + window)``: base partials and complete windows
    of the other (smaller) sizes, aligned to their own size."""
    pieces = [Piece(b, base) for b in range(start, start + window, base)]
    for size in sorted(set(sizes)):
        if base < size < window:
            first = -(-start // size) * size
            pieces += [Piece(c, size) for c in range(first, start + window - size + 1, size)]
    return pieces


def tilings(base: int, sizes: Sequence[int], start: int, window: int) -> Iterator[tuple[Piece, ...]]:
    """Every exact tiling of ``[start, start + window)`` by available pieces."""
    pieces = available(base, sizes, start, window)
    by_start: dict[int, list[Piece]] = {}
    for piece in pieces:
        by_start.setdefault(piece.start, []).append(piece)
    end = start + window

    def extend(position: int) -> Iterator[tuple[Piece, ...]]:
        if position == end:
            yield ()
            return
        for piece in by_start.get(position, []):
            if piece.start + piece.size <= end:
                for rest in extend(piece.start + piece.size):
                    yield (piece,) + rest

    return extend(start)


def optimal_cost(base: int, sizes: Sequence[int], start: int, window: int,
                 weight: Callable[[Piece], int] = lambda piece: 1) -> int:
    """The least total weight of a tiling (weight 1 = the fewest partials merged)."""
    validate_sizes(base, list(sizes) + [window])
    return min(sum(weight(p) for p in tiling) for tiling in tilings(base, sizes, start, window))


def naive_cost(base: int, window: int) -> int:
    """Naive consolidation (Fig. 8): every window from base partials."""
    return window // base


def horizon_cost(base: int, sizes: Sequence[int], horizon: int, efficient: bool) -> int:
    """Partials merged to produce every window of every size over ``[0, horizon)``
    (the paper's "to produce outputs for one hour")."""
    total = 0
    for size in sizes:
        for start in range(0, horizon - size + 1, size):
            total += (optimal_cost(base, sizes, start, size) if efficient
                      else naive_cost(base, size))
    return total
