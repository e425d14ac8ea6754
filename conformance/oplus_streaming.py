"""The O+ suite's live engine (issue 14, item 6): cases run through the Structured Streaming
front end :func:`spark_impl.oplus.streaming.start_oplus_query`, judged by the O+ suite's
oracles (outputs = the sequential reference; each output in its due round, from its instance).

:func:`streaming_engine` has the signature and result of
:func:`conformance.oplus_suite.spark_engine` (a :class:`~conformance.crashes.Guard` over
``(scenario, items per round)`` cases returning, per case, the rows and the ``(round,
instance)`` that emitted each), so the suite's check, shrinker and replay take either. One
engine call runs a batch of cases as **one live query** (job ``i`` = case ``i``), the way a
user's stream arrives:

* file ``f`` carries items ``f*k .. f*k + k - 1`` of every input list of every case (``k`` =
  the case's items per round: tuples, explicit watermarks as mark rows, and an ``end`` row
  with a list's last item: the scenario's final +inf). It lands in the source directory
  (atomic rename) only after the query has processed file ``f - 1``, so Structured
  Streaming's batch ``f`` is the case's round ``f``;
* each reconfiguration ``{"watermark": w, "parallelism": p}`` is requested *while the query
  runs* (``run.rescale(p, job=i, watermark=w)``), just before the file whose batch first
  reaches ``w`` lands (the test harness knows its data; the query only learns it from the
  data), and the query applies it at that batch's boundary; one that only the end of the
  stream reaches is requested before the last file and must not be applied. The number the
  query applied (its commit record) is reported to the suite's ``applied`` oracle;
* the driver "crashes" at each of :data:`spark_impl.oplus.streaming.CRASH_POINTS` in turn
  (after the round, after the commit, after the sink write) on files 2, 3 and 4, and a new
  query is started on the same checkpoint each time: a restart must neither lose nor
  duplicate an output, nor move it to another round;
* the results are read back from the Parquet sink (``batch`` = round, ``instance``).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from typing import Any, Sequence

from conformance.crashes import Guard
from conformance.oplus_suite import SparkCase, SparkSeen

SCHEMA = ("job int, source int, seq long, ts long, watermark long, end boolean, key string, value long, "
          "text string, x long, y long, a long, b long")
"""The stream's columns (a superset of every operator's fields; absent fields are null)."""


def stream_files(cases: Sequence[SparkCase]) -> list[list[dict[str, Any]]]:
    """The rows of each file (module docstring); a row's ``seq`` is the item's position in its list."""
    out: list[list[dict[str, Any]]] = [[]]
    for job, (case, size) in enumerate(cases):
        for source, items in enumerate(case["inputs"]):
            last = (len(items) - 1) // size if items else 0
            while len(out) <= last:
                out.append([])
            for position, item in enumerate(items):
                out[position // size].append({"job": job, "source": source, "seq": position, **item})
            out[last].append({"job": job, "source": source, "end": True})
    return out


def request_file(case: SparkCase, watermark: int) -> int | None:
    """The file before which a reconfiguration at ``watermark`` is requested: the first whose
    batch's watermark reaches it while the stream runs (None: only the end would)."""
    from spec.oplus.scenario import parse_scenario

    from spark_impl.oplus.feed import Feed

    feed = Feed(parse_scenario(case[0]), case[1])
    for r in range(feed.rounds):
        mark = feed.watermark(r)
        if mark != float("inf") and mark >= watermark:
            return r
    return None


def _land(directory: str, index: int, rows: list[dict[str, Any]]) -> None:
    """Write one file into the source directory atomically (the file source never sees half)."""
    tmp = os.path.join(os.path.dirname(directory), f".landing-{index}.json")
    with open(tmp, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    os.replace(tmp, os.path.join(directory, f"part-{index:05d}.json"))


def run_live(spark: Any, cases: Sequence[SparkCase], faults: frozenset[str] = frozenset(),
             crashes: bool = True, workdir: str | None = None) -> list[SparkSeen]:
    """Every case's rows and their ``(round, instance)`` through one live query (module docstring)."""
    from spark_impl.faults import OPLUS_FAULTS
    from spark_impl.oplus.streaming import CRASH_POINTS, start_oplus_query
    from spark_impl.oplus.streaming_jobs import oplus_job
    from spark_impl.reconfig.sinks import ParquetSink

    if not cases:
        return []
    jobs = [oplus_job(c["operator"], c["WA"], c["WS"], WT=c.get("WT"), parallelism=c["parallelism"],
                      params=c.get("params"), sources=len(c["inputs"])) for c, _ in cases]
    requests: dict[int, list[tuple[int, int, int]]] = {}
    files = stream_files(cases)
    for job, case in enumerate(cases):
        for change in case[0].get("reconfigurations", []):
            at = request_file(case, change["watermark"])  # None: only the end reaches it (must not apply)
            requests.setdefault(len(files) - 1 if at is None else at, []).append(
                (job, change["parallelism"], change["watermark"]))
    base = tempfile.mkdtemp(prefix="streamproof-oplus-live-", dir=workdir)
    source_dir, checkpoint, table = (os.path.join(base, n) for n in ("in", "ckpt", "out"))
    os.makedirs(source_dir)

    def start() -> Any:
        stream = spark.readStream.schema(SCHEMA).option("maxFilesPerTrigger", 1).json(source_dir)
        return start_oplus_query(spark, stream, jobs, checkpoint_dir=checkpoint, sink=ParquetSink(table),
                                 faults=faults & OPLUS_FAULTS)

    run = start()
    pending_crashes = list(CRASH_POINTS) if crashes else []
    try:
        for index, rows in enumerate(files):
            for job, size, watermark in requests.get(index, []):
                run.rescale(size, job=job, watermark=watermark)
            if index >= 2 and pending_crashes:
                run.crash_at(pending_crashes.pop(0))
            _land(source_dir, index, rows)
            try:
                run.query.processAllAvailable()
            except Exception as error:  # noqa: BLE001 - only the simulated crash is expected
                if "simulated driver crash" not in str(error):
                    raise
                run.stop()
                run = start()
                run.query.processAllAvailable()
        run.stop()
        return _read_back(spark, table, _applied(checkpoint, len(cases)))
    finally:
        try:
            run.stop()
        finally:
            shutil.rmtree(base, ignore_errors=True)


def _applied(checkpoint: str, count: int) -> list[int]:
    """Per job, the rescale requests the query applied (from its last commit record, which
    counts them all: the request log itself keeps only the last few applied ones)."""
    from spark_impl.oplus.streaming_log import Log

    record = Log(checkpoint).latest()
    return [record.rescaled.get(job, 0) if record is not None else 0 for job in range(count)]


def _read_back(spark: Any, table: str, applied: list[int]) -> list[SparkSeen]:
    seen: list[SparkSeen] = [([], [], n) for n in applied]
    if not os.path.exists(table):
        return seen
    for r in spark.read.parquet(table).select("job", "batch", "instance", "ts", "key", "value").collect():
        rows, emitted, _ = seen[int(r["job"])]
        rows.append((int(r["ts"]), str(r["key"]), json.dumps(json.loads(r["value"]), sort_keys=True)))
        emitted.append((int(r["batch"]), int(r["instance"])))
    return seen


def streaming_engine(faults: frozenset[str], spark: Any = None, timeout_s: float = 900.0
                     ) -> Guard[SparkCase, SparkSeen]:
    """The live O+ engine, a drop-in for :func:`conformance.oplus_suite.spark_engine`."""
    from conformance.runner import shared_session

    session = shared_session(spark)

    def run(cases: Sequence[SparkCase]) -> list[SparkSeen]:
        return run_live(session(), cases, faults)

    return Guard(run, timeout_s, on_hang=lambda: session().sparkContext.cancelAllJobs())
