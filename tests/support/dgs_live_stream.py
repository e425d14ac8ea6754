"""The live DGS word-counter stream of the live-query tests (the recipe of docs/spark.md, "DGS
on a live stream"): two streams of counter events, their JSON rows, files landed into the
source directory whole, and the query started on a file source into Parquet."""

from __future__ import annotations

import json
import os
import random
from typing import Any

from spec.dgs.streams import Heartbeat, StreamEvent, value_to_json
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.reconfig.sinks import ParquetSink

COUNTER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dgs_live_programs.py:WordCounter")
"""The word counter, as a user's target ``file.py:Class``."""

STREAMS = ("s0", "s1")


def counter_streams(seed: int, n: int) -> dict[str, list[Any]]:
    """Two streams of counter events with strictly increasing timestamps, each ended by a
    heartbeat after every event (a valid input instance, Def. 3.3)."""
    rng = random.Random(seed)
    keys = ("alice", "bob", "carol", "dave")
    streams: dict[str, list[Any]] = {s: [] for s in STREAMS}
    for ts in range(1, n + 1):
        stream = STREAMS[ts % 2]
        streams[stream].append(StreamEvent(ts, (rng.choice("iir"), rng.choice(keys))))
    for stream in STREAMS:
        streams[stream].append(Heartbeat(n + 1))
    return streams


def json_rows(streams: dict[str, list[Any]]) -> list[str]:
    """The items as JSON rows, in timestamp order."""
    items = sorted(((item.ts, s, item) for s, items in streams.items() for item in items), key=lambda x: x[:2])
    return [json.dumps({"stream": s, "ts": ts, **({"event": value_to_json(item.payload)}
                                                   if isinstance(item, StreamEvent) else {"heartbeat": True})})
            for ts, s, item in items]


def land_file(directory: str, number: int, rows: list[str]) -> None:
    """File ``number`` of the live stream: written aside, renamed in (the source never sees
    half a file), modification time ``number`` seconds after a fixed start (Spark's file
    source takes files oldest first; equal times have no order)."""
    path = os.path.join(directory, f"f{number:04d}.json")
    with open(os.path.join(directory, f".f{number:04d}.tmp"), "w", encoding="utf-8") as handle:
        handle.write("".join(r + "\n" for r in rows))
    os.utime(handle.name, (1_700_000_000 + number, 1_700_000_000 + number))
    os.replace(handle.name, path)


def start_query(spark: Any, root: str, target: str, plan: Any, **options: Any) -> Any:
    stream = spark.readStream.option("maxFilesPerTrigger", 1).text(os.path.join(root, "in"))
    return start_dgs_query(spark, [LiveJob(target, plan)], stream, checkpoint_dir=os.path.join(root, "ckpt"),
                           sink=ParquetSink(os.path.join(root, "out")), **options)
