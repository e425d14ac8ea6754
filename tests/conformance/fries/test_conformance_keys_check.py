"""The documented stable hash and routing check (``conformance.fries.checks.keys``):
it passes on the module, and fails on one-line bugs of ``spark_impl/keys.py`` that every process of a
run would agree on (so no differential run sees them), each recompiled from the module's source
with one change."""

from __future__ import annotations

import hashlib
import subprocess

import pytest

from support.source_rewrite import rewritten_function

import spark_impl.keys as keys
from conformance.fries.checks.keys import TABLE, VECTORS, documented_encoding, documented_hash, hash_problem


def test_the_module_keeps_its_documented_hash_and_routing() -> None:
    assert hash_problem() is None


def test_the_documented_encoding_of_a_nested_key_and_the_vectors_agree_with_coreutils() -> None:
    """The encoding is the one the docstring spells out, and the published vectors are BLAKE2b
    with an 8-byte digest (``b2sum -l 64``, an implementation other than Python's hashlib)."""
    assert documented_encoding((1, "a")) == b"t2:i1;s1:a"
    assert documented_encoding([2.0, -0.0, 2.5, None, b"x", "é"]) == b"t6:i2;i0;f2.5;Nb1:xs2:\xc3\xa9"
    encodings = {documented_encoding(k) for k in TABLE}
    assert len(encodings) >= 35 and len({documented_hash(k) for k in TABLE}) == len(encodings)
    for key, value in VECTORS:
        try:
            done = subprocess.run(["b2sum", "-l", "64"], input=documented_encoding(key), capture_output=True, check=True)
        except FileNotFoundError:
            pytest.skip("no b2sum on this machine")
        assert int(done.stdout.split()[0], 16) >> 1 == value
        assert int.from_bytes(hashlib.blake2b(documented_encoding(key), digest_size=8).digest(), "big") >> 1 == value


@pytest.mark.parametrize("name, old, new, seen", [
    # a consistent, but different, hash
    ("stable_hash", '"big") >> 1', '"big") >> 2', "documented definition"),  # NumberReplacer:2
    ("stable_hash", "digest_size=8", "digest_size=9", "documented definition"),
    ("stable_hash", '"big")', '"little")', "documented definition"),
    ("_encode", 'out.append(b"N")', 'out.append(b"n")', "documented definition"),
    ("_encode", 'b"s%d:" % len(raw) + raw', 'b"s%d;" % len(raw) + raw', "documented definition"),
    ("route", "and math.isfinite(key) and", "or math.isfinite(key) and", "raised TypeError"),  # ReplaceAndWithOr:1
    ("route", "math.isfinite(key) and key.is_integer()", "math.isfinite(key) or key.is_integer()", "raised AttributeError"),
    ("route", "return stable_hash(key) % n", "return stable_hash(key) % (n + 1)", "stable_hash(key) mod n"),
])
def test_a_changed_hash_or_route_is_caught(monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str,
                                           seen: str) -> None:
    monkeypatch.setattr(keys, name, rewritten_function(keys, name, old, new))
    found = hash_problem()
    assert found is not None and seen in found, found


def test_an_unsupported_key_routed_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    real = keys.route
    monkeypatch.setattr(keys, "route", lambda key, n: 0 if isinstance(key, complex) else real(key, n))
    assert "was not refused with TypeError" in (hash_problem() or "")
