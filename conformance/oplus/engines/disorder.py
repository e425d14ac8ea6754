"""The O+ suite's out-of-order landings on the live front end: what bit users of the file
source (docs/production/oplus.md, "Bounded out-of-orderness").

Spark's file source takes files by modification time, in milliseconds; files that land in the
same millisecond come out in any order. Here every case's items (tuples only: an explicit
watermark is a promise a reordered file would break) are cut into groups of ``k`` per list
(``k`` = the case's items per round) and the groups are landed **pairwise swapped**: group 1,
then group 0 *with the same modification time* (``os.utime``), then group 3, then group 2 with
group 3's time, ... (a lone last group lands last), one micro-batch per file; a last file ends
every list. So the file source hands over later event times first, as it did to users.

Every case runs in live queries (job ``i`` of a query = its ``i``-th case; no rescale, no
crash: :mod:`conformance.oplus.engines.live` covers those):

* within the allowed lateness, at its **edge**: each case runs with ``allowed_lateness`` =
  its :func:`tightest` lateness (the smallest at which the documented rule makes none of its
  tuples late; one query per distinct value above 0, the largest one holding every case of the
  batch, so the others run with room to spare too): nothing may be late, and the outputs must
  equal the sequential reference fed the event-time-sorted input (:func:`tuples_only`). Why
  the edge: at the tightest lateness some tuple sits *exactly* at the watermark the previous
  batch left (one unit less and it would be late), the one tuple the promise "within the
  allowed lateness nothing is lost" is about and a generous lateness never tests; a front end
  that takes ``ts <= watermark`` for late loses it there (and nowhere else);
* ``allowed_lateness=0``, ``late_policy="drop"``: the late tuples are exactly those
  :func:`predicted_late` names from the documented rule (a tuple below its job's watermark
  after the previous batch, the watermark being the minimum over the job's sources of the
  largest event time each delivered minus the allowed lateness); the query's late count
  (``status().late``) must equal their number, and the outputs must equal the sequential
  reference fed the input without them. A drop that is not counted, or a count that drops
  nothing, fails the ``late`` oracle or the ``outputs`` one.
"""

from __future__ import annotations

import math
import os
import tempfile
from typing import Any, Sequence

import spark_impl.faults as spark_faults

from conformance.core.crashes import Crash, Guard
from conformance.core.session import shared_session
from conformance.core.verdict import OracleName, Verdict, fails, holds
from conformance.oplus.cases import SparkCase
from conformance.oplus.engines import live
from conformance.oplus.late_rule import late_rows
from conformance.oplus.oracles import Row, crash_verdict, first_failure, outputs_verdict, problem_text
import spark_impl.oplus.streaming_jobs as oplus_jobs
from spark_impl.oplus.streaming import start_oplus_query
from spark_impl.reconfig.sinks import ParquetSink

Placed = list[list[tuple[int, int, dict[str, Any]]]]
"""Per landed file (landing order), ``(source, position, item)`` of one case."""

DisorderSeen = tuple[list[Row], int]
"""A case's rows read back from the sink and the query's late count for its job."""


def tuples_only(case: SparkCase) -> SparkCase:
    """``case`` with only its tuples (no explicit watermarks) and no reconfiguration: the
    event-time-sorted input the live run is judged against (each list stays sorted)."""
    scenario, size = case
    inputs = [[item for item in items if "ts" in item] for items in scenario["inputs"]]
    return {**scenario, "inputs": inputs, "reconfigurations": []}, size


GROUPS = 4
"""At most this many landed files per case (groups of ``max(k, len / 4)`` items): two swapped
pairs reach every kind of disorder, and the batch count (the run's cost) stays fixed."""

EVERY = 4
"""The suite reuses every 4th case (at most :data:`MOST`) for the two disordered runs."""

MOST = 8


def family(drawn: Sequence[SparkCase]) -> list[SparkCase]:
    """The suite's cases of this family: every :data:`EVERY`-th drawn case with a tuple (at
    most :data:`MOST`), as :func:`tuples_only`."""
    picked = [tuples_only(c) for c in drawn[::EVERY]]
    return [c for c in picked if any(c[0]["inputs"])][:MOST]


def placed(case: SparkCase) -> Placed:
    """The case's tuples per landed file (module docstring: groups of ``k`` swapped pairwise,
    at most :data:`GROUPS` of them)."""
    scenario, size = case
    longest = max((len(items) for items in scenario["inputs"]), default=0)
    size = max(size, -(-longest // GROUPS))
    groups: list[list[tuple[int, int, dict[str, Any]]]] = []
    for source, items in enumerate(scenario["inputs"]):
        for position, item in enumerate(items):
            while len(groups) <= position // size:
                groups.append([])
            groups[position // size].append((source, position, item))
    order = [g ^ 1 if (g ^ 1) < len(groups) else g for g in range(len(groups))]
    return [groups[g] for g in order]


def disorder(case: SparkCase) -> int:
    """The case's out-of-orderness as landed: the most any tuple's event time is below the
    largest event time its source delivered in an earlier file (0: in order)."""
    seen: dict[int, float] = {}
    worst = 0
    for rows in placed(case):
        for source, _, item in rows:
            if source in seen:
                worst = max(worst, int(seen[source] - item["ts"]))
        for source, _, item in rows:
            seen[source] = max(seen.get(source, -math.inf), item["ts"])
    return worst


def tightest(case: SparkCase) -> int:
    """The smallest ``allowed_lateness`` at which :func:`predicted_late` names no tuple of the
    case as landed: the most any tuple is below its job's watermark of the previous file taken
    with lateness 0 (the minimum over the job's sources of the largest event time each
    delivered; a source that delivered nothing holds it at -inf). The watermark falls by one
    per unit of lateness, so when this is above 0 some tuple lies exactly *at* the watermark
    after the previous batch (module docstring). At most :func:`disorder`."""
    top = [-math.inf] * len(case[0]["inputs"])
    need = 0
    for rows in placed(case):
        watermark = min(top) if top else -math.inf
        if math.isfinite(watermark):
            need = max([need] + [int(watermark - item["ts"]) for _, _, item in rows])
        for source, _, item in rows:
            top[source] = max(top[source], item["ts"])
    return need


def predicted_late(case: SparkCase, lateness: int) -> set[tuple[int, int]]:
    """``(source, position)`` of every tuple the documented rule makes late (module docstring)."""
    files = placed(case)
    landed = [[(source, item["ts"], None) for source, _, item in rows] for rows in files]
    return {files[f][r][:2] for f, r in late_rows(landed, len(case[0]["inputs"]), lateness)}


def without(case: SparkCase, dropped: set[tuple[int, int]]) -> SparkCase:
    """``case`` without the tuples ``dropped`` names."""
    scenario, size = case
    inputs = [[item for p, item in enumerate(items) if (s, p) not in dropped]
              for s, items in enumerate(scenario["inputs"])]
    return {**scenario, "inputs": inputs}, size


def files_of(cases: Sequence[SparkCase]) -> list[list[dict[str, Any]]]:
    """The rows of every landed file of the batch (file ``f`` holds every case's ``f``-th
    landed group), and a last file that ends every list."""
    out: list[list[dict[str, Any]]] = []
    for job, case in enumerate(cases):
        for index, rows in enumerate(placed(case)):
            while len(out) <= index:
                out.append([])
            out[index].extend({"job": job, "source": s, "seq": p, **item} for s, p, item in rows)
    ends = [{"job": job, "source": s, "end": True} for job, (c, _) in enumerate(cases) for s in range(len(c["inputs"]))]
    return out + [ends]


def run_disordered(spark: Any, cases: Sequence[SparkCase], lateness: int, faults: frozenset[str] = frozenset(),
                   workdir: str | None = None) -> list[DisorderSeen]:
    """Every case (already :func:`tuples_only`) through one live query with ``allowed_lateness``
    ``lateness`` and ``late_policy="drop"``, files landed as the module docstring says."""
    if not cases:
        return []
    jobs = [oplus_jobs.oplus_job(c["operator"], c["WA"], c["WS"], WT=c.get("WT"), parallelism=c["parallelism"],
                                 params=c.get("params"), sources=len(c["inputs"])) for c, _ in cases]
    base = tempfile.mkdtemp(prefix="streamproof-oplus-disorder-", dir=workdir)
    source_dir, checkpoint, table = (os.path.join(base, n) for n in ("in", "ckpt", "out"))
    os.makedirs(source_dir)
    stream = spark.readStream.schema(live.SCHEMA).option("maxFilesPerTrigger", 1).json(source_dir)
    run = start_oplus_query(spark, stream, jobs, checkpoint_dir=checkpoint, sink=ParquetSink(table),
                            faults=faults & spark_faults.OPLUS_FAULTS, allowed_lateness=lateness, late_policy="drop")
    try:
        files = files_of(cases)
        mtime: int | None = None
        for index, rows in enumerate(files):
            # the second file of a pair lands in the same instant as the first (module docstring)
            landed = live.land(source_dir, index, rows, mtime if index % 2 == 1 else None)
            mtime = landed
            run.process_all_available()
        late = run.late()
        run.stop()
        seen = live.read_back(spark, table, [None] * len(cases))
        return [(rows, late.get(job, 0)) for job, (rows, _, _) in enumerate(seen)]
    finally:
        live.finish(run, base)


def disorder_engine(lateness: int, faults: frozenset[str] = frozenset(), spark: Any = None,
                    timeout_s: float = 600.0) -> Guard[SparkCase, DisorderSeen]:
    """:func:`run_disordered` with ``lateness`` under the suite's watchdog and crash isolation."""
    session = shared_session(spark)
    return Guard(lambda cases: run_disordered(session(), cases, lateness, faults), timeout_s,
                 on_hang=lambda: session().sparkContext.cancelAllJobs())


def disorder_verdicts(cases: Sequence[SparkCase], faults: frozenset[str] = frozenset(), spark: Any = None
                      ) -> tuple[list[tuple[Verdict, ...]], int]:
    """Per case (any :data:`SparkCase`; judged on :func:`tuples_only` of it), the verdicts of
    every run of the module docstring (:func:`judge`): the run at the case's :func:`tightest`
    lateness first (its finding is the sharpest), then the generous one, then the drop run,
    judging stopping at the first failure; and the largest allowed lateness a run used (the
    batch's largest tightest lateness)."""
    fed = [tuples_only(c) for c in cases]
    edges = [tightest(c) for c in fed]
    lateness = max(edges, default=0)
    # per case: (allowed lateness, its run) of every query it is in; the drop run first
    runs: list[list[tuple[int, DisorderSeen | Crash]]] = [[(0, got)] for got in disorder_engine(0, faults, spark)(fed)]
    for edge in sorted({e for e in edges if e > 0}):
        picked = [i for i, e in enumerate(edges) if e == edge or edge == lateness]
        for i, got in zip(picked, disorder_engine(edge, faults, spark)([fed[i] for i in picked])):
            runs[i].append((edge, got))
    judged: list[tuple[Verdict, ...]] = []
    for case, seen in zip(fed, runs):
        verdicts: tuple[Verdict, ...] = ()
        for at, got in sorted(seen[1:], key=lambda run: run[0]) + seen[:1]:
            verdicts += judge(case, at, got)
            if any(not v.held for v in verdicts):
                break
        judged.append(verdicts)
    return judged, lateness


def disorder_discrepancies(cases: Sequence[SparkCase], faults: frozenset[str] = frozenset(), spark: Any = None
                           ) -> tuple[list[str | None], int]:
    """:func:`disorder_verdicts` as text: per case the first failure's
    (:func:`~conformance.oplus.oracles.problem_text`: ``[engine]``, ``[late]`` or an outputs
    difference), None when every oracle holds."""
    judged, lateness = disorder_verdicts(cases, faults, spark)
    return [problem_text(first_failure(verdicts)) for verdicts in judged], lateness


def judge(case: SparkCase, lateness: int, got: DisorderSeen | Crash) -> tuple[Verdict, ...]:
    """The verdicts on a run with ``lateness``: ``engine``; ``late`` (it counted exactly the
    late tuples :func:`predicted_late` names); ``outputs`` (its rows equal the sequential
    reference on the input without them); judging stops at the first failure."""
    who = f"spark-streaming (files landed out of order, allowed_lateness {lateness})"
    if isinstance(got, Crash):
        return (crash_verdict(got, who),)
    rows, late = got
    expected = predicted_late(case, lateness)
    ran = holds(OracleName.ENGINE, "the engine ran the case")
    if late != len(expected):
        shown = sorted(expected)[:5]
        return (ran, fails(OracleName.LATENESS,
                           f"{who} counted {late} late tuple(s), the documented rule makes {len(expected)} late "
                           f"(source, position): {shown}",
                           {"counted": late, "predicted": len(expected), "first_predicted": shown}))
    counted = holds(OracleName.LATENESS, "the run counted exactly the tuples the lateness rule makes late")
    return (ran, counted, outputs_verdict(without(case, expected)[0], rows, who))
