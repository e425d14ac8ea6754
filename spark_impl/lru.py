"""A bounded least-recently-used cache (the per-process caches of tasks and sources).

A streaming job runs for months in the same Python workers, so every cache a task keeps
(input files, request pickles, roles) must be bounded: :class:`LRU` evicts the least
recently used entry once it holds ``maxsize`` entries.
"""

from __future__ import annotations

from collections import OrderedDict
from typing import Callable, Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``maxsize`` entries; :meth:`get_or_load` loads a missing entry."""

    def __init__(self, maxsize: int) -> None:
        if maxsize < 1:
            raise ValueError("an LRU cache needs maxsize >= 1")
        self.maxsize = maxsize
        self._items: OrderedDict[K, V] = OrderedDict()

    def __len__(self) -> int:
        return len(self._items)

    def __contains__(self, key: object) -> bool:
        return key in self._items

    def get(self, key: K) -> V | None:
        """The entry (marked as just used), or None."""
        if key not in self._items:
            return None
        self._items.move_to_end(key)
        return self._items[key]

    def put(self, key: K, value: V) -> None:
        """Insert or replace; evict the least recently used entry beyond ``maxsize``."""
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.maxsize:
            self._items.popitem(last=False)

    def get_or_load(self, key: K, load: Callable[[], V]) -> V:
        """The entry, loaded with ``load()`` and inserted if missing."""
        if key in self._items:
            self._items.move_to_end(key)
            return self._items[key]
        value = load()
        self.put(key, value)
        return value

    def discard(self, key: K) -> None:
        """Remove ``key`` if present."""
        self._items.pop(key, None)
