"""The DGS suite's checks of the live front end's contracts that need no Spark.

The live DGS check (:mod:`conformance.dgs.engines.live`) feeds well-formed rows to a query that
always starts on good arguments, keeps its records and never runs long enough to forget its
bookkeeping; so the front end's refusals, its retention and its ``keyed_plan`` are never
exercised by it, and a bug there changes no output of the suite's runs. This check calls
them directly, on the drawn cases (``python -c`` speed: no Spark, no query):

* **rows** (:func:`~spark_impl.dgs.streaming_input.group_rows`): every case's items, written as
  the live check writes them (several jobs), come back as the same ``(job, stream, item)``; a
  row with both ``"event"`` and ``"heartbeat"``, with ``"heartbeat": false`` or not a
  boolean, with neither, without ``stream`` or ``ts``, with an unknown key, a job index out of
  range or not an integer, a timestamp or stream of the wrong type, not an object, not JSON,
  or not a string is refused with InputError located at its batch and row;
* **mailbox** (:func:`~spark_impl.dgs.streaming_input.receive`, one call per file of the live
  check): each call releases events in key order, every event once over the calls, dependent
  events in key order, nothing left when every stream ended with a heartbeat, and each call
  releases exactly what the release rule of ``spark_impl/dgs/release.py``'s docstring releases
  (recomputed here: holding an event longer keeps every output right); an item whose
  timestamp is not after its stream's previous item (at it or before it) is refused, naming
  the batch, and leaves the mailbox as it was - also when items before it in the batch were
  taken (:func:`_refused_batch_problem`); every file fed again, to a second mailbox, with its
  rows in reverse order releases the same events and is not refused ("a micro-batch's items
  of a stream are taken in timestamp order": the live check writes rows in arrival order,
  which is already stream order); an event on a stream no worker handles is refused with
  InputError naming the stream, by the live mailbox (leaving it as it was) and by the batch
  schedule (:func:`_unknown_stream_problem`);
* **start** (:func:`~spark_impl.dgs.streaming.start_dgs_query` before any Spark call): a source
  that is not streaming, a missing column, no jobs, an unknown crash point, a filesystem URI
  without ``query_checkpoint``, an unopenable checkpoint, a checkpoint of the older layout and
  a checkpoint of other jobs (``inline_below`` differs) are refused with InputError;
  ``replan`` refuses a job index out of range and a P-invalid plan (leaving nothing pending)
  and queues a valid one; the run's bookkeeping lists keep the last ``REMEMBERED`` entries;
* **checkpoint** (:class:`~spark_impl.dgs.streaming_store.Store` on a temporary directory):
  the two newest commit records are kept, ``read`` returns the newest commit (mailboxes
  included), ``records(b)`` the records of the
  batches up to ``b`` in batch order, ``prune`` keeps only the committed states and deletes
  the records of delivered batches unless ``keep_records``, ``fresh`` empties a location;
* **keyed plans** (:func:`~spark_impl.dgs.streaming_plan.keyed_plan` vs its docstring): on
  every shipped consistent program, 1-5 leaves, the default key and two others, every
  implementation tag is owned once; a dependence component whose keys all route
  (``spark_impl.keys.route``) to one leaf is on that leaf, any other at the root; the plan is
  :func:`~spark_impl.dgs.plans.balanced_plan`'s for those sets (checked with
  :func:`conformance.dgs.checks.plans.problem`); fewer than one leaf is refused.
"""

from __future__ import annotations

import json
import math
import os
import shutil
import tempfile
import time
from dataclasses import replace
from typing import Any, Callable, Hashable, Sequence

from spec.dgs.streams import Heartbeat, Item, StreamEvent, value_to_json
from spec.errors import InputError

from reference.dgs.examples import CONSISTENT, target

from conformance.core.refusals import refused
from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.dgs.cases import STREAMS, DgsCase, program_of
from conformance.dgs.checks.plans import problem as shape_problem
from conformance.dgs.checks.plans import unknown_tag
from conformance.dgs.engines.live import case_chunks
from conformance.standin.streaming import Frame

CHECK = "spark-streaming front end contracts vs their definitions (no Spark)"


def _rows(case: DgsCase, job: int) -> list[list[dict[str, Any]]]:
    return [[{"job": job, **row} if job else row for row in chunk] for chunk in case_chunks(case)]


def _malformed(event: dict[str, Any], beat: dict[str, Any], jobs: int) -> list[tuple[str, Any]]:
    """Rows the front end must refuse (module docstring), each with what is wrong."""
    def without(row: dict[str, Any], key: str) -> dict[str, Any]:
        return {k: v for k, v in row.items() if k != key}

    rows: list[tuple[str, Any]] = [
        ("an event row with \"heartbeat\": true", {**event, "heartbeat": True}),
        ("an event row with \"heartbeat\": false", {**event, "heartbeat": False}),
        ("a heartbeat row with \"heartbeat\": false", {**beat, "heartbeat": False}),
        ("a heartbeat row with \"heartbeat\": 1", {**beat, "heartbeat": 1}),
        ("a row with neither event nor heartbeat", without(beat, "heartbeat")),
        ("a row without stream", without(event, "stream")), ("a row without ts", without(beat, "ts")),
        ("a row with an unknown key", {**beat, "heartbeats": True}),
        ("a row of a job out of range", {**beat, "job": jobs}), ("a row of job -1", {**event, "job": -1}),
        ("a row of a job far out of range", {**event, "job": jobs + 3}),  # not only the bound itself
        ("a row whose job is not an integer", {**beat, "job": "0"}),
        ("a row whose ts is not an integer", {**event, "ts": str(event["ts"])}),
        ("a row whose stream is not a string", {**beat, "stream": 0}),
    ]
    return [(what, json.dumps(row)) for what, row in rows] + [
        ("a row that is not an object", json.dumps([beat])), ("a row that is not JSON", "{\"stream\": "),
        ("a row that is bytes", json.dumps(beat).encode()), ("a row that is None", None)]


def input_problems(cases: Sequence[DgsCase]) -> list[str]:
    """The rows contract (module docstring) on ``cases`` as the jobs of one query."""
    from spark_impl.dgs.streaming_input import group_rows

    found: list[str] = []
    jobs = len(cases)
    for job, case in enumerate(cases):
        rows = [row for chunk in _rows(case, job) for row in chunk]
        expected = [(row["stream"], _item(case, row)) for row in rows]
        try:
            got = group_rows([json.dumps(row) for row in rows], jobs, job)
        except Exception as error:  # noqa: BLE001 - refusing good rows is a finding
            found.append(f"case {job}: its rows were refused: {type(error).__name__}: {error}")
            continue
        if got[job] != expected or any(got[j] for j in range(jobs) if j != job):
            found.append(f"case {job}: its rows read back as {got[job][:3]}..., expected {expected[:3]}...")
    event = next(({"job": j, **r} for j, c in enumerate(cases) for r in _rows(c, 0)[0][:50] if "event" in r), None)
    beat = next(({"job": j, **r} for j, c in enumerate(cases) for r in _rows(c, 0)[0][:50] if "heartbeat" in r), None)
    if event is None or beat is None:
        return found
    for what, text in _malformed(event, beat, jobs):
        found += [p for p in [refused(lambda: group_rows([json.dumps(beat), text], jobs, 7), "batch 7, row 1", what)]
                  if p is not None]
    return found


def _item(case: DgsCase, row: dict[str, Any]) -> Any:
    return next(item for item in case.streams[row["stream"]] if item.ts == row["ts"])


def release_rule_problem(program: Any, case: DgsCase, box: Any, released: Sequence[Any]) -> str | None:
    """None when a micro-batch released exactly what the release rule of
    ``spark_impl/dgs/release.py``'s docstring releases: every released event ``e``
    (key ``k``, tag ``(σ, s)``) has every stream of ``D(σ, s)`` - ``s`` and the streams of the
    plan's tags dependent on σ, computed here from the plan - at a timer ``>= k``, and no held
    event with a smaller key and a dependent tag; every held event lacks one of the two (so the
    released set is the largest the rule allows, not merely a safe one)."""
    far = (-math.inf, "")
    impl = [pair for worker in case.plan.workers() for pair in worker.impl_tags]

    def ready(e: Any) -> bool:
        streams = {e.stream} | {s for tag, s in impl if program.depends(e.tag, tag)}
        return all(box.timers.get(s, far) >= e.key for s in streams)

    def blocked(e: Any) -> bool:
        return any(f.key < e.key and program.depends(f.tag, e.tag) for f in box.buffered)

    for e in released:
        if not ready(e) or blocked(e):
            return f"released the event at {e.key}, which the release rule holds"
    for e in box.buffered:
        if ready(e) and not blocked(e):
            return f"held the event at {e.key}, which the release rule releases"
    return None


def mailbox_problems(cases: Sequence[DgsCase]) -> list[str]:
    """The mailbox contract (module docstring), one job per case, one call per file."""
    from spark_impl.dgs.streaming_input import Mailbox, group_rows, receive
    from spark_impl.dgs.topology import topology

    found: list[str] = []
    for index, case in enumerate(cases):
        program = program_of(case.name)
        topo = topology(program, case.plan)
        box = Mailbox()
        back: Mailbox | None = Mailbox()  # the same files, each in reverse order (None once refused)
        seen: list[tuple[int, Any]] = []
        for number, chunk in enumerate(_rows(case, 0)):
            items = group_rows([json.dumps(row) for row in chunk], 1, number)[0]
            released = receive(program, topo, box, items, f"file {number}")
            if back is not None:
                problem = _reversed_problem(program, topo, back, items, released, f"case {index}: file {number}")
                if problem is not None:
                    found.append(problem)
                    back = None
            keys = [e.key for e in released]
            if keys != sorted(keys):
                found.append(f"case {index}: file {number} released {keys[:6]}, not in key order")
            wrong = release_rule_problem(program, case, box, released)
            if wrong is not None:
                found.append(f"case {index}: file {number}: {wrong}")
            seen += [(number, key) for key in keys]
        wanted = sorted((item.ts, stream) for stream, items in case.streams.items() for item in items
                        if isinstance(item, StreamEvent))
        if sorted(key for _, key in seen) != wanted or box.buffered:
            found.append(f"case {index}: released {len(seen)} events ({len(box.buffered)} still held), "
                         f"the input has {len(wanted)}, every stream ending with a heartbeat")
            continue
        tags = {(item.ts, stream): program.tag(item.payload) for stream, items in case.streams.items()
                for item in items if isinstance(item, StreamEvent)}
        when = {key: number for number, key in seen}
        late = [(a, b) for a in wanted for b in wanted if a < b and when[a] > when[b]
                and program.depends(tags[a], tags[b])]
        if late:
            found.append(f"case {index}: dependent events {late[0]} released out of key order")
        found += _stale_problem(index, case, program, topo, box)
        found += _unknown_stream_problem(index, case, program, topo, box)
        found += _refused_batch_problem(index, case, program, topo, box)
    return found


def _reversed_problem(program: Any, topo: Any, back: Any, items: Sequence[Any], released: Sequence[Any],
                      what: str) -> str | None:
    """None when ``items`` (one file's, in arrival order), reversed, are taken by the mailbox
    ``back`` and release ``released`` (what the file in its own order released): ``receive``
    takes "a micro-batch's items of a stream ... in timestamp order", whatever their row order.
    The live check writes each file in arrival order, so a ``receive`` that took the rows as
    they come (or sorted them by stream only) never met a row out of order."""
    from spark_impl.dgs.streaming_input import receive

    try:
        again = receive(program, topo, back, list(reversed(items)), "reversed")
    except InputError as error:
        return f"{what} with its rows in reverse order (a valid micro-batch) was refused: {error}"
    if again != list(released):
        return (f"{what} with its rows in reverse order released {[e.key for e in again][:6]}, in file order "
                f"{[e.key for e in released][:6]}")
    return None


def _unknown_stream_problem(index: int, case: DgsCase, program: Any, topo: Any, box: Any) -> list[str]:
    """``Topology.worker_of``: "The worker responsible for ``(tag, stream)``; InputError if none
    is." A case's first event sent again on a stream ``s9`` of no implementation tag of the plan
    is refused with InputError naming ``'s9'`` (not a KeyError: a crash, not the CLI's one-line
    bad-input error), by ``release_schedule`` (the event before every item, ``s9`` ending with a
    heartbeat after every item: a valid instance, Def. 3.3) and by ``receive`` after the case
    (with a heartbeat of every stream in the same batch, taken before it), which leaves the
    mailbox as it was. Every drawn event is one some worker handles, so no run met one."""
    from spark_impl.dgs.release import Arrival, release_schedule
    from spark_impl.dgs.streaming_input import receive

    first = min(((item.ts, stream, item) for stream, items in case.streams.items() for item in items
                 if isinstance(item, StreamEvent)), key=lambda entry: entry[:2], default=None)
    if first is None:
        return []
    payload = first[2].payload
    every = [item.ts for items in case.streams.values() for item in items]
    streams: dict[str, Sequence[Item]] = {**case.streams,
                                          "s9": [StreamEvent(min(every) - 1, payload), Heartbeat(max(every) + 1)]}
    found = [p for p in [refused(lambda: release_schedule(program, topo, streams, Arrival(), 1_000_000), None,
                                 f"case {index}: release_schedule with an event on stream s9, which no worker handles",
                                 "'s9'")] if p is not None]
    last = max(ts for ts, _ in box.timers.values())
    batch: list[tuple[str, Item]] = [(stream, Heartbeat(last + 1)) for stream in sorted(box.timers)]
    batch.append(("s9", StreamEvent(last + 1, payload)))
    before = (dict(box.timers), list(box.buffered))
    problem = refused(lambda: receive(program, topo, box, batch, "file 9"), None,
                      f"case {index}: a micro-batch with an event on stream s9, which no worker handles", "'s9'")
    if problem is None and (box.timers, box.buffered) != before:
        problem = f"case {index}: a micro-batch refused for stream s9 changed the mailbox ({before[0]} -> {box.timers})"
    return found + ([problem] if problem is not None else [])


def _refused_batch_problem(index: int, case: DgsCase, program: Any, topo: Any, box: Any) -> list[str]:
    """``receive``: "``mailbox`` is updated in place; on InputError it is unchanged." After the
    case, a heartbeat of stream ``a`` at ``T + 5`` (``T`` the latest timer) is taken; then a
    batch of an event of another stream ``x`` at ``T + 1`` and a heartbeat of ``a`` at ``T + 3``
    is refused - after the event was taken (items in timestamp order) - and must leave the
    timers and the held events as they were. :func:`_stale_problem`'s batches are refused at
    their first item (every stream ends at about the same timestamp, its other heartbeat comes
    later), so a ``receive`` working on the mailbox's own timers or event list passed it."""
    from spark_impl.dgs.streaming_input import receive

    event = next(((stream, item) for stream, items in sorted(case.streams.items()) for item in items
                  if isinstance(item, StreamEvent)), None)
    if event is None:
        return []
    stream, item = event
    other = next(s for s in STREAMS if s != stream)
    last = max(ts for ts, _ in box.timers.values())
    receive(program, topo, box, [(other, Heartbeat(last + 5))], "file 10")
    before = (dict(box.timers), list(box.buffered))
    batch: list[tuple[str, Item]] = [(stream, StreamEvent(last + 1, item.payload)), (other, Heartbeat(last + 3))]
    problem = refused(lambda: receive(program, topo, box, batch, "file 11"), "file 11",
                      f"case {index}: a heartbeat of {other} at {last + 3}, after one at {last + 5}, behind an event "
                      f"of {stream} at {last + 1}", f"(ts {last + 5})")
    if problem is None and (box.timers, box.buffered) != before:
        problem = (f"case {index}: a micro-batch refused after taking an event changed the mailbox: timers "
                   f"{before[0]} -> {box.timers}, {len(before[1])} -> {len(box.buffered)} events held")
    return [problem] if problem is not None else []


def _stale_problem(index: int, case: DgsCase, program: Any, topo: Any, box: Any) -> list[str]:
    """An item not after its stream's timer is refused and leaves ``box`` unchanged."""
    from spark_impl.dgs.streaming_input import receive

    stream, (ts, _) = max(box.timers.items(), key=lambda entry: entry[1])
    other = next(s for s in STREAMS if s != stream)
    before = (dict(box.timers), list(box.buffered))
    for stale, what in ((ts, "at its own last ts"), (ts - 1, "before its own last ts")):  # the bound and beyond
        batch = [(other, Heartbeat(box.timers[other][0] + 1)), (stream, Heartbeat(stale))]
        problem = refused(lambda: receive(program, topo, box, batch, "file 9"), "file 9",
                          f"case {index}: a heartbeat of {stream} {what} {ts}", f"(ts {ts})")
        if problem is None and (box.timers, box.buffered) != before:
            problem = f"case {index}: a refused micro-batch changed the mailbox ({before[0]} -> {box.timers})"
        if problem is not None:
            return [problem]
    return []


class _Source:
    """A stand-in for a streaming DataFrame: what start_dgs_query reads before Spark."""

    def __init__(self, streaming: bool = True) -> None:
        self.isStreaming, self.columns = streaming, ["value"]


def start_problems(case: DgsCase, root: str) -> list[str]:
    """The start and re-plan contract (module docstring); ``root``: an empty directory."""
    from spark_impl.dgs.streaming import DgsStreamingRun, LiveJob, _keep_last, start_dgs_query
    from spark_impl.dgs.streaming_input import Mailbox
    from spark_impl.dgs.streaming_store import Commit, Store
    from spark_impl.dgs.tasks import Layout
    from spark_impl.dgs.topology import topology
    from spark_impl.reconfig.streaming import REMEMBERED

    job = LiveJob(target(case.name), case.plan, case.inline_below)
    other = os.path.join(root, "other")
    Store(os.path.join(other, "dgs")).write(Commit([(job.target, case.plan.to_json(), job.inline_below + 1)],
                                                   mailboxes=[Mailbox()]))
    old = os.path.join(root, "old")
    os.makedirs(os.path.join(old, "dgs"))
    with open(os.path.join(old, "dgs", "commit.pkl"), "wb") as handle:
        handle.write(b"an old layout")

    def start(jobs: Sequence[Any] = (job,), source: Any = None, **options: Any) -> Any:
        options.setdefault("checkpoint_dir", os.path.join(root, "new"))
        return start_dgs_query(None, jobs, source or _Source(), **options)

    attempts: list[tuple[str, Callable[[], Any], str | None]] = [
        ("a source that is not streaming", lambda: start(source=_Source(False)), None),
        ("a missing column", lambda: start(column="text"), None),
        ("no jobs", lambda: start(()), None),
        ("an unknown crash point", lambda: start(crash_at="before-deliver"), None),
        ("an s3:// checkpoint without query_checkpoint", lambda: start(checkpoint_dir="s3://nowhere/ckpt"),
         "query_checkpoint"),
        ("a checkpoint of an unknown filesystem", lambda: start(checkpoint_dir="nosuchfs://nowhere/ckpt",
                                                               query_checkpoint=os.path.join(root, "q")),
         "checkpoint_dir"),
        ("a checkpoint of the old layout (a bare dgs/commit.pkl)", lambda: start(checkpoint_dir=old), "checkpoint_dir"),
        ("a checkpoint of other jobs (another inline_below), with a crash point",
         lambda: start(checkpoint_dir=other, crash_at="after-deliver"), os.path.abspath(other)),
    ]
    found = [p for what, call, where in attempts for p in [refused(call, where, f"starting with {what}")]
             if p is not None]
    program = program_of(case.name)
    topo = topology(program, case.plan)
    run = DgsStreamingRun(None, Store(os.path.join(root, "run")), Layout((job.target,), (topo,)), [program], [job],
                          None, False)
    bad = unknown_tag(case.plan, "s0")
    for what, call, where in (("a re-plan of job 1 of 1", lambda: run.replan(case.plan, job=1), "job"),
                              ("a re-plan of job -1", lambda: run.replan(case.plan, job=-1), "job"),
                              ("a re-plan of job 4 of 1", lambda: run.replan(case.plan, job=4), "job"),
                              ("a P-invalid re-plan", lambda: run.replan(bad), None)):
        found += [p for p in [refused(call, where, what)] if p is not None]
    if run.pending:
        found.append(f"refused re-plans left {sorted(run.pending)} pending")
    run.replan(case.plan.to_json(), job=0)
    if list(run.pending) != [0] or run.pending[0].to_json() != case.plan.to_json():
        found.append("a valid re-plan (plan JSON) of job 0 was not queued as that plan")
    found += handle_problems(run, os.path.join(root, "run"))
    entries: list[int] = []
    for n in range(REMEMBERED + 3):
        _keep_last(entries, n)
    if entries != list(range(3, REMEMBERED + 3)):
        found.append(f"after {REMEMBERED + 3} batches the run remembers {len(entries)} of them, from "
                     f"{entries[:1]}: expected the last {REMEMBERED}")
    return found


class _Clock:
    """``time`` for the front end's module: ``perf_counter`` returns the given readings."""

    def __init__(self, *readings: float) -> None:
        self.readings = list(readings)

    def perf_counter(self) -> float:
        return self.readings.pop(0)


class _Query:
    def processAllAvailable(self) -> None:  # noqa: N802 - Spark's name
        raise RuntimeError("py4j: the foreachBatch function failed")


def handle_problems(run: Any, state: str) -> list[str]:
    """``foreachBatch``'s bookkeeping, with no Spark (``run``: a query's run object on the
    checkpoint ``state``, nothing committed): the last committed and delivered batch, replayed,
    is skipped - listed in ``replayed``, not ``batches``, its wall time recorded in ms, nothing
    written (its batch and delivered numbers are equal ints, not one object, as read from a
    record); a malformed row stops the query with its InputError, which ``process_all``
    raises; a batch after ``stop()`` is refused."""
    import spark_impl.dgs.streaming as streaming
    from spark_impl.dgs.streaming_input import Mailbox
    from spark_impl.dgs.streaming_store import Commit
    from spark_impl.reconfig.streaming import StreamStopped

    run.commit(Commit([], int("5000"), "init", [Mailbox() for _ in run.jobs], int("5000")))
    records = run.store.location.list("commits")
    clock = getattr(streaming, "time")
    setattr(streaming, "time", _Clock(100.0, 100.25))
    try:
        run.handle(Frame([]), 5000, "value")
    finally:
        setattr(streaming, "time", clock)
    found = []
    if (run.replayed, run.batches, run.batch_ms) != ([5000], [], {5000: 250.0}):
        found.append(f"the committed batch 5000 replayed in 0.25 s left replayed {run.replayed}, batches "
                     f"{run.batches}, batch_ms {run.batch_ms} (expected [5000], [], {{5000: 250.0}})")
    if run.store.location.list("commits") != records:
        found.append(f"replaying a committed and delivered batch wrote commit records: {records} -> "
                     f"{run.store.location.list('commits')}")
    problem = refused(lambda: run.handle(Frame(["{\"stream\": 1}"]), 5001, "value"), "batch 5001, row 0",
                       "a micro-batch with a malformed row")
    if problem is not None or run.error is None:
        found.append(problem or "a malformed row stopped the batch but the run kept no error")
    run.query = _Query()
    found += [p for p in [refused(run.process_all, "batch 5001, row 0", "process_all after a malformed row")]
              if p is not None]
    run.stopping.set()
    try:
        run.handle(Frame([]), 5002, "value")
        found.append("a batch after stop() was run")
    except StreamStopped:
        pass
    if 5001 in run.batch_ms or 5002 in run.batch_ms or run.committed().batch != 5000:
        found.append(f"refused batches changed the run: batch_ms {run.batch_ms}, committed {run.committed().batch}")
    return found


def store_problems(root: str) -> list[str]:
    """The checkpoint contract (module docstring) on an empty directory ``root``."""
    from spark_impl.dgs.streaming_input import Mailbox
    from spark_impl.dgs.streaming_store import Commit, Store
    from spark_impl.sink import write_part

    store = Store(os.path.join(root, "dgs"))
    found: list[str] = []
    if store.read() is not None:
        found.append("an empty checkpoint has a commit")
    for batch in range(4):
        store.write(Commit([("p.py:P", {"root": batch}, 0)], batch, f"b{batch}", [Mailbox({"s0": (batch, "s0")})],
                           batch - 1))
        for name in (f"b{batch}", "other"):
            os.makedirs(store.fresh(store.states_dir(name)), exist_ok=True)
            with open(os.path.join(store.states_dir(name), "p00000.pkl"), "wb") as handle:
                handle.write(b"x")
        write_part(store.fresh(store.records_dir(batch)), "part-0", [(0, "out", batch)])
    commits = store.location.list("commits")
    if len(commits) != 2:
        found.append(f"after 4 commits the checkpoint keeps {len(commits)} commit records ({commits}), expected the "
                     "two newest")
    newest = store.read()
    if newest is None or (newest.batch, newest.states, newest.delivered, newest.mailboxes[0].timers) != (
            3, "b3", 2, {"s0": (3, "s0")}):
        found.append(f"the newest of 4 commits reads back as {newest}")
    listed = [(batch, records) for batch, records in store.records(2)]
    if listed != [(b, [(0, "out", b)]) for b in range(3)]:
        found.append(f"records up to batch 2 are {listed}, expected batches 0, 1, 2 in order")
    commit = Commit([], 3, "b3", [], 1)
    store.prune(commit, keep_records=True)
    kept = (store.location.list("states"), store.location.list("records"))
    if kept != (["b3"], [f"b{b:012d}" for b in range(4)]):
        found.append(f"prune keeping records left states {kept[0]} and records {kept[1]}")
    store.prune(commit, keep_records=False)
    if store.location.list("records") != [f"b{b:012d}" for b in (2, 3)]:
        found.append(f"prune after delivering batch 1 left records {store.location.list('records')}, expected the "
                     "batches not delivered (2, 3)")
    again = store.fresh(store.records_dir(3))
    if os.listdir(again):
        found.append(f"fresh() left {os.listdir(again)} in a records location")
    return found


def keyed_plan_problems() -> list[str]:
    """``keyed_plan`` vs its docstring (module docstring)."""
    from spark_impl.dgs.streaming_plan import keyed_plan
    from spark_impl.keys import route

    def default_key(tag: Hashable) -> Any:
        return tag[-1] if isinstance(tag, tuple) and tag else tag

    keys: list[tuple[str, Callable[[Hashable], Any] | None, Callable[[Hashable], Any]]] = [
        ("the default key", None, default_key), ("one key", lambda tag: 0, lambda tag: 0),
        ("repr as key", repr, repr)]
    found: list[str] = []
    for name in CONSISTENT:
        program = program_of(name)
        for what, given, key in keys:
            for leaves in range(1, 6):
                try:
                    plan = keyed_plan(program, STREAMS, leaves) if given is None else keyed_plan(
                        program, STREAMS, leaves, given)
                except Exception as error:  # noqa: BLE001 - a crash is a finding
                    found.append(f"keyed_plan({name}, {leaves} leaves, {what}) raised {type(error).__name__}: {error}")
                    continue
                root, leaf = _keyed_sets(program, leaves, key, route)
                wrong = shape_problem((root, leaf, program.initial, None, ("fork", "join"), None), plan)
                if wrong is not None:
                    found.append(f"keyed_plan({name}, {leaves} leaves, {what}): {wrong}")
        found += [p for p in [refused(lambda: keyed_plan(program, STREAMS, 0), "leaves",
                                       f"keyed_plan({name}) with 0 leaves")] if p is not None]
    return found


def _keyed_sets(program: Any, leaves: int, key: Callable[[Hashable], Any],
                route: Callable[[Any, int], int]) -> tuple[list[Any], list[list[Any]]]:
    """Root and leaf implementation tags by the definition: dependence components, routed."""
    left = list(program.sorted_tags)
    root: list[Any] = []
    leaf: list[list[Any]] = [[] for _ in range(leaves)]
    while left:
        component, frontier = {left[0]}, [left[0]]
        while frontier:
            tag = frontier.pop()
            for other in left:
                if other not in component and program.depends(tag, other):
                    component.add(other)
                    frontier.append(other)
        left = [t for t in left if t not in component]
        places = {route(key(tag), leaves) for tag in component}
        impls = [(tag, stream) for tag in component for stream in STREAMS]
        (leaf[places.pop()] if len(places) == 1 else root).extend(impls)
    return root, leaf


def shifted(case: DgsCase, by: int) -> DgsCase:
    """``case`` with every timestamp moved by ``by`` (the same instance otherwise: Def. 3.3 asks
    only that a stream's timestamps increase; a negative one is valid)."""
    return replace(case, streams={stream: [replace(item, ts=item.ts + by) for item in items]
                                  for stream, items in case.streams.items()})


def check(cases: Sequence[DgsCase]) -> list[str]:
    """Every problem of the module docstring's contracts (empty: all kept)."""
    if not cases:
        return []
    root = tempfile.mkdtemp(prefix="streamproof-dgs-contracts-")
    try:
        os.makedirs(os.path.join(root, "start"))
        os.makedirs(os.path.join(root, "store"))
        early = [shifted(case, -10**6) for case in cases[:6]]  # negative timestamps are valid
        return (input_problems(cases) + mailbox_problems(cases) + mailbox_problems(early)
                + start_problems(cases[0], os.path.join(root, "start"))
                + store_problems(os.path.join(root, "store")) + keyed_plan_problems())
    finally:
        shutil.rmtree(root, ignore_errors=True)


def run_check(drawn: Sequence[DgsCase], result: SuiteResult) -> CheckResult:
    """The check as a result of the DGS suite (a failure reports the first five problems)."""
    start = time.monotonic()
    try:
        found = check(drawn)
    except Exception as error:  # noqa: BLE001 - a crash of the front end's code is a finding
        found = [f"raised {type(error).__name__}: {error}"]
    checked = CheckResult(CHECK, cases=len(drawn), failed=len(found), elapsed_s=time.monotonic() - start)
    if found:
        checked.oracle_failures["contract"] += len(found)
        result.failures.append(FailureReport(CHECK, 0, ("contract",), found[0], 1, 1, 0, {"problems": found[:5]}))
    return checked
