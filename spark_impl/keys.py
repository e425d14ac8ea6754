"""Keys of any type and their stable routing (the same on the driver, on every executor and
in every Python process).

Python's ``hash`` of a string is salted per process (``PYTHONHASHSEED``), so routing by it
would send one key to different workers in different Spark Python workers. :func:`route`
keeps the project's integer routing (key ``k`` on worker ``k mod p``, Fries §7.2, what
:func:`spec.fries.scenario.object_of` and the reference use) and routes every other key by
:func:`stable_hash`: BLAKE2b of a canonical, type-tagged encoding, so it depends only on the
key's value. Keys equal in Python route alike: ``True`` = 1, ``2.0`` = 2 (a dict of states
merges them, so routing must too); a list routes like the tuple of its items (JSON has no
tuples: :func:`key_from_json` turns a list read from JSON back into a tuple).

Supported: ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes`` and tuples/lists of
them (nested). Anything else is refused with a message (its identity would be ambiguous
across processes).

The hash is a durable format (it decides which worker owns a key, and a checkpoint written by
one version is resumed by another), defined exactly as follows (also in ``docs/spark.md``,
"Keys and routing"; checked by :mod:`conformance.keys_check` in the Fries suite). The encoding
``E(key)`` is ASCII tags and decimal numbers (no sign for a length, ``-`` for a negative integer):

* ``None``: ``N``;
* an ``int`` (a ``bool`` is the ``int`` it equals) and a finite integral ``float``:
  ``i`` + the integer in decimal + ``;`` (``2.0`` and ``2`` and ``-0.0`` and ``0`` encode alike);
* any other ``float`` (fractional, ``inf``, ``-inf``, ``nan``): ``f`` + Python's ``repr`` + ``;``
  (``2.5`` -> ``f2.5;``);
* a ``str``: ``s`` + the length of its UTF-8 bytes + ``:`` + those bytes;
* ``bytes``/``bytearray``: ``b`` + its length + ``:`` + the bytes;
* a tuple or list: ``t`` + its number of items + ``:`` + the items' encodings, concatenated.

``stable_hash(key)`` is the BLAKE2b digest of ``E(key)`` with an 8-byte digest size (no key,
salt or personalization), read as an unsigned big-endian integer and shifted right by one bit
(its top 63 bits: ``0 <= h < 2**63``). Test vectors (``b2sum -l 64`` agrees):
``stable_hash(None) = 0x690ec8bc5f8488f5``, ``stable_hash("a") = 0x7c8222243eeaa144``,
``stable_hash((1, "a")) = 0x638a5b6acf2de736`` (``E = t2:i1;s1:a``),
``stable_hash(2.5) = 0x4ecc609465433a11``.
"""

from __future__ import annotations

import hashlib
import math
from typing import Any


def _encode(key: Any, out: list[bytes]) -> None:
    if key is None:
        out.append(b"N")
    elif isinstance(key, int):  # bool included: True == 1
        out.append(b"i%d;" % int(key))
    elif isinstance(key, float):
        if math.isfinite(key) and key.is_integer():
            out.append(b"i%d;" % int(key))
        else:
            out.append(b"f" + repr(key).encode() + b";")
    elif isinstance(key, str):
        raw = key.encode("utf-8")
        out.append(b"s%d:" % len(raw) + raw)
    elif isinstance(key, (bytes, bytearray)):
        out.append(b"b%d:" % len(key) + bytes(key))
    elif isinstance(key, (tuple, list)):
        out.append(b"t%d:" % len(key))
        for item in key:
            _encode(item, out)
    else:
        raise TypeError(f"a key of type {type(key).__name__} cannot be routed stably "
                        "(use str, int, float, bytes, None or tuples of them)")


def stable_hash(key: Any) -> int:
    """A 63-bit hash of ``key``'s value, the same in every process (see the module docstring)."""
    parts: list[bytes] = []
    _encode(key, parts)
    return int.from_bytes(hashlib.blake2b(b"".join(parts), digest_size=8).digest(), "big") >> 1


def key_order(key: Any) -> tuple[int, Any]:
    """A total order on keys of every supported type, for a deterministic iteration over keys
    of mixed types: numbers numerically, then every other key by :func:`stable_hash` (a plain
    ``sorted`` raises TypeError on a string next to a number, ``None`` or a tuple)."""
    return (0, key) if isinstance(key, (int, float)) else (1, stable_hash(key))


def route(key: Any, n: int) -> int:
    """The index in ``range(n)`` that ``key`` goes to: ``key mod n`` for an integer (or an
    integral float), else ``stable_hash(key) mod n``."""
    if isinstance(key, int):
        return int(key) % n
    if isinstance(key, float) and math.isfinite(key) and key.is_integer():
        return int(key) % n
    return stable_hash(key) % n


def key_from_json(raw: Any) -> Any:
    """A key read from JSON: lists become tuples (recursively), so the key is hashable."""
    if isinstance(raw, list):
        return tuple(key_from_json(item) for item in raw)
    return raw
