"""Cost of the documented value encoding (spark_impl/values.py) on the Fries input log's write
and read paths, per row, without Spark: the first log format (``json.dumps(row,
default=str)`` / ``json.loads`` + lists as tuples) against the current one (decode by the Spark
type, ``to_json``, ``json.dumps`` / ``json.loads`` + ``from_json``).

    python benchmarks/values_codec.py            # 20,000 rows per shape
    python benchmarks/values_codec.py --rows 2000

Shapes: ``flat`` (long key, long value: the common case), ``nested`` (a struct key with an
array, a struct value with a decimal, a timestamp, a date, binary, a map and a string).
Prints microseconds per row (best of 3) and the current/first ratio.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import time
from decimal import Decimal
from typing import Any, Callable

from pyspark.sql import Row
from pyspark.sql.types import (ArrayType, BinaryType, DateType, DecimalType, LongType, MapType, StringType,
                               StructField, StructType, TimestampType)

from spark_impl.values import decoder, from_json, normalize, to_json

KEY = StructType([StructField("region", StringType()), StructField("tags", ArrayType(StringType()))])
VALUE = StructType([StructField("amount", DecimalType(10, 2)), StructField("at", TimestampType()),
                    StructField("day", DateType()), StructField("blob", BinaryType()),
                    StructField("attrs", MapType(StringType(), LongType())), StructField("note", StringType())])


def _rows(shape: str, n: int) -> tuple[list[tuple[Any, Any]], Any, Any]:
    if shape == "flat":
        return [(i % 97, i) for i in range(n)], LongType(), LongType()
    rows = [(Row(region="eu", tags=["a", str(i % 5)]),
             Row(amount=Decimal(f"{i}.25"), at=dt.datetime(2024, 3, 1, 12) + dt.timedelta(seconds=i),
                 day=dt.date(2024, 3, 1), blob=bytearray(b"\x00\x01"), attrs={"b": i, "a": -i}, note=f"n{i % 3}"))
            for i in range(n)]
    return rows, KEY, VALUE


def _best(run: Callable[[], Any], rows: int) -> float:
    times = []
    for _ in range(3):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times) / rows * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=20_000)
    args = parser.parse_args()
    print(f"{'shape':8} {'path':6} {'first us/row':>13} {'current us/row':>15} {'ratio':>6}")
    for shape in ("flat", "nested"):
        for path, old, new in _measure(*_rows(shape, args.rows)):
            print(f"{shape:8} {path:6} {old:13.2f} {new:15.2f} {new / old:6.2f}")


def _measure(rows: list[tuple[Any, Any]], key_type: Any, value_type: Any) -> list[tuple[str, float, float]]:
    """(path, first format us/row, current us/row) for the write and the read path."""
    key_of, value_of = decoder(key_type), decoder(value_type)

    def write_old() -> list[str]:
        return [json.dumps([k, v], default=str) for k, v in rows]

    def write_new() -> list[str]:
        return [json.dumps([to_json(key_of(k)), to_json(value_of(v))], allow_nan=False, separators=(",", ":"))
                for k, v in rows]

    old_lines, new_lines = write_old(), write_new()
    read_old = _best(lambda: [tuple(normalize(x) for x in json.loads(line)) for line in old_lines], len(rows))
    read_new = _best(lambda: [tuple(from_json(x) for x in json.loads(line)) for line in new_lines], len(rows))
    return [("write", _best(write_old, len(rows)), _best(write_new, len(rows))), ("read", read_old, read_new)]

if __name__ == "__main__":
    main()
