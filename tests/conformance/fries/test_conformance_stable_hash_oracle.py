"""The Fries suite's stable-hash oracle (:mod:`conformance.fries.driver_oracles.stable_hash`): it
holds on ``spark_impl.keys``, its documented encoding and vectors agree with an independent
BLAKE2b, and it names a hash or routing that departs from the documented definition although
consistent (every process of a run would agree on it, so no differential run sees it), each
given as a hand-built function."""

from __future__ import annotations

import datetime as dt
import math
from decimal import Decimal

import hashlib
import subprocess

import pytest

from typing import Any, Callable

from conformance.core.results import SuiteResult
from conformance.fries.driver_oracles.stable_hash import (
    CHECK, TABLE, VECTORS, documented_encoding, documented_hash, hash_problem, run_hash_check,
)
from spark_impl.keys import route, stable_hash
import spark_impl.keys as keys


def test_the_module_keeps_its_documented_hash_and_routing() -> None:
    result = SuiteResult("fries", "spark", 0)
    assert hash_problem() is None and not run_hash_check(result)
    assert result.checks[0].name == CHECK and result.checks[0].cases == len(TABLE) + len(VECTORS)


def test_the_documented_encoding_of_a_nested_key_and_the_vectors_agree_with_coreutils() -> None:
    """The encoding is the one the docstring spells out, and the published vectors are BLAKE2b
    with an 8-byte digest (``b2sum -l 64``, an implementation other than Python's hashlib)."""
    assert documented_encoding((1, "a")) == b"t2:i1;s1:a"
    assert documented_encoding([2.0, -0.0, 2.5, None, b"x", "é"]) == b"t6:i2;i0;f2.5;Nb1:xs2:\xc3\xa9"
    assert [documented_encoding(k) for k in (Decimal("0.10"), Decimal("-1.23"), Decimal("2.50"), Decimal("3.0"),
                                             Decimal("Infinity"), dt.date(2024, 2, 29), dt.time(0, 0, 1, 5),
                                             dt.timedelta(seconds=-1),
                                             dt.datetime(2024, 2, 29, 12, tzinfo=dt.timezone.utc))] == [
        b"d1e-1;", b"d-123e-2;", b"f2.5;", b"i3;", b"finf;", b"D19782;", b"H1000005;", b"I-1000000;",
        b"Z1709208000000000;"]  # the examples of spark_impl/keys.py's docstring, and one of each rule
    encodings = {documented_encoding(k) for k in TABLE}
    assert len(encodings) >= 35 and len({documented_hash(k) for k in TABLE}) == len(encodings)
    for key, value in VECTORS:
        try:
            done = subprocess.run(["b2sum", "-l", "64"], input=documented_encoding(key), capture_output=True, check=True)
        except FileNotFoundError:
            pytest.skip("no b2sum on this machine")
        assert int(done.stdout.split()[0], 16) >> 1 == value
        assert int.from_bytes(hashlib.blake2b(documented_encoding(key), digest_size=8).digest(), "big") >> 1 == value


def shifted(key: Any) -> int:
    """A consistent hash that is not the documented one: two bits dropped instead of one."""
    return int.from_bytes(hashlib.blake2b(documented_encoding(key), digest_size=8).digest(), "big") >> 2


def little_endian(key: Any) -> int:
    return int.from_bytes(hashlib.blake2b(documented_encoding(key), digest_size=8).digest(), "little") >> 1


def none_like_empty_string(key: Any) -> int:
    return stable_hash("" if key is None else key)


def fractions_truncated(key: Any) -> int:
    return stable_hash(int(key) if isinstance(key, float) and math.isfinite(key) else key)


def times_in_seconds(key: Any) -> int:
    """A naive time hashed by its seconds since midnight, not its microseconds (consistent)."""
    if isinstance(key, dt.time):
        text = f"H{(key.hour * 60 + key.minute) * 60 + key.second};".encode("ascii")
        return int.from_bytes(hashlib.blake2b(text, digest_size=8).digest(), "big") >> 1
    return stable_hash(key)


def decimals_as_text(key: Any) -> int:
    """A Decimal hashed as its string (``Decimal("2.50")`` apart from ``2.5``, which it equals)."""
    return stable_hash(str(key) if isinstance(key, Decimal) else key)


@pytest.mark.parametrize("bad_hash", [shifted, little_endian, none_like_empty_string, fractions_truncated,
                                      times_in_seconds, decimals_as_text])
def test_a_consistent_hash_other_than_the_documented_one_is_named(bad_hash: Callable[[Any], int]) -> None:
    found = hash_problem(stable_hash=bad_hash)
    assert found is not None and ("documented definition" in found or "published test vector" in found), found


def all_to_zero(key: Any, n: int) -> int:
    return 0


def hash_mod_n_plus_one(key: Any, n: int) -> int:
    return route(key, n) if isinstance(key, int) else stable_hash(key) % (n + 1)


def integral_floats_hashed(key: Any, n: int) -> int:
    return stable_hash(key) % n if isinstance(key, float) else route(key, n)


def complex_to_zero(key: Any, n: int) -> int:
    return 0 if isinstance(key, complex) else route(key, n)


@pytest.mark.parametrize("bad_route, seen", [
    (all_to_zero, "route("), (hash_mod_n_plus_one, "stable_hash(key) mod n"), (integral_floats_hashed, "key mod n"),
    (complex_to_zero, "was not refused with TypeError"),
])
def test_a_route_other_than_key_mod_n_or_hash_mod_n_is_named(bad_route: Callable[[Any, int], int], seen: str) -> None:
    found = hash_problem(route=bad_route)
    assert found is not None and seen in found, found


def test_a_failing_oracle_is_an_engine_failure_of_the_suite(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(keys, "route", all_to_zero)
    result = SuiteResult("fries", "spark", 0)
    assert run_hash_check(result)
    assert result.checks[0].failed == 1 and result.checks[0].oracle_failures["engine"] == 1
    assert result.failures[0].explanation.startswith("[engine] route(")
