"""The O+ suite's live engine: cases run through the Structured Streaming
front end :func:`spark_impl.oplus.streaming.start_oplus_query`, judged by the O+ suite's
oracles (outputs = the sequential reference; each output in its due round, from its instance).

:func:`streaming_engine` has the signature and result of
:func:`conformance.oplus.suite.spark_engine` (a :class:`~conformance.core.crashes.Guard` over
``(scenario, items per round)`` cases returning, per case, the rows and the ``(round,
instance)`` that emitted each), so the suite's check, shrinker and replay take either. One
engine call runs a batch of cases as **one live query** (job ``i`` = case ``i``), the way a
user's stream arrives:

* file ``f`` carries items ``f*k .. f*k + k - 1`` of every input list of every case (``k`` =
  the case's items per round: tuples, explicit watermarks as mark rows, and an ``end`` row
  with a list's last item: the scenario's final +inf). It lands in the source directory
  (atomic rename) only after the query has processed file ``f - 1``, so Structured
  Streaming's batch ``f`` is the case's round ``f``;
* **silent sources** (:func:`late_arrivals`): a list that opens with ``n*k`` explicit
  watermarks at :data:`SILENT` sends *nothing* in its first ``n`` files (those marks are not
  landed): its source has delivered no row, so it must hold its job's watermark back (the
  front end's bound of a source that sent nothing is -inf). The marks are how the case tells
  the oracles the same arrival: in the scenario semantics they only hold the list's bound at
  ``SILENT``, below every event time, window end and reconfiguration watermark of the case,
  which is what -inf does (no window expires, no tuple is late, no rescale is reached), and
  they change no output. So the sequential reference and the emission rounds
  (:mod:`spec.oplus.emission`) of the padded scenario are the live run's, and a front end
  that lets a silent source's -inf drop out of the minimum emits windows early and drops
  that source's first tuples as late;
* each reconfiguration ``{"watermark": w, "parallelism": p}`` is requested *while the query
  runs* (``run.rescale(p, job=i, watermark=w)``), just before the file whose batch first
  reaches ``w`` lands (the test harness knows its data; the query only learns it from the
  data), and the query applies it at that batch's boundary; one that only the end of the
  stream reaches is requested before the last file and must not be applied. The number the
  query applied (its commit record) is reported to the suite's ``applied`` oracle;
* the driver "crashes" at each of :data:`spark_impl.oplus.streaming.CRASH_POINTS` in turn
  (after the round, after the commit, after the sink write) on files 2, 3 and 4, and a new
  query is started on the same checkpoint each time: a restart must neither lose nor
  duplicate an output, nor move it to another round; each crash asked for must happen (in the
  batch of the file it was asked before);
* the results are read back from the Parquet sink (``batch`` = round, ``instance``);
* after every batch the driver did not crash in, the query's request log must hold exactly
  every request not applied and the ``KEEP_APPLIED`` newest applied ones (fewer while fewer
  were applied): bounded storage (the suite's query applies dozens of rescales) without
  dropping a request early (``status().applied`` lists the kept ones); else the first case
  that asked for a rescale fails ``engine``.
"""

from __future__ import annotations

import copy
import json
import os
import random
import shutil
import tempfile
from typing import Any, Mapping, Sequence, cast

from spec.oplus.scenario import MAX_TIME, parse_scenario
from spark_impl.result_values import from_text

import spark_impl.faults as spark_faults
import spark_impl.oplus.feed as oplus_feed
import spark_impl.oplus.streaming_jobs as oplus_jobs
import spark_impl.oplus.streaming_log as oplus_log

from conformance.core.crashes import Crash, Guard
from conformance.core.session import shared_session
from conformance.oplus.cases import SparkCase
from conformance.oplus.oracles import SparkSeen
from spark_impl.oplus.streaming import CRASH_POINTS, start_oplus_query
from spark_impl.reconfig.sinks import ParquetSink

SCHEMA = ("job int, source int, seq long, ts long, watermark long, end boolean, key string, value long, "
          "text string, x long, y long, a long, b long")
"""The stream's columns (a superset of every operator's fields; absent fields are null)."""


SILENT = -MAX_TIME
"""A list's leading explicit watermarks at this value stand for "nothing delivered yet"
(module docstring): they are never landed."""

LATE_EVERY = 3
"""Every 3rd case of :func:`late_arrivals` has a silent source."""


def stream_files(cases: Sequence[SparkCase]) -> list[list[dict[str, Any]]]:
    """The rows of each file (module docstring); a row's ``seq`` is the item's position in its list."""
    out: list[list[dict[str, Any]]] = [[]]
    for job, (case, size) in enumerate(cases):
        for source, items in enumerate(case["inputs"]):
            last = (len(items) - 1) // size if items else 0
            while len(out) <= last:
                out.append([])
            silent = silent_prefix(items)
            for position, item in enumerate(items[silent:], start=silent):
                out[position // size].append({"job": job, "source": source, "seq": position, **item})
            out[last].append({"job": job, "source": source, "end": True})
    return out


def silent_prefix(items: Sequence[Mapping[str, Any]]) -> int:
    """How many leading items of a list are :data:`SILENT` marks (not landed)."""
    count = 0
    while count < len(items) and items[count] == {"watermark": SILENT}:
        count += 1
    return count


def silenced(case: SparkCase, files: Mapping[int, int]) -> SparkCase:
    """``case`` with list ``s`` silent in its first ``files[s]`` files (module docstring)."""
    scenario, size = copy.deepcopy(case[0]), case[1]
    for source, count in files.items():
        scenario["inputs"][source] = [{"watermark": SILENT}] * (count * size) + scenario["inputs"][source]
    return scenario, size


def late_arrivals(cases: Sequence[SparkCase], seed: int) -> list[SparkCase]:
    """``cases`` with every :data:`LATE_EVERY`-th one (from the second) made to start with a
    silent source: the list whose first tuple is the earliest (the one whose silence matters:
    the others' bounds pass its first tuples) sends nothing in its first 1-2 files; in half
    of the cases with several lists, another list too, one file less long."""
    rng = random.Random(f"late-arrivals-{seed}")
    result = list(cases)
    for index in range(1, len(result), LATE_EVERY):
        inputs = result[index][0]["inputs"]
        if not inputs:
            continue
        first = [min((i["ts"] for i in items if "ts" in i), default=MAX_TIME) for items in inputs]
        order = sorted(range(len(inputs)), key=lambda s: (first[s], s))
        delay = rng.choice((1, 2))
        files = {order[0]: delay}
        if len(order) > 1 and delay > 1 and rng.random() < 0.5:
            files[order[1]] = delay - 1
        result[index] = silenced(result[index], files)
    return result


def request_file(case: SparkCase, watermark: int) -> int | None:
    """The file before which a reconfiguration at ``watermark`` is requested: the first whose
    batch's watermark reaches it while the stream runs (None: only the end would)."""
    feed = oplus_feed.Feed(parse_scenario(case[0]), case[1])
    for r in range(feed.rounds):
        mark = feed.watermark(r)
        if mark != float("inf") and mark >= watermark:
            return r
    return None


def land(directory: str, index: int, rows: list[dict[str, Any]], mtime_ns: int | None = None) -> int:
    """Write one file into the source directory atomically (the file source never sees half);
    ``mtime_ns``: the file's modification time (set before it lands, so the source only ever
    lists it with that time). Returns the landed file's modification time."""
    tmp = os.path.join(os.path.dirname(directory), f".landing-{index}.json")
    with open(tmp, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row) + "\n")
    if mtime_ns is not None:
        os.utime(tmp, ns=(mtime_ns, mtime_ns))
    target = os.path.join(directory, f"part-{index:05d}.json")
    os.replace(tmp, target)
    return os.stat(target).st_mtime_ns


def run_live(spark: Any, cases: Sequence[SparkCase], faults: frozenset[str] = frozenset(),
             crashes: bool = True, workdir: str | None = None) -> list[SparkSeen | Crash]:
    """Every case's rows and their ``(round, instance)`` through one live query (module docstring)."""
    if not cases:
        return []
    jobs = [oplus_jobs.oplus_job(c["operator"], c["WA"], c["WS"], WT=c.get("WT"), parallelism=c["parallelism"],
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
                                 faults=faults & spark_faults.OPLUS_FAULTS)

    run = start()
    pending_crashes = list(CRASH_POINTS) if crashes else []
    asked, armed, fired, problem = 0, 0, 0, None
    try:
        for index, rows in enumerate(files):
            for job, size, watermark in requests.get(index, []):
                run.rescale(size, job=job, watermark=watermark)
                asked += 1
            if index >= 2 and pending_crashes:
                run.crash_at(pending_crashes.pop(0))
                armed += 1
            land(source_dir, index, rows)
            try:
                run.query.processAllAvailable()
            except Exception as error:  # noqa: BLE001 - only the simulated crash is expected
                if "simulated driver crash" not in str(error):
                    raise
                fired += 1
                run.stop()
                run = start()
                run.query.processAllAvailable()
            else:  # a replayed batch (after a crash) does not compact: judged at the next one
                if problem is None:
                    done = sum(applied_counts(checkpoint, len(cases)))
                    problem = request_log_problem(checkpoint, asked, done, f"after batch {index}, ")
        if fired != armed:  # a crash point that never fires silently drops the restart checks
            problem = problem or f"{armed} driver crashes were asked for (crash_at) but {fired} happened"
        run.stop()
        applied = applied_counts(checkpoint, len(cases))
        seen: list[SparkSeen | Crash] = list(read_back(spark, table, applied))
        issued = [len(case[0].get("reconfigurations", [])) for case in cases]
        problem = problem or request_log_problem(checkpoint, sum(issued), sum(applied), "at the end, ")
        if problem is not None:  # a query-wide failure, reported on the first case that asked (or case 0)
            seen[next((j for j, n in enumerate(issued) if n), 0)] = Crash(problem)
        return seen
    finally:
        finish(run, base)


def finish(run: Any, base: str) -> None:
    """Stop a scratch query (idempotent) and remove its directory, even when stopping fails."""
    try:
        run.stop()
    finally:
        shutil.rmtree(base, ignore_errors=True)


def applied_counts(checkpoint: str, count: int) -> list[int]:
    """Per job, the rescale requests the query applied (from its last commit record, which
    counts them all: the request log itself keeps only the last few applied ones)."""
    record = oplus_log.Log(checkpoint).latest()
    return [record.rescaled.get(job, 0) if record is not None else 0 for job in range(count)]


def request_log_problem(checkpoint: str, issued: int, applied: int, when: str = "") -> str | None:
    """None when the query's request log (after a compacted batch) keeps exactly every request
    not applied and the ``KEEP_APPLIED`` newest applied ones, fewer while fewer were applied
    (``spark_impl.oplus.streaming.compact_requests``: bounded storage, and no applied request
    dropped before it has to be), else the difference in words."""
    from spark_impl.oplus.streaming import KEEP_APPLIED  # noqa: PLC0415 - read when called: spark_impl.oplus.streaming.KEEP_APPLIED is replaced at run time

    kept, pending = len(oplus_log.Log(checkpoint).requests()), issued - applied
    if kept == pending + min(applied, KEEP_APPLIED):
        return None
    return (f"{when}{issued} rescale requests, {applied} of them applied: the query's request log keeps {kept}, "
            f"expected the {pending} not applied and the {min(applied, KEEP_APPLIED)} newest applied ones "
            f"(at most {KEEP_APPLIED})")


def read_back(spark: Any, table: str, applied: Sequence[int | None]) -> list[SparkSeen]:
    """Per job, the rows of the Parquet sink ``table`` and the ``(batch, instance)`` of each
    (``applied``: per job, what to report as the rescales applied)."""
    seen: list[SparkSeen] = [([], [], n) for n in applied]
    if not os.path.exists(table):
        return seen
    for r in spark.read.parquet(table).select("job", "batch", "instance", "ts", "key", "value").collect():
        rows, emitted, _ = seen[int(r["job"])]
        # the key column is a sink text column (spark_impl.result_values: a string that is itself
        # JSON text is written quoted), read back as the documented reader reads it
        rows.append((int(r["ts"]), str(from_text(r["key"])), json.dumps(json.loads(r["value"]), sort_keys=True)))
        emitted.append((int(r["batch"]), int(r["instance"])))
    return seen


def streaming_engine(faults: frozenset[str], spark: Any = None, timeout_s: float = 900.0
                     ) -> Guard[SparkCase, SparkSeen]:
    """The live O+ engine, a drop-in for :func:`conformance.oplus.suite.spark_engine`."""
    session = shared_session(spark)

    def run(cases: Sequence[SparkCase]) -> list[SparkSeen]:
        # a Crash among the results is what the Guard's own isolation yields: the judge takes it
        return cast(list[SparkSeen], run_live(session(), cases, faults))

    return Guard(run, timeout_s, on_hang=lambda: session().sparkContext.cancelAllJobs())
