"""The live DGS front end's rows (``spark_impl/dgs/streaming_input.py``, "Rows"; ``parse_row``
and ``group_rows``): a micro-batch's JSON rows read back as ``(stream, item)`` per job, and a
malformed row is refused with an InputError located at its batch and row (docs/dgs.md, the
streams file's item format; a row holds either an event or ``"heartbeat": true``)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from spark_impl.dgs.streaming_input import group_rows

from conformance.core.refusals import refused
from conformance.dgs.cases import DgsCase, draw_dgs_cases
from conformance.dgs.engines.live import case_chunks

CASES = draw_dgs_cases(12, 0)


def rows_of(case: DgsCase, job: int) -> list[dict[str, Any]]:
    """The case's rows as the live engine writes them, for job ``job`` of a query."""
    return [{"job": job, **row} if job else row for chunk in case_chunks(case) for row in chunk]


def item_of(case: DgsCase, row: dict[str, Any]) -> Any:
    return next(item for item in case.streams[row["stream"]] if item.ts == row["ts"])


@pytest.mark.parametrize("job", range(len(CASES)))
def test_each_jobs_rows_read_back_as_its_items(job: int) -> None:
    case = CASES[job]
    rows = rows_of(case, job)
    got = group_rows([json.dumps(row) for row in rows], len(CASES), job)
    assert got[job] == [(row["stream"], item_of(case, row)) for row in rows]
    assert not any(got[j] for j in range(len(CASES)) if j != job)


EVENT = next(row for row in rows_of(CASES[0], 0) if "event" in row)
BEAT = next(row for row in rows_of(CASES[0], 0) if "heartbeat" in row)
JOBS = 3


def without(row: dict[str, Any], key: str) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k != key}


MALFORMED: list[tuple[str, Any]] = [(what, json.dumps(row)) for what, row in [
    ("an event row with heartbeat true", {**EVENT, "heartbeat": True}),
    ("an event row with heartbeat false", {**EVENT, "heartbeat": False}),
    ("a heartbeat row with heartbeat false", {**BEAT, "heartbeat": False}),
    ("a heartbeat row with heartbeat 1", {**BEAT, "heartbeat": 1}),
    ("a row with neither event nor heartbeat", without(BEAT, "heartbeat")),
    ("a row without stream", without(EVENT, "stream")),
    ("a row without ts", without(BEAT, "ts")),
    ("a row with an unknown key", {**BEAT, "heartbeats": True}),
    ("a row of the job just out of range", {**BEAT, "job": JOBS}),
    ("a row of job -1", {**EVENT, "job": -1}),
    ("a row of a job far out of range", {**EVENT, "job": JOBS + 3}),
    ("a row whose job is not an integer", {**BEAT, "job": "0"}),
    ("a row whose ts is not an integer", {**EVENT, "ts": str(EVENT["ts"])}),
    ("a row whose stream is not a string", {**BEAT, "stream": 0}),
]] + [("a row that is not an object", json.dumps([BEAT])), ("a row that is not JSON", "{\"stream\": "),
      ("a row that is bytes", json.dumps(BEAT).encode()), ("a row that is None", None)]


@pytest.mark.parametrize("what, text", MALFORMED, ids=[what for what, _ in MALFORMED])
def test_a_malformed_row_is_refused_at_its_batch_and_row(what: str, text: Any) -> None:
    assert refused(lambda: group_rows([json.dumps(BEAT), text], JOBS, 7), "batch 7, row 1", what) is None
