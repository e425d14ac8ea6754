"""The live O+ sliding-sum stream of the live-query tests (the recipe of docs/spark.md, "O+ on
a live stream"): per (job, source) items with rising event times and string keys, the JSON
files landed whole into the source directory, the reference's expected rows, and the recipe's
two jobs started on a file source into Parquet."""

from __future__ import annotations

import json
import os
import random
from collections import Counter
from typing import Any, Callable

from conformance.oplus.engines.reference import reference_rows
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.oplus.streaming_jobs import oplus_job
from spark_impl.reconfig.sinks import ParquetSink

WA, WS = 5, 10
SCHEMA = "job int, source int, ts long, watermark long, end boolean, user string, amount long"


def stream_data(seed: int = 7, files: int = 6) -> dict[tuple[int, int], list[list[dict[str, Any]]]]:
    """Per (job, source): the items of each file, event times rising, string keys."""
    rng = random.Random(seed)
    out: dict[tuple[int, int], list[list[dict[str, Any]]]] = {}
    for at in ((0, 0), (0, 1), (1, 0)):
        ts, chunks = 0, []
        for _ in range(files):
            chunk = []
            for _ in range(rng.randint(2, 5)):
                ts += rng.randint(0, 4)
                chunk.append({"ts": ts, "user": rng.choice(["ann", "bob", "cy", "dé", "e f"]),
                              "amount": rng.randint(-3, 9)})
            chunks.append(chunk)
        out[at] = chunks
    return out


def land_file(directory: str, index: int, rows: list[dict[str, Any]]) -> None:
    tmp = os.path.join(os.path.dirname(directory), f".land-{index}")
    with open(tmp, "w", encoding="utf-8") as handle:
        handle.writelines(json.dumps(r) + "\n" for r in rows)
    os.replace(tmp, os.path.join(directory, f"part-{index:03d}.json"))


def file_rows(data: dict[tuple[int, int], list[list[dict[str, Any]]]], f: int, last: bool) -> list[dict[str, Any]]:
    rows = [{"job": j, "source": s, **item} for (j, s), chunks in data.items() for item in chunks[f]]
    if last:
        rows += [{"job": j, "source": s, "end": True} for (j, s) in data]
    return rows


def expected_rows(data: dict[tuple[int, int], list[list[dict[str, Any]]]], job: int, wt: str,
              late: set[tuple[int, int, int]]) -> Counter[tuple[int, str, str]]:
    sources = sorted(s for j, s in data if j == job)
    inputs = [[{"ts": i["ts"], "key": i["user"], "value": i["amount"]} for c in data[(job, s)] for i in c
               if (job, s, i["ts"]) not in late] for s in sources]
    case = {"operator": "sliding-sum", "WA": WA, "WS": WS, "WT": wt, "parallelism": 1, "inputs": inputs}
    return Counter(reference_rows(case, "sequential"))


def recipe_query(spark: Any, tmp_path: Any) -> tuple[str, str, str, Callable[[], Any]]:
    """The recipe's two sliding-sum jobs (WT multi over 2 sources, WT single) on a JSON file
    source with string keys into Parquet: ``(source_dir, checkpoint, table, start)``, where
    ``start()`` starts (or restarts) the query on the same checkpoint."""
    source_dir, checkpoint, table = (str(tmp_path / n) for n in ("in", "ckpt", "results"))
    os.makedirs(source_dir)
    jobs = [oplus_job("sliding-sum", WA, WS, WT="multi", parallelism=2, sources=2),
            oplus_job("sliding-sum", WA, WS, WT="single", parallelism=3)]

    def start() -> Any:
        stream = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(source_dir)
                  .withColumnRenamed("user", "key").withColumnRenamed("amount", "value"))
        return start_oplus_query(spark, stream, jobs, checkpoint_dir=checkpoint,
                                 sink=ParquetSink(table, key_type="string", value_type="long"),
                                 late_policy="drop")  # a test's late tuple is dropped and counted

    return source_dir, checkpoint, table, start
