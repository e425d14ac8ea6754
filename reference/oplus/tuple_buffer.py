"""The tuple buffer TB (STRETCH Def. 6, Table II; ScaleGate §2.4, Elastic ScaleGate §6).

A single-threaded model of the shared object: sources ``add`` timestamp-sorted tuples and
explicit watermarks; TB merges them into one stream of *ready* tuples in the total order
(ts, source, seq) (Def. 3 with the tie-break of :mod:`spec.oplus.watermarks`) interleaved with
non-decreasing watermarks (the minimum source bound); every reader ``get``s every item of
that stream exactly once. Elastic methods (Table II, highlighted): ``add_readers``,
``remove_readers``, ``add_sources``, ``remove_sources``.

Choices (docs/oplus.md):

* ``add_readers(R, j)``: the new readers start at the item *last returned* to reader j (the
  tuple j is processing when it reconfigures), so they process the triggering tuple t as
  Theorem 3's proof requires ("o_j will ... process t after having been connected").
* ``add_sources(S, bound)``: the new sources start with the given bound; STRETCH passes the
  triggering tuple's timestamp (Lemma 3). ESG's "dummy tuple" is this bound. A bound below
  the watermark already delivered is raised to it (a new source cannot take a delivered
  watermark back; an output below it is then reported as :class:`UnsortedSource`).
* ``remove_sources(S)``: ESG's "flush tuple": the source's bound stops holding the merge
  back, so its tuples become ready as the other sources allow.
* A source adding a tuple earlier than its own bound violates the "timestamp-sorted source"
  precondition: :class:`UnsortedSource` is raised (this is how executors detect a Lemma 2 or
  Lemma 3 violation at the output buffer).
* "If more readers invoke addReaders concurrently, only one succeeds": a call naming a reader
  (source) that already exists returns False and changes nothing.
"""

from __future__ import annotations

import heapq
import itertools
import math
from typing import Hashable, Iterable

from spec.oplus.model import StreamTuple
from spec.oplus.watermarks import Delivered
from spec.oplus.windows import NO_WATERMARK, Watermark

ReaderId = Hashable


class UnsortedSource(ValueError):
    """A source added a tuple earlier than its bound (its previous tuple or watermark)."""


class TupleBuffer:
    """TB (Def. 6). Sources are ints (their order breaks timestamp ties)."""

    def __init__(self, sources: Iterable[int], readers: Iterable[ReaderId]) -> None:
        self._bounds: dict[int, Watermark] = {s: NO_WATERMARK for s in sources}
        self._pending: list[tuple[int, int, int, int, StreamTuple]] = []
        self._arrival = itertools.count()
        self._log: list[Delivered] = []
        self._position: dict[ReaderId, int] = {r: 0 for r in readers}
        self._watermark: Watermark = NO_WATERMARK

    # --- sources ---------------------------------------------------------------------------

    def add(self, t: StreamTuple, source: int) -> None:
        """Table II add(t, j): source ``source`` adds ``t`` (``t.ts`` >= its bound)."""
        bound = self._bound_of(source)
        if t.ts < bound:
            raise UnsortedSource(f"source {source} added ts {t.ts} after bound {bound}")
        self._bounds[source] = t.ts
        heapq.heappush(self._pending, (t.ts, source, t.seq, next(self._arrival), t))
        self._release()

    def add_watermark(self, value: Watermark, source: int) -> None:
        """An explicit watermark of ``source``: its later tuples have ``ts >= value``.
        A value below the current bound is harmless and ignored."""
        self._bounds[source] = max(self._bound_of(source), value)
        self._release()

    def add_sources(self, sources: Iterable[int], bound: Watermark) -> bool:
        """Table II addSources: add every new source with initial bound ``bound``; False
        (and no change) if one of them already is a source."""
        new = list(sources)
        if any(s in self._bounds for s in new):
            return False
        for s in new:
            self._bounds[s] = max(bound, self._watermark)
        return True

    def remove_sources(self, sources: Iterable[int]) -> bool:
        """Table II removeSources: remove every named source (ESG's flush tuple); False (and
        no change) unless all of them are sources."""
        old = list(sources)
        if any(s not in self._bounds for s in old):
            return False
        for s in old:
            del self._bounds[s]
        self._release()
        return True

    @property
    def sources(self) -> frozenset[int]:
        """The current sources."""
        return frozenset(self._bounds)

    def bounds(self) -> dict[int, Watermark]:
        """Each source's bound: its last tuple's timestamp or explicit watermark."""
        return dict(self._bounds)

    def pending(self) -> list[tuple[int, StreamTuple]]:
        """The ``(source, tuple)`` pairs added but not yet ready, by source then sequence
        number (what an SN instance's state transfer must hand over: STRETCH §3, SN
        reconfiguration moves buffered input with the state)."""
        return sorted(((source, t) for _, source, _, _, t in self._pending),
                      key=lambda pair: (pair[0], pair[1].seq))

    # --- readers ---------------------------------------------------------------------------

    def get(self, reader: ReaderId) -> Delivered | None:
        """Table II get(j): the next item for ``reader`` or None if none is ready yet."""
        position = self._position[reader]
        if position >= len(self._log):
            return None
        self._position[reader] = position + 1
        return self._log[position]

    def add_readers(self, readers: Iterable[ReaderId], invoker: ReaderId) -> bool:
        """Table II addReaders(R, j): the new readers start at the item last returned to
        ``invoker`` (see the module docstring); False if one of them already is a reader."""
        new = list(readers)
        if any(r in self._position for r in new):
            return False
        start = max(self._position[invoker] - 1, 0)
        for r in new:
            self._position[r] = start
        return True

    def remove_readers(self, readers: Iterable[ReaderId]) -> bool:
        """Table II removeReaders: False (and no change) unless all are readers."""
        old = list(readers)
        if any(r not in self._position for r in old):
            return False
        for r in old:
            del self._position[r]
        return True

    @property
    def readers(self) -> frozenset[ReaderId]:
        """The current readers."""
        return frozenset(self._position)

    def is_reader(self, reader: ReaderId) -> bool:
        """Whether ``reader`` currently reads this TB."""
        return reader in self._position

    def backlog(self, reader: ReaderId) -> int:
        """Items ready for ``reader`` and not yet read."""
        return len(self._log) - self._position[reader]

    @property
    def watermark(self) -> Watermark:
        """The last watermark delivered."""
        return self._watermark

    # --- internals -------------------------------------------------------------------------

    def _bound_of(self, source: int) -> Watermark:
        if source not in self._bounds:
            raise KeyError(f"{source} is not a source of this tuple buffer")
        return self._bounds[source]

    def _release(self) -> None:
        """Move ready tuples (Def. 3, total tie-break) to the log, then the merged watermark."""
        while self._pending:
            ts, source, _, _, t = self._pending[0]
            if not self._ready(ts, source):
                break
            heapq.heappop(self._pending)
            self._log.append(Delivered(watermark=ts, tuple=t))
        merged = min(self._bounds.values(), default=math.inf)
        if merged > self._watermark:
            self._watermark = merged
            self._log.append(Delivered(watermark=merged))

    def _ready(self, ts: int, source: int) -> bool:
        for other, bound in self._bounds.items():
            if other == source:
                continue
            if bound < ts or (bound == ts and other < source):
                return False
        return True
