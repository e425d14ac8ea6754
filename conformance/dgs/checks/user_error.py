"""The DGS suite's check of a user function that raises inside a Spark task.

Both DGS executors promise (``spark_impl.dgs.driver`` and ``spark_impl.dgs.streaming``
docstrings) that a user function raising in a task stops the run with the program's one-line
error - an :class:`~spec.errors.InputError` (bad input, exit 2) - "never a half-run stream
without a message". The drawn cases are all well-formed, so no default run ever took that
path. Here one bad event goes through each executor: a case of the order-sensitive ``Concat``
example whose first event appends the *number* 5 to a key's string (its tag is valid, so the
driver releases it and a task's ``update`` raises ``TypeError``), on the case's own forked
plan, and heartbeats after it. Oracle (``error``): the run raises InputError and its message is
the sequential program's (``spec.dgs.semantics.spec_run`` on the same input) from ``raised``
on - the same exception on the same state and event; the worker's state type in front of it
may differ (``Back`` at a leaf, ``Whole`` for the sequential program).

* batch: :func:`spark_impl.dgs.run_dgs_many` on that one job;
* live (with the live check): a query of that one job on one file
  (:func:`spark_impl.dgs.streaming.start_dgs_query`), ``process_all`` must raise it.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from typing import Any, Callable, Sequence

from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, Item, StreamEvent, Streams, sort_streams
from spec.errors import InputError

from reference.dgs.examples import target

from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.core.session import shared_session
from conformance.dgs.cases import STREAMS, DgsCase, program_of

CHECK = "spark user error in a task vs the sequential program's"
PROGRAM = "concat.py:Concat"


def bad_input(case: DgsCase) -> Streams:
    """``case``'s program fed one event appending the number 5 (module docstring) on a stream
    whose ``app`` tag the plan handles, then a heartbeat on every stream."""
    impls: list[tuple[Any, str]] = [impl for w in case.plan.workers() for impl in w.impl_tags]
    owned = sorted((impl for impl in impls if impl[0][0] == "app"), key=repr)
    tag, stream = owned[0]
    streams: dict[str, list[Item]] = {s: [Heartbeat(1)] for s in STREAMS}
    streams[stream] = [StreamEvent(0, (tag[0], tag[1], 5)), Heartbeat(1)]
    return streams


def _expected(case: DgsCase, streams: Streams) -> str:
    try:
        spec_run(program_of(case.name), sort_streams(streams))
    except InputError as error:
        return str(error)
    raise AssertionError("the sequential program accepted the bad event")


def problem(run: Callable[[], Any], expected: str, what: str) -> str | None:
    """None when ``run()`` raises InputError whose message is ``expected`` from ``raised`` on."""
    tail = expected[expected.index("raised "):]
    try:
        run()
    except InputError as error:
        text = str(error)
        if "\n" not in text and text.endswith(tail) and text.startswith(PROGRAM.split(":")[1] + "."):
            return None
        return f"{what}: the run stopped with {text!r}, expected the user's error ... {tail!r}"
    except Exception as error:  # noqa: BLE001 - anything but InputError is the executor's bug
        first = (str(error).splitlines() or [""])[0]
        return f"{what}: the run raised {type(error).__name__} ({first[:200]}), expected InputError ... {tail!r}"
    return f"{what}: the run ended without an error, expected InputError ... {tail!r}"


def _live(spark: Any, case: DgsCase, streams: Streams) -> None:
    from spark_impl.dgs.streaming import LiveJob, start_dgs_query

    root = tempfile.mkdtemp(prefix="streamproof-dgs-user-error-")
    try:
        inbox = os.path.join(root, "in")
        os.makedirs(inbox)
        with open(os.path.join(inbox, "f0000.json"), "w", encoding="utf-8") as handle:
            for stream, items in sorted(streams.items()):
                for item in items:
                    row: dict[str, Any] = {"stream": stream, "ts": item.ts}
                    row.update({"event": list(item.payload)} if isinstance(item, StreamEvent) else {"heartbeat": True})
                    handle.write(json.dumps(row) + "\n")
        run = start_dgs_query(spark, [LiveJob(target(case.name), case.plan)], spark.readStream.text(inbox),
                              checkpoint_dir=os.path.join(root, "ckpt"))
        try:
            run.process_all()
        finally:
            run.stop()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_check(drawn: Sequence[DgsCase], spark: Any, live: bool, result: SuiteResult) -> CheckResult:
    """The batch (and, with ``live``, the live) run of the bad input (module docstring)."""
    from spark_impl.dgs import DgsJob, run_dgs_many

    start = time.monotonic()
    case = next((c for c in drawn if c.name == PROGRAM), None)
    if case is None:
        return CheckResult(CHECK, status="unavailable", note=f"no {PROGRAM} case drawn (fewer than 6 cases)")
    session = shared_session(spark)()
    streams = bad_input(case)
    expected = _expected(case, streams)
    runs: list[tuple[str, Callable[[], Any]]] = [
        ("batch", lambda: run_dgs_many(session, [DgsJob(target(case.name), case.plan, streams)]))]
    if live:
        runs.append(("live", lambda: _live(session, case, streams)))
    found = [p for what, run in runs for p in [problem(run, expected, what)] if p is not None]
    checked = CheckResult(CHECK, cases=len(runs), failed=len(found), elapsed_s=time.monotonic() - start)
    if found:
        checked.oracle_failures["error"] += len(found)
        result.failures.append(FailureReport(CHECK, drawn.index(case), ("error",), "\n".join(found), 1, 1, 0,
                                             {"program": case.name, "plan": case.plan.to_json()}))
    return checked
