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

Supported: ``None``, ``bool``, ``int``, ``float``, ``str``, ``bytes``, ``decimal.Decimal``,
``datetime.date``, ``datetime.datetime``, ``datetime.time`` (naive), ``datetime.timedelta``
and tuples/lists of them (nested): every documented form of :mod:`spark_impl.values`.
Anything else is refused with a message (its identity would be ambiguous across processes).

The hash is a durable format (it decides which worker owns a key, and a checkpoint written by
one version is resumed by another), defined exactly as follows (also in ``docs/spark.md``,
"Keys and routing"; checked by the Fries suite's oracle :mod:`conformance.fries.driver_oracles.stable_hash`). The encoding
``E(key)`` is ASCII tags and decimal numbers (no sign for a length, ``-`` for a negative integer):

* ``None``: ``N``;
* an ``int`` (a ``bool`` is the ``int`` it equals) and a finite integral ``float``:
  ``i`` + the integer in decimal + ``;`` (``2.0`` and ``2`` and ``-0.0`` and ``0`` encode alike);
* any other ``float`` (fractional, ``inf``, ``-inf``, ``nan``): ``f`` + Python's ``repr`` + ``;``
  (``2.5`` -> ``f2.5;``);
* a ``str``: ``s`` + the length of its UTF-8 bytes + ``:`` + those bytes;
* ``bytes``/``bytearray``: ``b`` + its length + ``:`` + the bytes;
* a tuple or list: ``t`` + its number of items + ``:`` + the items' encodings, concatenated;
* a ``Decimal`` equal to an ``int`` or a ``float`` (Python's ``==``, which a dict of states
  follows) encodes as that number (``Decimal("2.50")`` as ``f2.5;``, ``Decimal("3.0")`` as
  ``i3;``, ``Decimal("Infinity")`` as ``finf;``); any other finite one: ``d`` + ``-`` if
  negative + its significant digits with trailing zeros removed + ``e`` + the decimal exponent
  + ``;`` (``Decimal("0.10")`` -> ``d1e-1;``, ``Decimal("-1.23")`` -> ``d-123e-2;``); a NaN is
  refused;
* a ``datetime`` with a timezone: ``Z`` + the microseconds from 1970-01-01T00:00 UTC to it +
  ``;`` (equal instants in different zones encode alike, as they compare equal); a naive
  ``datetime``: ``W`` + the microseconds from the naive 1970-01-01T00:00 + ``;``;
* a ``date`` (not a datetime): ``D`` + the days from 1970-01-01 + ``;``;
* a naive ``time``: ``H`` + the microseconds since midnight + ``;``;
* a ``timedelta``: ``I`` + its length in microseconds + ``;``.

The last five were added without changing the encoding of any key supported before (their tags
are new), so every existing hash, and so every checkpoint's routing, is unchanged.

``stable_hash(key)`` is the BLAKE2b digest of ``E(key)`` with an 8-byte digest size (no key,
salt or personalization), read as an unsigned big-endian integer and shifted right by one bit
(its top 63 bits: ``0 <= h < 2**63``). Test vectors (``b2sum -l 64`` agrees):
``stable_hash(None) = 0x690ec8bc5f8488f5``, ``stable_hash("a") = 0x7c8222243eeaa144``,
``stable_hash((1, "a")) = 0x638a5b6acf2de736`` (``E = t2:i1;s1:a``),
``stable_hash(2.5) = 0x4ecc609465433a11``; ``stable_hash(Decimal("0.10")) = 0x62f3af6e79a181cf``
(``E = d1e-1;``), ``stable_hash(date(2024, 2, 29)) = 0x16b16148a38cd6af`` (``E = D19782;``),
``stable_hash(datetime(2024, 2, 29, 12, tzinfo=timezone.utc)) = 0x28169a6d9988a848``
(``E = Z1709208000000000;``).
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
from decimal import Decimal
from typing import Any

_EPOCH = dt.datetime(1970, 1, 1)
_EPOCH_UTC = _EPOCH.replace(tzinfo=dt.timezone.utc)
_MICRO = dt.timedelta(microseconds=1)


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
    elif isinstance(key, Decimal):
        _encode_decimal(key, out)
    elif isinstance(key, dt.datetime):
        if key.tzinfo is None or key.utcoffset() is None:
            out.append(b"W%d;" % ((key.replace(tzinfo=None, fold=0) - _EPOCH) // _MICRO))
        else:
            out.append(b"Z%d;" % ((key - _EPOCH_UTC) // _MICRO))
    elif isinstance(key, dt.date):
        out.append(b"D%d;" % (key - _EPOCH.date()).days)
    elif isinstance(key, dt.time) and key.tzinfo is None:
        out.append(b"H%d;" % (((key.hour * 60 + key.minute) * 60 + key.second) * 1_000_000 + key.microsecond))
    elif isinstance(key, dt.timedelta):
        out.append(b"I%d;" % (key // _MICRO))
    else:
        raise TypeError(f"a key of type {type(key).__name__} cannot be routed stably (use str, int, float, "
                        "bytes, None, Decimal, date, datetime, time, timedelta or tuples of them)")


def _encode_decimal(key: Decimal, out: list[bytes]) -> None:
    """A Decimal as the int or float it equals (Python's ``==`` and ``hash`` merge them), else
    ``d<sign><digits>e<exponent>;`` with the trailing zeros moved into the exponent."""
    if key.is_nan():
        raise TypeError(f"a Decimal NaN cannot be routed stably (it equals nothing, not even itself): {key!r}")
    if key.is_infinite() or key == key.to_integral_value():
        _encode(float(key) if key.is_infinite() else int(key), out)
        return
    as_float = float(key)
    if Decimal(as_float) == key:
        _encode(as_float, out)
        return
    sign, digits, exponent = key.as_tuple()
    assert isinstance(exponent, int)
    text = "".join(map(str, digits)).rstrip("0")
    exponent += len(digits) - len(text)
    out.append(b"d%s%se%d;" % (b"-" if sign else b"", text.encode("ascii"), exponent))


def stable_hash(key: Any) -> int:
    """A 63-bit hash of ``key``'s value, the same in every process (see the module docstring)."""
    parts: list[bytes] = []
    _encode(key, parts)
    return int.from_bytes(hashlib.blake2b(b"".join(parts), digest_size=8).digest(), "big") >> 1


def key_order(key: Any) -> tuple[int, Any]:
    """A total order on keys of every supported type, for a deterministic iteration over keys
    of mixed types: numbers (``Decimal`` included; a NaN, which compares with nothing, excepted)
    numerically, then every other key by :func:`stable_hash` (a plain ``sorted`` raises
    TypeError on a string next to a number, ``None`` or a tuple)."""
    numeric = isinstance(key, int) or (isinstance(key, (float, Decimal)) and not math.isnan(key))
    return (0, key) if numeric else (1, stable_hash(key))


def route(key: Any, n: int) -> int:
    """The index in ``range(n)`` that ``key`` goes to: ``key mod n`` for an integer (or an
    integral float or Decimal: equal keys go alike), else ``stable_hash(key) mod n``."""
    if isinstance(key, int):
        return int(key) % n
    if isinstance(key, float) and math.isfinite(key) and key.is_integer():
        return int(key) % n
    if isinstance(key, Decimal) and key.is_finite() and key == key.to_integral_value():
        return int(key) % n
    return stable_hash(key) % n


def key_from_json(raw: Any) -> Any:
    """A key read from JSON: lists become tuples (recursively), so the key is hashable."""
    if isinstance(raw, list):
        return tuple(key_from_json(item) for item in raw)
    return raw
