"""A user-defined O+ operator under test (``streamproof conformance --operator FILE.py:NAME``).

:class:`UserOperatorUnderTest` holds the operator (``spec.oplus.model.OPlus``, loaded from the
user's file), its target and its declared fields. Cases are those of
:mod:`conformance.oplus.user_cases`; each engine returns, per case, the outputs as a multiset of
``(ts, value)`` with ``value`` the payload as the live sink writes it (a string as is, anything
else canonical JSON: ``spark_impl.reconfig.sinks.column_converter("string")``):

* the reference's O+ semantics (:func:`reference_outputs`): sequential (the operator's
  meaning), shared-nothing (STRETCH Alg. 1-2) and virtual shared-nothing with the case's
  elastic reconfigurations (Alg. 3-6), the same user functions in this process;
* spark_impl's live O+ front end (:func:`live_engine`): every case of a batch one job of ONE
  Structured Streaming query (``oplus_job("FILE.py:NAME", fields=..., parallelism=p)``, the
  operator loaded on the workers from the file as in production), every reconfiguration
  requested before the first file (``run.rescale(q, job=i, watermark=w)``: applied at the
  first batch whose watermark reaches ``w``), rows read back from the Parquet sink, and the
  stream as the catalogue's live engines send it (:func:`landed`):

  - **out of order within the allowed lateness**: groups of ``k`` items of every list landed
    pairwise swapped (group 1, then group 0, then 3, then 2, ...; a lone last group lands
    last), one micro-batch each, and the query's ``allowed_lateness`` the smallest at which no
    tuple of the batch is late (:func:`lateness_needed`) with ``late_policy="fail"``: the
    outputs must equal the sequential reference (the operator's meaning on the sorted input),
    and a tuple taken for late stops the query (``engine``);
  - **explicit watermarks**: with every second file (once a swapped pair is in) each list
    sends a watermark row promising the event time of its next tuple still to come (the
    strongest promise its input keeps), so that tuple then lies exactly at the watermark;
  - **restarts**: the driver "crashes" at each of ``spark_impl.oplus.streaming.CRASH_POINTS``
    (after the round, after the commit, after the sink write) on files 2, 3 and 4 (when the
    stream has them), and a new query resumes on the same checkpoint: exactly once, no output
    lost or repeated; a crash asked for that never happens fails the batch (``engine``);
  - ``faults``: spark_impl's seeded O+ faults (``window-off-by-one``,
    ``drop-near-watermark``), which the front end applies to a user's operator as to the
    catalogue's: ``--inject-fault`` with ``--operator`` must make a correct operator fail.

A user function that raises is the user's fault, never a hang: on the reference the exception
is caught and named (:func:`user_fault`: which of the operator's functions raised, where, on
what); on Spark the failed batch stops the query and ``process_all_available`` raises at once
(the batch's error names the frame of the user's file), and the suite's watchdog bounds the
whole call (:data:`TIMEOUT_S`).
"""

from __future__ import annotations

import os
import random
import tempfile
import traceback
from collections import Counter
from dataclasses import dataclass
from typing import Any, Sequence

from spec.oplus.model import OPlus, StreamTuple
from spec.oplus.scenario import instance_of
from spec.oplus.watermarks import SourceItem

from reference.oplus.executors import run_sequential
from reference.oplus.sn import run_sn_elastic
from reference.oplus.vsn import Request, key_mapping, run_vsn

from spark_impl.reconfig.sinks import column_converter, ParquetSink

from conformance.core.crashes import Crash, Guard, describe
from conformance.core.session import shared_session
from conformance.oplus.engines import live
from conformance.oplus.late_rule import late_rows
from conformance.oplus.user_cases import Field, documented
import spark_impl.oplus.streaming_jobs as oplus_jobs
from spark_impl.faults import OPLUS_FAULTS
from spark_impl.oplus.streaming import CRASH_POINTS, start_oplus_query

Outputs = Counter[tuple[int, str]]
"""A run's outputs: ``(ts, value as the sink writes it)`` with multiplicity."""

MODES = ("sequential", "sn", "vsn")

TIMEOUT_S = 600.0
"""The longest one live call (one query of a batch of cases) may take before it is a hang."""

USER_TAG = "[user-code]"
"""How a finding starts when the user's operator raised (the ``user-code`` oracle)."""

_VALUE = column_converter("string")


@dataclass(frozen=True)
class UserOperatorUnderTest:
    """The operator, the ``FILE.py:NAME`` it was loaded from, and its payload fields."""

    op: OPlus
    target: str
    fields: tuple[Field, ...]


def payload(under: UserOperatorUnderTest, item: dict[str, Any]) -> Any:
    """A tuple's payload as the live front end builds it: the one field's value, or the tuple
    of the fields' values (``spark_impl.oplus.user_operator``), each in the Python form the
    live front end gives its Spark type (:func:`conformance.oplus.user_cases.documented`)."""
    values = tuple(documented(f, item[f.name]) for f in under.fields)
    return values[0] if len(values) == 1 else values


def sources_of(under: UserOperatorUnderTest, case: dict[str, Any]) -> list[list[SourceItem]]:
    """The case's lists as the reference's sources (``seq`` = position, as the live rows)."""
    multi = under.op.inputs > 1
    return [[StreamTuple(item["ts"], s, p, payload(under, item), s if multi else 0) for p, item in enumerate(items)]
            for s, items in enumerate(case["inputs"])]


def reference_outputs(under: UserOperatorUnderTest, case: dict[str, Any], mode: str, seed: int = 0) -> Outputs:
    """The reference's outputs of ``case`` in ``mode`` (:data:`MODES`); the user's exceptions
    propagate (:func:`user_fault` names them)."""
    sources = sources_of(under, case)
    factory = key_mapping(repr, instance_of)
    requests = [Request(r["watermark"], r["parallelism"]) for r in case["reconfigurations"]]
    if mode == "sequential":
        result = run_sequential(under.op, sources)
    elif mode == "sn":
        result = run_sn_elastic(under.op, sources, case["parallelism"], factory, requests, random.Random(seed))
    else:
        result = run_vsn(under.op, sources, case["parallelism"], factory, requests, random.Random(seed))
    return Counter((o.ts, _VALUE(o.payload)) for o in result.outputs)


def user_fault(under: UserOperatorUnderTest, error: BaseException, where: str) -> str:
    """The finding of a user function that raised, in words (the ``user-code`` oracle's
    explanation; reports print it after :data:`USER_TAG`): the innermost frame of the user's
    file (function, line), the exception, and ``where`` (which run)."""
    path = os.path.abspath(under.target.rpartition(":")[0])
    frames = [f for f in traceback.extract_tb(error.__traceback__) if os.path.abspath(f.filename) == path]
    at = f"{frames[-1].name} ({os.path.basename(path)}:{frames[-1].lineno})" if frames else "its code"
    return (f"the operator {under.op.name!r} ({under.target}) raised in {at} during {where}: "
            f"{type(error).__name__}: {error}")


def user_frame_in(under: UserOperatorUnderTest, text: str) -> str | None:
    """In a Spark error's text (a worker's Python traceback), the last frame of the user's file
    as ``function (file:line)``, or None when the user's file is not in it."""
    path = os.path.abspath(under.target.rpartition(":")[0])
    found = None
    for line in text.splitlines():
        line = line.strip()
        if line.startswith(f'File "{path}"'):
            parts = line.split(", ")
            if len(parts) >= 3 and parts[1].startswith("line ") and parts[2].startswith("in "):
                found = f"{parts[2][3:]} ({os.path.basename(path)}:{parts[1][5:]})"
    return found


class UserCodeError(RuntimeError):
    """The live query died because the user's operator raised (the message names the frame)."""


_SCHEMA = "job int, source int, seq long, ts long, watermark long, end boolean"

Row = dict[str, Any]


def landed(cases: Sequence[dict[str, Any]]) -> list[list[Row]]:
    """The rows of every landed file of the batch (module docstring): file ``f`` holds every
    case's ``f``-th landed group (with its watermark rows), a last file ends every list."""
    out: list[list[Row]] = []
    for job, case in enumerate(cases):
        for index, rows in enumerate(case_files(case)):
            while len(out) <= index:
                out.append([])
            out[index].extend({"job": job, **row} for row in rows)
    ends = [{"job": j, "source": s, "end": True} for j, c in enumerate(cases) for s in range(len(c["inputs"]))]
    return out + [ends]


def case_files(case: dict[str, Any]) -> list[list[Row]]:
    """One case's landed files (rows without ``job``): groups of ``k`` items (``k`` = the
    case's ``items_per_round``; item ``p`` of every list in group ``p // k``) landed pairwise
    swapped; after every second file, per list, a watermark at the event time of its next tuple
    still to come."""
    size = case["items_per_round"]
    groups: list[list[Row]] = []
    for source, items in enumerate(case["inputs"]):
        for position, item in enumerate(items):
            while len(groups) <= position // size:
                groups.append([])
            groups[position // size].append({"source": source, "seq": position, **item})
    files = [list(groups[g ^ 1 if (g ^ 1) < len(groups) else g]) for g in range(len(groups))]
    for index in range(1, len(files) - 1, 2):
        for source in range(len(case["inputs"])):
            coming = [row["ts"] for later in files[index + 1:] for row in later if row["source"] == source]
            if coming:
                files[index].append({"source": source, "watermark": min(coming)})
    return files


def lateness_needed(files: Sequence[Sequence[Row]], sources: int) -> int:
    """The smallest ``allowed_lateness`` at which no tuple of one case's ``files`` is late by
    the front end's documented rule (a source's bound: its largest event time minus the
    lateness, or its largest watermark; a job's watermark: the least bound over its sources,
    -inf while one delivered nothing; late: below the watermark the previous file left)."""
    lateness = 0
    while late_at(files, sources, lateness):
        lateness += 1
    return lateness


def late_at(files: Sequence[Sequence[Row]], sources: int, lateness: int) -> bool:
    """Would some tuple of ``files`` (landed in this order) be late with ``allowed_lateness``
    ``lateness``, by the live front end's documented rule?"""
    landed = [[(row["source"], row.get("ts"), row.get("watermark")) for row in rows] for rows in files]
    return bool(late_rows(landed, sources, lateness))


def run_live(spark: Any, under: UserOperatorUnderTest, cases: Sequence[dict[str, Any]],
             workdir: str | None = None, faults: frozenset[str] = frozenset()) -> list[Outputs | Crash]:
    """Every case through one live query (module docstring); the outputs per case, or a
    :class:`Crash` on the first case when the restarts did not happen as asked."""
    if not cases:
        return []
    names = tuple(f.name for f in under.fields)
    jobs = [oplus_jobs.oplus_job(under.target, parallelism=c["parallelism"], fields=names,
                                 sources=under.op.inputs) for c in cases]
    schema = _SCHEMA + "".join(f", {f.name} {f.spark_type}" for f in under.fields)
    lateness = max(lateness_needed(case_files(c), len(c["inputs"])) for c in cases)
    base = tempfile.mkdtemp(prefix="streamproof-oplus-user-", dir=workdir)
    source_dir, checkpoint, table = (os.path.join(base, n) for n in ("in", "ckpt", "out"))
    os.makedirs(source_dir)

    def start() -> Any:
        stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(source_dir)
        return start_oplus_query(spark, stream, jobs, checkpoint_dir=checkpoint, sink=ParquetSink(table),
                                 faults=faults & OPLUS_FAULTS, allowed_lateness=lateness, late_policy="fail")

    run = start()
    crashes, armed, fired = list(CRASH_POINTS), 0, 0
    try:
        for job, case in enumerate(cases):
            for change in case["reconfigurations"]:
                run.rescale(change["parallelism"], job=job, watermark=change["watermark"])
        for index, rows in enumerate(landed(cases)):
            if index >= 2 and crashes:
                run.crash_at(crashes.pop(0))
                armed += 1
            live.land(source_dir, index, rows)
            if not _processed(run, under, index):
                fired += 1
                run.stop()
                run = start()
                _processed(run, under, index)
        run.stop()
        seen: list[Outputs | Crash] = [Counter() for _ in cases]
        if os.path.exists(table):
            for r in spark.read.parquet(table).select("job", "ts", "value").collect():
                got = seen[int(r["job"])]
                assert isinstance(got, Counter)
                got[(int(r["ts"]), str(r["value"]))] += 1
        if fired != armed:  # a crash point that never fires silently drops the restart checks
            seen[0] = Crash(f"{armed} driver crashes were asked for (crash_at) but {fired} happened")
        return seen
    finally:
        live.finish(run, base)


def _processed(run: Any, under: UserOperatorUnderTest, index: int) -> bool:
    """Let the query process file ``index``: True, or False when it died of the crash it was
    asked for; a death in the user's code is a :class:`UserCodeError`, any other re-raised."""
    try:
        run.process_all_available()
    except Exception as error:  # noqa: BLE001 - the query died: whose fault?
        if run.expected_failure():
            return False
        frame = user_frame_in(under, f"{error}\n{error.__cause__ or ''}")
        if frame is None:
            raise
        raise UserCodeError(f"the operator {under.op.name!r} ({under.target}) raised in {frame} on the "
                            f"live front end (file {index}, the query stopped): "
                            f"{describe(error).partition(': ')[2]}") from None
    return True


def live_engine(under: UserOperatorUnderTest, spark: Any = None, timeout_s: float = TIMEOUT_S,
                faults: frozenset[str] = frozenset()) -> Guard[dict[str, Any], Outputs | Crash]:
    """:func:`run_live` (with the seeded ``faults``) under the suite's watchdog and crash
    isolation (a crash is bisected down to the case that causes it)."""
    session = shared_session(spark)
    return Guard(lambda cases: run_live(session(), under, cases, faults=faults), timeout_s,
                 on_hang=lambda: session().sparkContext.cancelAllJobs())
