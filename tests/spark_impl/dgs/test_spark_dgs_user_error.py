"""A user function that raises inside a Spark task stops a DGS run with the program's one-line
error (``spark_impl.dgs.driver`` and ``spark_impl.dgs.streaming`` docstrings: "A user function
that raises in a task stops the run with the program's one-line error (InputError), never a
half-run stream without a message"; ``process_all`` "raises it as the program's one-line
InputError").

The bad input: a case of the order-sensitive ``Concat`` example whose first event appends the
*number* 5 to a key's string (its tag is valid, so the driver releases it and a task's
``update`` raises TypeError), on the case's own forked plan, heartbeats after it. The error is
the sequential program's (``spec.dgs.semantics.spec_run`` on the same input) from ``raised``
on - the same exception on the same state and event; the worker's state type in front of it
may differ (``Back`` at a leaf, ``Whole`` for the sequential program).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Callable

import pytest

from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, Item, StreamEvent, Streams, sort_streams
from spec.errors import InputError

from reference.dgs.examples import target

from conformance.dgs.cases import STREAMS, DgsCase, draw_dgs_cases, program_of
from spark_impl.dgs import DgsJob, run_dgs_many
from spark_impl.dgs.streaming import LiveJob, start_dgs_query

PROGRAM = "concat.py:Concat"
CASE = next(c for c in draw_dgs_cases(6, 0) if c.name == PROGRAM)


def bad_input(case: DgsCase) -> Streams:
    """One event appending the number 5 on a stream whose ``app`` tag the plan handles, then a
    heartbeat on every stream."""
    impls: list[tuple[Any, str]] = [impl for w in case.plan.workers() for impl in w.impl_tags]
    tag, stream = sorted((impl for impl in impls if impl[0][0] == "app"), key=repr)[0]
    streams: dict[str, list[Item]] = {s: [Heartbeat(1)] for s in STREAMS}
    streams[stream] = [StreamEvent(0, (tag[0], tag[1], 5)), Heartbeat(1)]
    return streams


STREAMS_IN = bad_input(CASE)


def sequential_error() -> str:
    with pytest.raises(InputError) as raised:
        spec_run(program_of(CASE.name), sort_streams(STREAMS_IN))
    return str(raised.value)


def assert_stops_with_the_users_error(run: Callable[[], Any]) -> None:
    expected = sequential_error()
    tail = expected[expected.index("raised "):]
    with pytest.raises(InputError) as raised:
        run()
    text = str(raised.value)
    assert "\n" not in text and text.startswith("Concat.") and text.endswith(tail), text


@pytest.mark.spark
def test_the_batch_executor_stops_with_the_programs_one_line_error(spark: Any) -> None:
    assert_stops_with_the_users_error(lambda: run_dgs_many(spark, [DgsJob(target(CASE.name), CASE.plan, STREAMS_IN)]))


@pytest.mark.spark
def test_process_all_of_a_live_query_raises_the_programs_one_line_error(spark: Any, tmp_path: Path) -> None:
    inbox = tmp_path / "in"
    inbox.mkdir()
    lines = []
    for stream, items in sorted(STREAMS_IN.items()):
        for item in items:
            row: dict[str, Any] = {"stream": stream, "ts": item.ts}
            row.update({"event": list(item.payload)} if isinstance(item, StreamEvent) else {"heartbeat": True})
            lines.append(json.dumps(row))
    (inbox / "f0000.json").write_text("\n".join(lines) + "\n", encoding="utf-8")
    run = start_dgs_query(spark, [LiveJob(target(CASE.name), CASE.plan)], spark.readStream.text(str(inbox)),
                          checkpoint_dir=str(tmp_path / "ckpt"))
    try:
        assert_stops_with_the_users_error(run.process_all)
    finally:
        run.stop()
