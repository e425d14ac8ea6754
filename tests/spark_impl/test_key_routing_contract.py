"""Key routing (:mod:`spark_impl.keys`'s docstring): an integer key ``k`` (a bool, an integral
float) goes to worker ``k mod p`` (Fries §7.2, what ``spec.fries.scenario.object_of`` and the
reference use); every other key by a stable hash of a canonical, type-tagged encoding of its
value. So keys equal in Python route and hash alike (``True`` = 1, ``2.0`` = 2, a list like the
tuple of its items), *distinct* keys have distinct 63-bit hashes (a collision among a few dozen
keys means the encoding lost information), a key read back from JSON routes like the key
written, the hash is the same in another Python process (string hashing is salted per process,
``PYTHONHASHSEED``), and a key of another type is refused with ``TypeError``. A broken routing
still gives consistent runs (every process agrees on the broken function), so no output shows it.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from typing import Any

import pytest

from spark_impl.keys import key_from_json, route, stable_hash

KEYS: tuple[Any, ...] = (
    None, 0, 1, 2, 3, -1, -7, 12, 2**40 + 3, -(2**70), 2.5, -0.5, 2.25, 1e-9, 7.75, 1e300, math.inf, -math.inf,
    "", "a", "b", "ab", "2", "None", "é", "x" * 40, b"", b"a", b"2", b"ab\x00", (), (1,), (1, 2), (2, 1),
    ("a", 1), (1, "a"), ((1, 2), 3), (1, (2, 3)), (None,), (2.5,), ("", ""), (b"a", "a"),
)
"""Keys of every supported type: pairwise distinct in Python (no NaN: a NaN is not equal to
itself, so it cannot be looked up as a key at all)."""

ALIKE: tuple[tuple[Any, Any], ...] = (
    (True, 1), (False, 0), (2.0, 2), (-3.0, -3), (0.0, -0.0), (1e20, 10**20), ([1, 2], (1, 2)),
    ([["a", 1], 2.0], (("a", 1), 2)), (bytearray(b"ab"), b"ab"),
)
"""Pairs equal in Python (or documented to route alike): they must route and hash alike."""

REFUSED: tuple[Any, ...] = (object(), {1: 2}, {1, 2}, (1, object()), 1j)
"""Not routable: refused with TypeError."""

WORKERS = (1, 2, 3, 5, 7)
"""Worker counts routed to."""



def jsonable(key: Any) -> bool:
    """Can ``key`` be written as JSON (no bytes, no infinity, anywhere inside)?"""
    if isinstance(key, tuple):
        return all(jsonable(item) for item in key)
    return not isinstance(key, bytes) and key not in (math.inf, -math.inf)



def test_every_hash_is_63_bits_and_distinct_keys_hash_apart() -> None:
    hashes = {stable_hash(key): key for key in KEYS}
    assert all(0 <= h < 2**63 for h in hashes)
    assert len(hashes) == len(KEYS), "distinct keys share a stable hash: the encoding loses part of a value"


@pytest.mark.parametrize("key", KEYS, ids=repr)
def test_an_integral_key_goes_to_k_mod_p_and_every_key_to_a_worker(key: Any) -> None:
    integral = isinstance(key, int) or isinstance(key, float) and math.isfinite(key) and key.is_integer()
    for n in WORKERS:
        got = route(key, n)
        assert 0 <= got < n
        if integral:
            assert got == int(key) % n


@pytest.mark.parametrize("key", [k for k in KEYS if jsonable(k)], ids=repr)
def test_a_key_read_back_from_json_is_the_key_written(key: Any) -> None:
    back = key_from_json(json.loads(json.dumps(key)))
    assert back == key and stable_hash(back) == stable_hash(key)


@pytest.mark.parametrize("a, b", ALIKE, ids=repr)
def test_keys_equal_in_python_hash_and_route_alike(a: Any, b: Any) -> None:
    assert stable_hash(a) == stable_hash(b)
    assert [route(a, n) for n in WORKERS] == [route(b, n) for n in WORKERS]


@pytest.mark.parametrize("bad", REFUSED, ids=repr)
def test_a_key_of_another_type_is_refused_with_type_error(bad: Any) -> None:
    with pytest.raises(TypeError):
        stable_hash(bad)
    with pytest.raises(TypeError):
        route(bad, 3)


def test_the_hash_is_the_same_in_another_process() -> None:
    """String hashing is salted per process: the stable hash must not use it."""
    code = ("import json, sys; from spark_impl.keys import stable_hash; "
            "keys = eval(sys.stdin.read(), {'inf': float('inf')}); print(json.dumps([stable_hash(k) for k in keys]))")
    env = dict(os.environ, PYTHONHASHSEED="12345")
    done = subprocess.run([sys.executable, "-c", code], input=repr(KEYS), capture_output=True, text=True, env=env,
                          timeout=120, check=True)
    assert json.loads(done.stdout) == [stable_hash(k) for k in KEYS]
