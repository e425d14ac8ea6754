"""The backlog workload on Spark's own stateful streaming API: the baseline a user would pick
instead of spark_impl.

The same operators as :mod:`spark_impl.workloads.backlog` - ``events -> Expensive -> Tally``,
``Expensive`` spinning ``cost_ms`` of CPU per event and counting events per key, ``Tally``
keeping a running sum per key and emitting it - as one Structured Streaming query:

* source: the events of :func:`~spark_impl.workloads.backlog.event` written as JSON-lines
  files of ``batch_size`` events, read by Spark's file source with ``maxFilesPerTrigger=1``
  (one file per micro-batch: the same micro-batches as the executor's) and the
  ``availableNow`` trigger, so the query stops after the last event. (A Python streaming
  data source generating the events in tasks, like the executor's ``GeneratedSource``, was
  tried first: on this loaded machine its driver-side Python process timed out connecting
  back to the JVM.)
* operators: two chained ``transformWithStateInPandas`` stateful processors with their state
  in ``ValueState`` (RocksDB state store provider, as the session configures);
* sink: a Parquet file sink with a checkpoint (durable, exactly-once), as the executor
  commits its outputs to files.
"""

from __future__ import annotations

import json
import os
import time
from typing import Any, Callable, Iterator

import pandas as pd

from spark_impl.workloads.backlog import event

SCHEMA = "key int, value long"


def write_events(directory: str, n: int, batch_size: int) -> str:
    """Write the ``n`` events as JSON-lines files of ``batch_size`` events each (one
    micro-batch per file); returns the folder."""
    folder = os.path.join(directory, "events")
    os.makedirs(folder, exist_ok=True)
    for number, lo in enumerate(range(0, n, batch_size)):
        lines = (json.dumps({"key": k, "value": v}) for k, v in map(event, range(lo, min(n, lo + batch_size))))
        with open(os.path.join(folder, f"{number:09d}.json"), "w", encoding="utf-8") as handle:
            handle.write("\n".join(lines) + "\n")
    return folder


def _processors(cost_ms: float) -> tuple[Any, Any]:
    """The two stateful processors: Expensive (spin, count per key, emit the value) and Tally
    (running sum per key, emit it)."""
    from pyspark.sql.streaming.stateful_processor import StatefulProcessor

    cost = cost_ms / 1000.0

    def expensive(seen: int, value: int) -> tuple[int, int]:
        if cost:
            end = time.perf_counter() + cost
            while time.perf_counter() < end:
                pass
        return seen + 1, value

    def tally(total: int, value: int) -> tuple[int, int]:
        return total + value, total + value

    class Keyed(StatefulProcessor):
        """One long of state per key; ``step(state, value) -> (state, output)`` per row."""

        def __init__(self, step: Callable[[int, int], tuple[int, int]]) -> None:
            self.step = step

        def init(self, handle: Any) -> None:
            self.state = handle.getValueState("state", "s long")

        def handleInputRows(self, key: Any, rows: Iterator[Any], timerValues: Any
                            ) -> Iterator[Any]:
            state = self.state.get()[0] if self.state.exists() else 0
            out = []
            for frame in rows:
                for value in frame["value"].tolist():
                    state, emitted = self.step(state, value)
                    out.append(emitted)
            self.state.update((state,))
            yield pd.DataFrame({"key": [key[0]] * len(out), "value": out})

        def close(self) -> None:
            pass

    return Keyed(expensive), Keyed(tally)


def structured_run(spark: Any, n: int, *, cost_ms: float, batch_size: int, directory: str
                   ) -> int:
    """Run the workload as one Structured Streaming query over ``n`` events in micro-batches
    of ``batch_size``; input files, sink and checkpoint under ``directory`` (fresh for each
    run). Returns the number of micro-batches run (the caller times it; writing the input
    files is part of the call, a few ms per batch)."""
    expensive, tally = _processors(cost_ms)
    folder = write_events(directory, n, batch_size)
    events = (spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1)
              .json(folder))
    scored = events.groupBy("key").transformWithStateInPandas(
        statefulProcessor=expensive, outputStructType=SCHEMA, outputMode="Append",
        timeMode="None")
    summed = scored.groupBy("key").transformWithStateInPandas(
        statefulProcessor=tally, outputStructType=SCHEMA, outputMode="Append", timeMode="None")
    query = (summed.writeStream.format("parquet").option("path", f"{directory}/out")
             .option("checkpointLocation", f"{directory}/checkpoint")
             .trigger(availableNow=True).start())
    try:
        query.awaitTermination()
    finally:
        query.stop()
    if query.exception() is not None:  # pragma: no cover - a Spark failure
        raise RuntimeError(str(query.exception()))
    return len([p for p in query.recentProgress if p["numInputRows"]])
