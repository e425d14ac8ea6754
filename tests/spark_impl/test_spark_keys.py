"""Stable key routing (spark_impl.keys): integers keep the project's ``k mod p`` (§7.2, what
the spec and the reference use); any other key is routed by a hash of its value that is the
same in every Python process (string hashing is salted per process: PYTHONHASHSEED)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from hypothesis import given, strategies as st

from spec.fries.scenario import object_of
from spark_impl.keys import key_from_json, route, stable_hash
from spark_impl.lru import LRU
from spark_impl.reconfig.model import Job, ListSource
from spec.fries.dataflow import dataflow

KEYS = ["alice", "", "ünïcode", ("a", 1), ("a", (2, "b")), 3.5, None, b"raw", -7, 10**30]
_SCRIPT = ("import json, sys; from spark_impl.keys import route, stable_hash, key_from_json; "
           "keys = [key_from_json(k) for k in json.loads(sys.argv[1])]; "
           "print(json.dumps([[route(k, 7), stable_hash(k)] for k in keys]))")
scalars = st.one_of(st.none(), st.integers(), st.text(max_size=8), st.floats(allow_nan=False), st.binary(max_size=4))
keys = st.recursive(scalars, lambda inner: st.tuples(inner, inner), max_leaves=6)


def _in_process(seed: str) -> list[list[int]]:
    raw = json.dumps([list(k) if isinstance(k, tuple) else k for k in KEYS if not isinstance(k, bytes)])
    env = {**os.environ, "PYTHONHASHSEED": seed}
    out = subprocess.run([sys.executable, "-c", _SCRIPT, raw], env=env, capture_output=True, text=True, check=True)
    return list(json.loads(out.stdout))


def test_routing_is_the_same_in_processes_with_different_hash_seeds() -> None:
    first, second = _in_process("1"), _in_process("2")
    here = [[route(k, 7), stable_hash(k)] for k in KEYS if not isinstance(k, bytes)]
    assert first == second == here
    # the salted hash really differs between those processes (so the test can fail)
    probe = "import sys; print(hash('alice'))"
    salted = {subprocess.run([sys.executable, "-c", probe], env={**os.environ, "PYTHONHASHSEED": s},
                             capture_output=True, text=True, check=True).stdout for s in ("1", "2")}
    assert len(salted) == 2


@given(st.integers(), st.integers(min_value=1, max_value=64))
def test_integer_keys_route_like_the_spec(key: int, workers: int) -> None:
    job = Job(dataflow([("S", "source"), ("M", "one-to-one")], [("S", "M")]), {}, ListSource(()), {"M": workers})
    assert job.object_of("M", key) == object_of("M", key, workers)


@given(keys, st.integers(min_value=1, max_value=16))
def test_equal_keys_route_alike_and_in_range(key: object, n: int) -> None:
    assert 0 <= route(key, n) < n
    as_json = json.loads(json.dumps(key, default=lambda b: None)) if not _has_bytes(key) else None
    if as_json is not None and key_from_json(as_json) == key:
        assert route(key_from_json(as_json), n) == route(key, n)
    assert route(True, n) == route(1, n) and route(2.0, n) == route(2, n)
    assert route(["a", 1], n) == route(("a", 1), n)


def _has_bytes(key: object) -> bool:
    return isinstance(key, bytes) or (isinstance(key, tuple) and any(_has_bytes(k) for k in key))


def test_distinct_values_hash_apart_and_unroutable_keys_are_refused() -> None:
    assert len({stable_hash(k) for k in KEYS}) == len(KEYS)
    assert stable_hash("1") != stable_hash(1) and stable_hash(("a",)) != stable_hash("a")
    with pytest.raises(TypeError, match="cannot be routed stably"):
        route({"a": 1}, 3)


def test_lru_keeps_the_most_recently_used() -> None:
    cache: LRU[str, int] = LRU(2)
    cache.put("a", 1)
    cache.put("b", 2)
    assert cache.get("a") == 1
    cache.put("c", 3)  # evicts b, the least recently used
    assert "b" not in cache and len(cache) == 2
    assert cache.get_or_load("d", lambda: 4) == 4 and "a" not in cache
    with pytest.raises(ValueError):
        LRU(0)
