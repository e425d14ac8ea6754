"""``spark_impl.lru.LRU`` against its docstring: at most ``maxsize`` entries (``maxsize >= 1``,
else ``ValueError``), the least recently used - inserted, read or loaded - evicted first;
``get_or_load`` loads only a missing entry. An unbounded cache or one evicting the wrong entry
gives the same answers (every entry can be loaded again): no run shows it."""

from __future__ import annotations

import pytest

from spark_impl.lru import LRU


@pytest.mark.parametrize("bad", [0, -1])
def test_a_cache_needs_room_for_one_entry(bad: int) -> None:
    with pytest.raises(ValueError):
        LRU(bad)


def test_the_least_recently_used_entry_is_evicted_and_only_a_missing_one_loaded() -> None:
    cache: LRU[str, int] = LRU(2)
    loads: list[str] = []

    def load(key: str) -> int:
        loads.append(key)
        return len(key)

    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)  # "b" is now the least recently used
    assert "b" not in cache and "a" in cache and "c" in cache and len(cache) == 2
    assert cache.get_or_load("a", lambda: load("a")) == 1
    assert cache.get_or_load("dd", lambda: load("dd")) == 2
    assert loads == ["dd"] and "c" not in cache and cache.get("b") is None
    cache.discard("a")
    cache.discard("zz")
    assert "a" not in cache and len(cache) == 1


def test_a_cache_of_one_keeps_the_last_entry() -> None:
    one: LRU[int, int] = LRU(1)
    for i in range(5):
        one.put(i, i)
    assert len(one) == 1 and one.get(4) == 4
