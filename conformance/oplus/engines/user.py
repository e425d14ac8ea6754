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
  operator loaded on the workers from the file as in production), ``k`` items of each list per
  file, a last file ending every list, every reconfiguration requested before the first file
  (``run.rescale(q, job=i, watermark=w)``: applied at the first batch whose watermark reaches
  ``w``), rows read back from the Parquet sink.

A user function that raises is the user's fault, never a hang: on the reference the exception
is caught and named (:func:`user_fault`: which of the operator's functions raised, where, on
what); on Spark the failed batch stops the query and ``process_all_available`` raises at once
(the batch's error names the frame of the user's file), and the suite's watchdog bounds the
whole call (:data:`TIMEOUT_S`).
"""

from __future__ import annotations

import json
import os
import random
import shutil
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

from spark_impl.reconfig.sinks import column_converter

from conformance.core.crashes import Guard, describe
from conformance.core.session import shared_session
from conformance.oplus.engines import live
from conformance.oplus.user_cases import Field

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
    of the fields' values (``spark_impl.oplus.user_operator``)."""
    values = tuple(item[f.name] for f in under.fields)
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


_SCHEMA = "job int, source int, seq long, ts long, end boolean"


def files_of(under: UserOperatorUnderTest, cases: Sequence[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """File ``f`` carries items ``f*k .. f*k + k - 1`` of every list of every case; a last file
    ends every list."""
    out: list[list[dict[str, Any]]] = []
    for job, case in enumerate(cases):
        size = case["items_per_round"]
        for source, items in enumerate(case["inputs"]):
            for position, item in enumerate(items):
                while len(out) <= position // size:
                    out.append([])
                out[position // size].append({"job": job, "source": source, "seq": position, **item})
    ends = [{"job": j, "source": s, "end": True} for j, c in enumerate(cases) for s in range(len(c["inputs"]))]
    return out + [ends]


def run_live(spark: Any, under: UserOperatorUnderTest, cases: Sequence[dict[str, Any]],
             workdir: str | None = None) -> list[Outputs]:
    """Every case through one live query (module docstring); the outputs per case."""
    import spark_impl.oplus.streaming_jobs as oplus_jobs
    from spark_impl.oplus.streaming import start_oplus_query
    from spark_impl.reconfig.sinks import ParquetSink

    if not cases:
        return []
    names = tuple(f.name for f in under.fields)
    jobs = [oplus_jobs.oplus_job(under.target, parallelism=c["parallelism"], fields=names,
                                 sources=under.op.inputs) for c in cases]
    schema = _SCHEMA + "".join(f", {f.name} {'string' if f.kind == 'str' else 'long'}" for f in under.fields)
    base = tempfile.mkdtemp(prefix="streamproof-oplus-user-", dir=workdir)
    source_dir, checkpoint, table = (os.path.join(base, n) for n in ("in", "ckpt", "out"))
    os.makedirs(source_dir)
    stream = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).json(source_dir)
    run = start_oplus_query(spark, stream, jobs, checkpoint_dir=checkpoint, sink=ParquetSink(table))
    try:
        for job, case in enumerate(cases):
            for change in case["reconfigurations"]:
                run.rescale(change["parallelism"], job=job, watermark=change["watermark"])
        for index, rows in enumerate(files_of(under, cases)):
            path = os.path.join(base, f".landing-{index}.json")
            with open(path, "w", encoding="utf-8") as handle:
                handle.writelines(json.dumps(row) + "\n" for row in rows)
            os.replace(path, os.path.join(source_dir, f"part-{index:05d}.json"))
            try:
                run.process_all_available()
            except Exception as error:  # noqa: BLE001 - the query died: whose fault?
                frame = user_frame_in(under, f"{error}\n{error.__cause__ or ''}")
                if frame is None:
                    raise
                raise UserCodeError(f"the operator {under.op.name!r} ({under.target}) raised in {frame} on the "
                                    f"live front end (file {index}, the query stopped): "
                                    f"{describe(error).partition(': ')[2]}") from None
        run.stop()
        seen: list[Outputs] = [Counter() for _ in cases]
        if os.path.exists(table):
            for r in spark.read.parquet(table).select("job", "ts", "value").collect():
                seen[int(r["job"])][(int(r["ts"]), str(r["value"]))] += 1
        return seen
    finally:
        live.finish(run, base)


def live_engine(under: UserOperatorUnderTest, spark: Any = None, timeout_s: float = TIMEOUT_S
                ) -> Guard[dict[str, Any], Outputs]:
    """:func:`run_live` under the suite's watchdog and crash isolation (a crash is bisected
    down to the case that causes it)."""
    session = shared_session(spark)
    return Guard(lambda cases: run_live(session(), under, cases), timeout_s,
                 on_hang=lambda: session().sparkContext.cancelAllJobs())
