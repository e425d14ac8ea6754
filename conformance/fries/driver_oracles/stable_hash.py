"""An oracle of the Fries suite: the stable hash and the routing of :mod:`spark_impl.keys` against
their DOCUMENTED definition, without Spark (the suite's check :data:`CHECK`, run by
:func:`run_hash_check` before any Spark job).

Which worker owns a key is ``route(key, p)``, and a durable checkpoint written by one version of
the executor is resumed by another: the hash is a durable format, not merely *some* stable
function. Every process of one run agrees on whatever the code computes, so no differential run
can see a changed hash (``keys.py`` ``>> 1`` -> ``>> 2``: routing stays
consistent, every output is right). Here the definition written in ``spark_impl/keys.py``'s module
docstring and ``docs/spark.md`` ("Keys and routing") is recomputed independently of the module's
code - :func:`documented_encoding` is written from the document, not copied from ``_encode`` -
for keys of every supported type, and compared:

* ``stable_hash(key)`` is the top 63 bits of the 8-byte BLAKE2b digest (big endian) of the
  key's documented encoding, for every key of :data:`TABLE` (None, bools, ints of any size,
  integral, fractional and non-finite floats, str, bytes, bytearray, tuples and lists, nested,
  Decimals of every encoding rule, aware and naive datetimes, dates, naive times, timedeltas);
* the published test vectors (:data:`VECTORS`, listed in the docstring and the docs) hold;
* ``route(key, n)`` is ``key mod n`` for an int, a bool, an integral finite float or Decimal,
  and ``stable_hash(key) mod n`` for every other key, for several worker counts;
* a key of an unsupported type (anywhere inside a tuple), an aware ``time`` and a Decimal NaN
  are refused with ``TypeError`` by both.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import math
import time
from decimal import Decimal
from typing import Any, Callable

from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.core.watchdog import bounded
from spark_impl import keys

CHECK = "spark_impl stable hash and routing vs their documented definition (no Spark)"
"""Name of the suite's check (:func:`run_hash_check`)."""

#: Keys of every supported type, including the edges of each encoding rule.
TABLE: tuple[Any, ...] = (
    None, True, False, 0, 1, -1, 7, -12, 2**63, -(2**64) - 5, 10**30,
    0.0, -0.0, 3.0, -4.0, 1e20, 2.5, -0.75, 1e-9, 123456.789, 1e300 * 10, -math.inf, math.nan,
    "", "a", "key", "é", "日本", "a:b;c", "x" * 70,
    b"", b"a", b"\x00\xff", bytearray(b"ab"),
    (), (1,), (1, 2), ("a", 1.5), [1, "b"], ((1, (2, None)), b"z", [3.5, []]),
    Decimal("3"), Decimal("3.0"), Decimal("-7"), Decimal("2.50"), Decimal("Infinity"), Decimal("-Infinity"),
    Decimal("0.10"), Decimal("-1.23"), Decimal("1E+3"), Decimal("0.1"), Decimal("123456789012345678901.5"),
    dt.datetime(2024, 2, 29, 12, tzinfo=dt.timezone.utc),
    dt.datetime(2024, 2, 29, 13, 30, tzinfo=dt.timezone(dt.timedelta(hours=1, minutes=30))),
    dt.datetime(1969, 12, 31, 23, 59, 59, 999999, tzinfo=dt.timezone.utc),
    dt.datetime(2024, 2, 29, 12), dt.datetime(1900, 1, 1, 0, 0, 0, 1),
    dt.date(2024, 2, 29), dt.date(1970, 1, 1), dt.date(1, 1, 1),
    dt.time(0, 0), dt.time(12, 34, 56, 789), dt.time(23, 59, 59, 999999),
    dt.timedelta(0), dt.timedelta(days=-1, microseconds=5), dt.timedelta(hours=36, seconds=7),
    (dt.date(2024, 1, 2), dt.time(3, 4), Decimal("0.5")),
)
#: Published values (spark_impl/keys.py's docstring, docs/spark.md): key -> stable_hash(key).
VECTORS: tuple[tuple[Any, int], ...] = (
    (None, 0x690EC8BC5F8488F5), ("a", 0x7C8222243EEAA144), ((1, "a"), 0x638A5B6ACF2DE736), (2.5, 0x4ECC609465433A11),
    (Decimal("0.10"), 0x62F3AF6E79A181CF), (dt.date(2024, 2, 29), 0x16B16148A38CD6AF),
    (dt.datetime(2024, 2, 29, 12, tzinfo=dt.timezone.utc), 0x28169A6D9988A848),
)
#: Worker counts the routing is checked at (1, small primes, powers of two, a large count).
COUNTS = (1, 2, 3, 4, 7, 8, 64, 1000)
#: Keys of unsupported types: refused with TypeError.
UNSUPPORTED: tuple[Any, ...] = (object(), 1j, {1: 2}, {3}, frozenset(), (1, [2, object()]),
                                dt.time(1, 2, tzinfo=dt.timezone.utc), Decimal("NaN"), (1, Decimal("sNaN")))
_MICRO = dt.timedelta(microseconds=1)


def documented_encoding(key: Any) -> bytes:
    """The canonical encoding as the documentation states it (not the module's code)."""
    if key is None:
        return b"N"
    if isinstance(key, float) and math.isfinite(key) and key == math.floor(key):
        key = int(key)  # an integral finite float is encoded as the integer it equals
    if isinstance(key, int):  # a bool is the integer it equals
        return ("i" + str(int(key)) + ";").encode("ascii")
    if isinstance(key, float):
        return ("f" + repr(key) + ";").encode("ascii")
    if isinstance(key, str):
        data = key.encode("utf-8")
        return ("s" + str(len(data)) + ":").encode("ascii") + data
    if isinstance(key, (bytes, bytearray)):
        return ("b" + str(len(key)) + ":").encode("ascii") + bytes(key)
    if isinstance(key, (tuple, list)):
        return ("t" + str(len(key)) + ":").encode("ascii") + b"".join(documented_encoding(item) for item in key)
    if isinstance(key, Decimal):
        return _documented_decimal(key)
    if isinstance(key, dt.datetime):
        if key.tzinfo is None or key.utcoffset() is None:
            return ("W" + str((key - dt.datetime(1970, 1, 1)) // _MICRO) + ";").encode("ascii")
        return ("Z" + str((key - dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)) // _MICRO) + ";").encode("ascii")
    if isinstance(key, dt.date):
        return ("D" + str((key - dt.date(1970, 1, 1)).days) + ";").encode("ascii")
    if isinstance(key, dt.time) and key.tzinfo is None:
        since_midnight = dt.datetime.combine(dt.date(2000, 1, 1), key) - dt.datetime(2000, 1, 1)
        return ("H" + str(since_midnight // _MICRO) + ";").encode("ascii")
    if isinstance(key, dt.timedelta):
        return ("I" + str(key // _MICRO) + ";").encode("ascii")
    raise TypeError(type(key).__name__)


def _documented_decimal(key: Decimal) -> bytes:
    """A Decimal equal to an int or a float encodes as that number; any other finite one as
    ``d`` + sign + significant digits without trailing zeros + ``e`` + exponent + ``;``."""
    if key.is_nan():
        raise TypeError("Decimal NaN")
    if key.is_infinite():
        return documented_encoding(math.inf if key > 0 else -math.inf)
    if key == key.to_integral_value():
        return documented_encoding(int(key))
    if key == float(key):
        return documented_encoding(float(key))
    sign, digits, exponent = key.as_tuple()
    text = "".join(map(str, digits))
    assert isinstance(exponent, int)
    while text.endswith("0") and len(text) > 1:
        text, exponent = text[:-1], exponent + 1
    return ("d" + ("-" if sign else "") + text + "e" + str(exponent) + ";").encode("ascii")


def documented_hash(key: Any) -> int:
    """The top 63 bits of the 8-byte BLAKE2b digest of :func:`documented_encoding`, big endian."""
    digest = hashlib.blake2b(documented_encoding(key), digest_size=8).digest()
    return int.from_bytes(digest, "big") // 2


def _integral(key: Any) -> bool:
    if isinstance(key, Decimal):
        return key.is_finite() and key == key.to_integral_value()
    return isinstance(key, int) or isinstance(key, float) and math.isfinite(key) and key == math.floor(key)


def hash_problem(stable_hash: Callable[[Any], int] | None = None,
                 route: Callable[[Any, int], int] | None = None) -> str | None:
    """The first way ``stable_hash`` and ``route`` (default: :mod:`spark_impl.keys`' own, looked
    up when called) depart from the documented definition, or None."""
    stable_hash = stable_hash or keys.stable_hash
    route = route or keys.route

    for key, value in VECTORS:
        if documented_hash(key) != value or stable_hash(key) != value:
            return (f"the published test vector stable_hash({key!r}) = {value:#x} does not hold: the documented "
                    f"definition gives {documented_hash(key):#x}, the module {stable_hash(key):#x}")
    for key in TABLE:
        want = documented_hash(key)
        try:
            got = stable_hash(key)
            routed = [route(key, n) for n in COUNTS]
        except Exception as error:  # noqa: BLE001 - a supported key refused or crashing is a finding
            return f"the supported key {key!r} raised {type(error).__name__}: {error}"
        if got != want:
            return (f"stable_hash({key!r}) = {got:#x}, but the documented definition (BLAKE2b-64 of "
                    f"{documented_encoding(key)!r}, top 63 bits) is {want:#x}: keys would move between workers "
                    "across versions and a resumed checkpoint would be routed wrong")
        for n, at in zip(COUNTS, routed):
            expected = int(key) % n if _integral(key) else want % n
            if at != expected:
                return (f"route({key!r}, {n}) = {at}, expected {expected} "
                        f"({'key mod n' if _integral(key) else 'stable_hash(key) mod n'})")
    for bad in UNSUPPORTED:
        for name in ("stable_hash", "route"):
            try:
                stable_hash(bad) if name == "stable_hash" else route(bad, 3)
            except TypeError:
                continue
            return f"{name}({bad!r}) of an unsupported type was not refused with TypeError"
    return None


def run_hash_check(result: SuiteResult) -> bool:
    """Run :func:`hash_problem` in a time limit (a hang is a finding) and append the check to
    ``result`` (its cases: the keys of :data:`TABLE` and the published vectors); True on a
    failure, an ``engine`` failure naming the broken promise."""
    check = CheckResult(CHECK)
    result.checks.append(check)
    start = time.monotonic()
    try:
        found = bounded(hash_problem, "the stable hash oracle")
    except Exception as error:  # noqa: BLE001 - a crash (or a hang) of the executor's code is a finding
        found = f"raised {type(error).__name__}: {error}"
    check.cases = len(TABLE) + len(VECTORS)
    check.elapsed_s = time.monotonic() - start
    if found is None:
        return False
    check.failed = 1
    check.oracle_failures["engine"] += 1
    result.failures.append(FailureReport(CHECK, 0, ("engine",), f"[engine] {found}", 1, 1, 0, {"problems": [found]}))
    return True
