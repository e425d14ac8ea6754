"""The one encoding of user values (spark_impl/values.py, docs/production/types.md) and the
stable hash over every documented form (spark_impl/keys.py, "the stable hash is a durable
format"). No Spark session: the Spark types are pyspark's type objects, the row values what
PySpark's ``fromInternal`` makes of them."""

from __future__ import annotations

import datetime as dt
import json
import math
import random
import re
from decimal import Decimal
from typing import Any

from hypothesis import given, strategies as st
from pyspark.sql import Row
from pyspark.sql.types import (ArrayType, BinaryType, DateType, DecimalType, DoubleType, LongType, MapType,
                               StringType, StructField, StructType, TimestampNTZType, TimestampType)

from spark_impl.keys import key_order, route, stable_hash
from spark_impl.values import as_received, decode, from_json, normalize, to_json, value_order
from support.values import UTC, documented, same
from support.paths import ROOT


@given(documented)
def test_persisted_values_round_trip_exactly(value: Any) -> None:
    """values.to_json: ``from_json(to_json(x)) == x``, types included, through strict JSON."""
    text = json.dumps(to_json(value), allow_nan=False)
    assert same(from_json(json.loads(text)), value)
    assert same(as_received(value), normalize(value))


@given(documented)
def test_every_documented_form_is_a_key_with_a_stable_hash(value: Any) -> None:
    """keys.py: every documented form of values.py is routed stably; the persisted value
    routes where the original did."""
    hash(value)
    back = from_json(to_json(value))
    assert stable_hash(back) == stable_hash(value)
    assert route(back, 7) == route(value, 7)


@given(st.lists(documented, max_size=8), st.randoms())
def test_value_order_and_key_order_are_total_on_mixed_values(values: list[Any], rng: random.Random) -> None:
    """values.value_order (natural within a type) and keys.key_order sort mixed types
    deterministically: None beside tuples beside str beside Decimal and datetimes."""
    shuffled = list(values)
    rng.shuffle(shuffled)
    for order in (value_order, key_order):
        a, b = sorted(values, key=order), sorted(shuffled, key=order)
        # equal positions hold values equal in the order (1, 1.0 and Decimal(1) may swap)
        assert [order(x) for x in a] == [order(x) for x in b]
        assert all(order(x) <= order(y) for x, y in zip(a, a[1:]))


@given(documented, documented)
def test_equal_maps_are_one_key_whatever_the_entry_order(key: Any, value: Any) -> None:
    """values: a map is a tuple of (key, value) pairs sorted by key."""
    entries = {"b": value, "a": key, "c": None}
    reverse = dict(reversed(list(entries.items())))
    assert normalize(entries) == normalize(reverse) == (("a", key), ("b", value), ("c", None))


def test_equal_numbers_and_instants_route_alike() -> None:
    """keys.py: keys equal in Python route alike (a dict of states merges them)."""
    pairs = [(Decimal("3.00"), 3), (Decimal("2.50"), 2.5), (Decimal("-0.0"), 0), (Decimal("Infinity"), math.inf),
             (dt.datetime(2024, 1, 1, 13, tzinfo=dt.timezone(dt.timedelta(hours=1))),
              dt.datetime(2024, 1, 1, 12, tzinfo=UTC)), (Decimal("0.10"), Decimal("0.1000"))]
    for a, b in pairs:
        assert a == b and stable_hash(a) == stable_hash(b)
        assert all(route(a, n) == route(b, n) for n in (1, 2, 3, 7, 64))
    assert route(Decimal(10), 4) == 2 and sorted([Decimal("2.5"), 1, None, "x", 3.0], key=key_order)[:3] == [1, Decimal("2.5"), 3.0]


@given(st.decimals(allow_nan=False), st.datetimes(timezones=st.timezones()), st.floats(allow_nan=False))
def test_keys_equal_in_python_route_alike_for_decimals_and_instants(d: Decimal, when: dt.datetime, f: float) -> None:
    """keys.py: a Decimal equal to an int or a float routes like it; an aware datetime routes
    like the same instant in UTC; a float routes like the Decimal it equals exactly."""
    for same_number in ([int(d)] if d.is_finite() and d == int(d) else []) + ([float(d)] if Decimal(float(d)) == d else []):
        assert d == same_number and stable_hash(d) == stable_hash(same_number)
        assert route(d, 5) == route(same_number, 5)
    assert stable_hash(when) == stable_hash(when.astimezone(UTC))
    if math.isfinite(f):
        assert stable_hash(Decimal(f)) == stable_hash(f) and route(Decimal(f), 6) == route(f, 6)


def test_the_stable_hash_is_a_durable_format_old_and_new_vectors() -> None:
    """keys.py's published vectors: the old ones are unchanged by the new types; the new ones
    are pinned (``b2sum -l 64`` of the documented encoding, shifted right by one bit)."""
    assert stable_hash(None) == 0x690EC8BC5F8488F5
    assert stable_hash("a") == 0x7C8222243EEAA144
    assert stable_hash((1, "a")) == 0x638A5B6ACF2DE736
    assert stable_hash(2.5) == 0x4ECC609465433A11
    assert stable_hash(Decimal("0.10")) == 0x62F3AF6E79A181CF
    assert stable_hash(dt.date(2024, 2, 29)) == 0x16B16148A38CD6AF
    assert stable_hash(dt.datetime(2024, 2, 29, 12, tzinfo=UTC)) == 0x28169A6D9988A848


def test_a_decimal_nan_is_refused_as_a_key() -> None:
    """keys.py: a Decimal NaN equals nothing, so it is refused with TypeError."""
    for bad in (Decimal("NaN"), (1, Decimal("NaN"))):
        try:
            stable_hash(bad)
        except TypeError as error:
            assert "NaN" in str(error)
        else:
            raise AssertionError(f"{bad!r} was routed")


ROW_TYPE = StructType([
    StructField("user", StructType([StructField("id", LongType()), StructField("region", StringType()),
                                    StructField("tags", ArrayType(StringType()))])),
    StructField("price", DecimalType(10, 2)), StructField("day", DateType()), StructField("at", TimestampType()),
    StructField("wall", TimestampNTZType()), StructField("blob", BinaryType()),
    StructField("attrs", MapType(StringType(), DoubleType())), StructField("none", StringType()),
])


def test_spark_row_values_reach_functions_in_the_documented_form() -> None:
    """values.decode / docs/production/types.md's table: struct and array -> tuple, map ->
    sorted pairs, decimal -> Decimal, date -> date, timestamp -> UTC-aware datetime (PySpark
    gives a naive local one), timestamp_ntz -> naive datetime, binary -> bytes, null -> None."""
    instant = dt.datetime(2024, 3, 31, 1, 30, 5, 7, tzinfo=UTC)
    local_naive = dt.datetime.fromtimestamp(instant.timestamp())  # what TimestampType.fromInternal gives
    row = Row(user=Row(id=7, region="eu", tags=["a", "b"]), price=Decimal("9.50"), day=dt.date(2024, 2, 29),
              at=local_naive, wall=dt.datetime(2024, 1, 1, 9), blob=bytearray(b"\x00\x01"),
              attrs={"z": 1.0, "a": 2.0}, none=None)
    got = decode(row, ROW_TYPE)
    assert same(got, ((7, "eu", ("a", "b")), Decimal("9.50"), dt.date(2024, 2, 29), instant,
                      dt.datetime(2024, 1, 1, 9), b"\x00\x01", (("a", 2.0), ("z", 1.0)), None))
    hash(got)
    assert same(as_received(row, ROW_TYPE), got)
    assert decode(None, ROW_TYPE) is None and decode(None, MapType(StringType(), LongType())) is None


def test_values_without_a_documented_form_are_refused_by_the_persisted_encoding() -> None:
    """values.to_json: TypeError for a list, a dict or an object (normalize first)."""
    for bad in ([1], {"a": 1}, object(), dt.time(1, tzinfo=UTC)):
        try:
            to_json(bad)
        except TypeError:
            continue
        raise AssertionError(f"{bad!r} was encoded")
    for bad in ({"a": 1, "b": 2}, {"?": 1}):
        try:
            from_json(bad)
        except ValueError:
            continue
        raise AssertionError(f"{bad!r} was decoded")


def test_the_types_page_example_runs() -> None:
    """docs/production/types.md, "Testing a job in memory with the same values": its example
    runs as written (its asserts hold)."""
    page = ROOT / "docs" / "production" / "types.md"
    section = page.read_text(encoding="utf-8").split("## Testing a job in memory with the same values")[1]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    exec(compile(code, str(page), "exec"), {})
