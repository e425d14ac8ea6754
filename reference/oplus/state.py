"""The window state sigma (STRETCH Alg. 2 auxiliary methods): for each key, its window sets
ordered by left boundary, plus an index from left boundary to the keys whose *first* set
starts there (what the expiry loop of Alg. 2 L28-30 / Alg. 4 L16-18 looks up).

The same class serves as an SN instance's private sigma_j and as VSN's shared sigma. It
records every write as (key, writer, epoch) when ``audit`` is on, so tests can check
Theorem 3's claim that each key is updated by one instance at a time: writes of a key never
go back to an older epoch, and within an epoch come from a single instance.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from spec.oplus.model import Key, State, WindowSet


def _left(ws: WindowSet) -> int:
    return ws.left


@dataclass(frozen=True)
class Write:
    """One audited write of ``key``'s windows by instance ``writer`` in epoch ``epoch``."""

    key: Key
    writer: int
    epoch: int


class WindowStore:
    """sigma: ``sets[k]`` is the list of k's window sets by increasing left boundary."""

    def __init__(self, audit: bool = False) -> None:
        self._sets: dict[Key, list[WindowSet]] = {}
        self._first_at: dict[int, set[Key]] = {}
        self._lefts: list[int] = []  # sorted left boundaries present in _first_at
        self._last_ts: dict[Key, int] = {}
        self.audit = audit
        self.writes: list[Write] = []

    # --- queries ---------------------------------------------------------------------------

    def first(self, key: Key) -> WindowSet | None:
        """sigma[k][1]: the earliest window set of ``key``."""
        sets = self._sets.get(key)
        return sets[0] if sets else None

    def keys_at(self, left: int) -> tuple[Key, ...]:
        """Keys whose first window set starts at ``left`` (in a deterministic order)."""
        return tuple(sorted(self._first_at.get(left, ()), key=repr))

    def next_left_after(self, left: float) -> int | None:
        """The smallest left boundary of a first window set strictly after ``left``."""
        index = bisect.bisect_right(self._lefts, left)
        return self._lefts[index] if index < len(self._lefts) else None

    def min_left(self) -> int | None:
        """The smallest left boundary of any first window set."""
        return self._lefts[0] if self._lefts else None

    def last_ts(self, key: Key) -> int | None:
        """The timestamp of the last tuple that updated ``key`` (for the f_S guard)."""
        return self._last_ts.get(key)

    def key_count(self) -> int:
        """How many keys hold window sets."""
        return len(self._sets)

    def window_sets(self) -> int:
        """How many window sets are held in total."""
        return sum(len(v) for v in self._sets.values())

    # --- updates ---------------------------------------------------------------------------

    def check_and_create(self, key: Key, left: int, empty: tuple[State, ...]) -> WindowSet:
        """check&Create(k, l): the window set of ``key`` at ``left``, created empty if absent."""
        sets = self._sets.setdefault(key, [])
        index = bisect.bisect_left(sets, left, key=_left)  # O(log n): WS / WA sets per key
        if index < len(sets) and sets[index].left == left:
            return sets[index]
        old_first = sets[0].left if sets else None
        created = WindowSet(left, key, empty)
        sets.insert(index, created)
        if index == 0:
            self._move_first(key, old_first, left)
        return created

    def set(self, key: Key, ws: WindowSet, ts: int | None, writer: int, epoch: int) -> None:
        """sigma.set(k, l, states): replace the set with ``ws.left``; ``ts`` = the updating
        tuple's timestamp."""
        sets = self._sets[key]
        index = bisect.bisect_left(sets, ws.left, key=_left)
        if index == len(sets) or sets[index].left != ws.left:
            raise KeyError(f"no window set of {key!r} at {ws.left}")
        sets[index] = ws
        if ts is not None:
            self._last_ts[key] = ts
        self._audit(key, writer, epoch)

    def shift_first(self, key: Key, states: tuple[State, ...], advance: int,
                    writer: int, epoch: int) -> None:
        """sigma.shift(k, 1, states): the first set moves ``advance`` (WA) later."""
        sets = self._sets[key]
        old = sets[0]
        moved = WindowSet(old.left + advance, key, states)
        sets.pop(0)
        lefts = [ws.left for ws in sets]
        if moved.left in lefts:
            raise AssertionError(f"shifting {key!r} onto an existing window set at {moved.left}")
        sets.insert(bisect.bisect_left(lefts, moved.left), moved)
        self._move_first(key, old.left, sets[0].left)
        self._audit(key, writer, epoch)

    def remove_first(self, key: Key, writer: int, epoch: int) -> None:
        """sigma.remove(k, 1)."""
        sets = self._sets[key]
        old = sets.pop(0)
        if sets:
            self._move_first(key, old.left, sets[0].left)
        else:
            self._move_first(key, old.left, None)
            del self._sets[key]
            self._last_ts.pop(key, None)
        self._audit(key, writer, epoch)

    # --- state transfer (SN reconfiguration) ---------------------------------------------

    def keys(self) -> list[Key]:
        """Every key holding window sets (in a deterministic order)."""
        return sorted(self._sets, key=repr)

    def take(self, key: Key) -> tuple[list[WindowSet], int | None]:
        """Remove and return ``key``'s window sets and last-update timestamp (the part of an
        SN instance's sigma_j that moves to another instance)."""
        sets = self._sets.pop(key)
        self._move_first(key, sets[0].left, None)
        return sets, self._last_ts.pop(key, None)

    def put(self, key: Key, sets: list[WindowSet], last_ts: int | None) -> None:
        """Install window sets taken from another store (``key`` must not be present)."""
        if key in self._sets:
            raise AssertionError(f"state transfer onto a store that already holds {key!r}")
        self._sets[key] = list(sets)
        self._move_first(key, None, sets[0].left)
        if last_ts is not None:
            self._last_ts[key] = last_ts

    # --- internals -------------------------------------------------------------------------

    def _move_first(self, key: Key, old: int | None, new: int | None) -> None:
        if old == new:
            return
        if old is not None:
            keys = self._first_at[old]
            keys.discard(key)
            if not keys:
                del self._first_at[old]
                self._lefts.pop(bisect.bisect_left(self._lefts, old))
        if new is not None:
            if new not in self._first_at:
                self._first_at[new] = set()
                bisect.insort(self._lefts, new)
            self._first_at[new].add(key)

    def _audit(self, key: Key, writer: int, epoch: int) -> None:
        if self.audit:
            self.writes.append(Write(key, writer, epoch))
