"""Jobs, inputs and expected results of the live real-types tests
(tests/spark_impl/test_spark_live_real_types.py), and a driver process for their SIGKILL tests (not a
test module):

    python tests/support/live_real_types_jobs.py fries|oplus|dgs ROOT FILES

runs the front end's query on the Parquet files of ``ROOT/in`` (checkpoint ``ROOT/ckpt``)
until FILES files are committed, prints one JSON line per progress step and, for Fries, the
results in the persisted encoding of spark_impl.values; exits 0.

The user functions are built inside functions so cloudpickle ships them by value (this file is
not importable on Spark's Python workers). Every function checks the types it receives
against docs/production/types.md and raises on a mismatch (the query then fails).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.reconfig import UserOperator, user_job, collect_results
from spark_impl.reconfig.model import ListSource
from spark_impl.reconfig.sinks import ParquetSink
from spark_impl.reconfig.streaming import start_query
from spark_impl.session import get_or_create_session
from spark_impl.values import value_order, to_json
from spec.dgs.loader import load_program
from spec.fries.dataflow import dataflow

UTC = dt.timezone.utc
DAY0 = dt.date(2024, 2, 29)
T0 = dt.datetime(2024, 3, 31, 0, 30, tzinfo=UTC)

FRIES_SCHEMA = ("key struct<region:string,shop:struct<id:bigint,tags:array<string>>>, "
                "value struct<amount:decimal(10,2),at:timestamp,day:date,blob:binary,attrs:map<string,bigint>,"
                "note:string>")
OPLUS_SCHEMA = ("ts bigint, key struct<region:string,attrs:map<string,bigint>,day:date,at:timestamp>, value bigint, "
                "end boolean")
DGS_SCHEMA = ("item struct<stream:string,ts:bigint,heartbeat:boolean,"
              "event:struct<kind:string,key:struct<region:string,id:bigint>,amount:decimal(10,2),at:timestamp>>")
REGIONS = ("eu", "us", "ap")
PER_FILE = 6
"""Fries tuples per input file (file ``f`` holds tuples ``f * PER_FILE ..``)."""


# --- Fries: a nested-struct key (some null), a struct value of every type -------------------

def fries_tuple(i: int) -> tuple[Any, Any]:
    """Tuple ``i`` in its documented form (what the user's functions must receive)."""
    key = None if i % 7 == 0 else (REGIONS[i % 3], (i % 4, tuple(f"t{j}" for j in range(i % 3))))
    attrs = tuple(sorted({"b": -i, "a": i, **({"c": i * i} if i % 2 else {})}.items()))
    value = (Decimal(f"{i}.{i % 100:02d}"), T0 + dt.timedelta(minutes=i, microseconds=i), DAY0 + dt.timedelta(days=i),
             bytes([i % 256, 0, 255]), attrs, None if i % 3 == 0 else f"n{i % 4}")
    return key, value


def fries_row(i: int) -> dict[str, Any]:
    """Tuple ``i`` as a row for pyarrow (structs as dicts, a map as pairs)."""
    key, (amount, at, day, blob, attrs, note) = fries_tuple(i)
    return {"key": None if key is None else {"region": key[0], "shop": {"id": key[1][0], "tags": list(key[1][1])}},
            "value": {"amount": amount, "at": at, "day": day, "blob": blob, "attrs": list(attrs), "note": note}}


def fries_functions() -> tuple[Any, Any]:
    """M (keyed by the struct key; a null key is ``None``) and T (keyed by the note, or by the
    map when there is none: keys of mixed types ``str`` and tuples of pairs), both keeping
    the values they saw in a set (so every value must be hashable)."""

    def check(value: Any, kinds: tuple[Any, ...]) -> None:
        if len(value) != len(kinds) or not all(k is None and v is None or k is not None and isinstance(v, k)
                                               for v, k in zip(value, kinds)):
            raise TypeError(f"not the documented form: {value!r} (types {[type(v).__name__ for v in value]})")

    def m(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        if key is not None:
            check(key, (str, tuple))
            check(key[1], (int, tuple))
        amount, at, day, blob, attrs, note = value
        check(value, (Decimal, dt.datetime, dt.date, bytes, tuple, str if note is not None else None))
        if at.utcoffset() != dt.timedelta(0) or not all(isinstance(p, tuple) and len(p) == 2 for p in attrs):
            raise TypeError(f"timestamp not in UTC or map not pairs: {value!r}")
        count, total = state or (0, Decimal(0))
        return (count + 1, total + amount), [(note if note is not None else attrs, (key, amount, at, day, blob))]

    def t(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
        seen = set(state or ()) | {value}  # every value must be hashable
        return tuple(sorted(seen, key=value_order)), [(key, value[1])]

    return m, t


def fries_job() -> Any:
    """The Fries job S -> M -> T (M on 3 workers, T on 2)."""
    flow = dataflow([("S", "source"), ("M", "one-to-one"), ("T", "one-to-one")], [("S", "M"), ("M", "T")])
    m, t = fries_functions()
    return user_job(flow, {"M": UserOperator(flow.kind("M"), m), "T": UserOperator(flow.kind("T"), t)},
                    ListSource(()), parallelism={"M": 3, "T": 2})


def fries_expected(n: int) -> dict[tuple[str, Any], Any]:
    """The final states of M and T after tuples ``0..n-1`` (each exactly once)."""
    m, t = fries_functions()
    states: dict[tuple[str, Any], Any] = {}
    for i in range(n):
        key, value = fries_tuple(i)
        states[("M", key)], outs = m(states.get(("M", key)), key, value)
        for k, v in outs:
            states[("T", k)], _ = t(states.get(("T", k)), k, v)
    return states


# --- O+: sliding-sum keyed by a struct holding a map, a date and a timestamp ----------------

def oplus_key(i: int) -> tuple[Any, ...]:
    """The documented form of item ``i``'s key."""
    return (REGIONS[i % 3], tuple(sorted({"w": i % 2, "v": 1}.items())), DAY0 + dt.timedelta(days=i % 2),
            T0 + dt.timedelta(hours=i % 2))


def oplus_items(n: int) -> list[dict[str, Any]]:
    """Items in their documented form, event times rising."""
    return [{"ts": i // 2, "key": oplus_key(i), "value": i % 5 - 1} for i in range(n)]


def oplus_row(item: dict[str, Any]) -> dict[str, Any]:
    """An item as a row for pyarrow."""
    region, attrs, day, at = item["key"]
    return {"ts": item["ts"], "key": {"region": region, "attrs": list(attrs), "day": day, "at": at},
            "value": item["value"], "end": None}


OPLUS_END = {"ts": None, "key": None, "value": None, "end": True}
"""The row that ends the O+ stream (every remaining window is emitted)."""


# --- DGS: events are structs (a nested key, a decimal, a timestamp) -------------------------

def dgs_items(n: int) -> list[dict[str, Any]]:
    """Two streams' items in timestamp order (an event or a heartbeat each), documented form."""
    items: list[dict[str, Any]] = []
    for ts in range(1, n + 1):
        key = (REGIONS[ts % 2], ts % 3)
        kind = "r" if ts % 5 == 0 else "i"
        items.append({"stream": f"s{ts % 2}", "ts": ts,
                      "event": (kind, key, (Decimal(ts) / 4).quantize(Decimal("0.01")),
                                T0 + dt.timedelta(seconds=ts))})
    items += [{"stream": s, "ts": n + 1, "heartbeat": True} for s in ("s0", "s1")]
    return items


def dgs_row(item: dict[str, Any]) -> dict[str, Any]:
    """An item as a row for pyarrow."""
    event = item.get("event")
    row: dict[str, Any] = {"stream": item["stream"], "ts": item["ts"], "heartbeat": item.get("heartbeat"),
                           "event": None}
    if event is not None:
        kind, (region, ident), amount, at = event
        row["event"] = {"kind": kind, "key": {"region": region, "id": ident}, "amount": amount, "at": at}
    return {"item": row}


def land(directory: str, number: int, rows: list[dict[str, Any]], schema: str) -> None:
    """File ``number`` of a stream: a Parquet file written aside and renamed in, modification
    time ``number`` seconds after a fixed start (the file source takes files oldest first)."""
    table = pa.Table.from_pylist(rows, schema=arrow_schema(schema))
    tmp = os.path.join(os.path.dirname(directory), f".land-{number:04d}.parquet")
    pq.write_table(table, tmp)
    os.utime(tmp, (1_700_000_000 + number, 1_700_000_000 + number))
    os.replace(tmp, os.path.join(directory, f"part-{number:04d}.parquet"))


def arrow_schema(ddl: str) -> Any:
    """The pyarrow schema of one of this file's Spark schemas."""
    ts = pa.timestamp("us", tz="UTC")
    key_f = pa.struct([("region", pa.string()), ("shop", pa.struct([("id", pa.int64()), ("tags", pa.list_(pa.string()))]))])
    value_f = pa.struct([("amount", pa.decimal128(10, 2)), ("at", ts), ("day", pa.date32()), ("blob", pa.binary()),
                         ("attrs", pa.map_(pa.string(), pa.int64())), ("note", pa.string())])
    schemas = {
        FRIES_SCHEMA: pa.schema([("key", key_f), ("value", value_f)]),
        OPLUS_SCHEMA: pa.schema([("ts", pa.int64()), ("key", pa.struct([
            ("region", pa.string()), ("attrs", pa.map_(pa.string(), pa.int64())), ("day", pa.date32()), ("at", ts)])),
            ("value", pa.int64()), ("end", pa.bool_())]),
        DGS_SCHEMA: pa.schema([("item", pa.struct([
            ("stream", pa.string()), ("ts", pa.int64()), ("heartbeat", pa.bool_()),
            ("event", pa.struct([("kind", pa.string()), ("key", pa.struct([("region", pa.string()), ("id", pa.int64())])),
                                 ("amount", pa.decimal128(10, 2)), ("at", ts)]))]))]),
    }
    return schemas[ddl]


# --- the driver process of the SIGKILL tests ---------------------------------------------------

def _say(**fields: Any) -> None:
    print(json.dumps(fields), flush=True)


def main(mode: str, root: str, files: int) -> int:
    spark = get_or_create_session(app_name=f"real-types-{mode}", master="local[2]")
    source, ckpt = os.path.join(root, "in"), os.path.join(root, "ckpt")
    schema = {"fries": FRIES_SCHEMA, "oplus": OPLUS_SCHEMA, "dgs": DGS_SCHEMA}[mode]
    stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(source)
    trigger = {"processingTime": "200 milliseconds"}
    if mode == "fries":
        run = start_query(spark, fries_job(), stream, scheduler="fries", checkpoint_dir=ckpt, trigger=trigger)
        while run.executor.state[0].committed.offset < files * PER_FILE:
            _say(committed=run.executor.state[0].committed.offset)
            if not run.query.isActive:
                run.query.awaitTermination()  # raises the query's error
            time.sleep(0.2)
        run.query.processAllAvailable()
        run.stop()
        (result,) = collect_results(run.executor)
        _say(outputs=to_json(tuple((txn, key, value) for _, txn, key, value in result.outputs)),
             states=to_json(tuple((op, key, state) for (op, key), state in result.states.items())))
    elif mode == "oplus":
        oplus = start_oplus_query(spark, stream, [oplus_job("sliding-sum", 2, 4, parallelism=2)], checkpoint_dir=ckpt,
                                sink=ParquetSink(os.path.join(root, "out"), value_type="long"), trigger=trigger)
        while oplus.log.delivered() < files - 1:
            _say(committed=oplus.log.committed()[-1:])
            if not oplus.query.isActive:
                oplus.query.awaitTermination()
            time.sleep(0.2)
        oplus.stop()
    else:
        target = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dgs_typed_program.py:TypedCounter")
        plan = keyed_plan(load_program(target), ["s0", "s1"], 2)
        dgs = start_dgs_query(spark, [LiveJob(target, plan)], stream, checkpoint_dir=ckpt, column="item",
                              sink=ParquetSink(os.path.join(root, "out")), trigger=trigger)
        while dgs.committed().delivered < files - 1:
            _say(committed=dgs.committed().batch)
            if not dgs.query.isActive:
                dgs.process_all()
            time.sleep(0.2)
        dgs.stop()
    _say(done=True)
    spark.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
