"""Bounded out-of-orderness on the live DGS front end (docs/production/dgs.md;
spark_impl/dgs/streaming_input.py, "Bounded out-of-orderness"; spark_impl/lateness.py):
within ``allowed_lateness`` the outputs are the sequential program's on the event-time-sorted
input whatever order the files come in; a late event is failed on, dropped and counted (one
WARNING per batch), or sent to a late sink, exactly once across restarts.

Most scenarios drive the real ``start_dgs_query`` on the pure-Python Spark stand-in
(:class:`conformance.standin.spark.LocalSpark`), calling the ``foreachBatch`` function file by
file in a chosen order; the Spark tests land files in the same millisecond on a real file
source."""

from __future__ import annotations

import json
import logging
import os
import random
import tempfile
from collections import Counter
from typing import Any, Callable, Sequence

import pytest

from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams, value_to_json
from spec.errors import InputError

from conformance.standin.spark import LocalSpark
from spark_impl.dgs.streaming import LiveJob, start_dgs_query
from spark_impl.lateness import LateEventError
from spark_impl.dgs.streaming_plan import keyed_plan
from spark_impl.reconfig.sinks import CallbackSink, ParquetSink
from support.paths import TESTS

HERE = str(TESTS)
COUNTER = os.path.join(HERE, "support", "dgs_live_programs.py:WordCounter")
STREAMS = ("s0", "s1")
PROGRAM = load_program(COUNTER)
PLAN = keyed_plan(PROGRAM, STREAMS, 2)

Rows = list[dict[str, Any]]


# --- input: streams, files, disorder, the reference ---------------------------------------------

def _events(seed: int, n: int) -> Rows:
    """``n`` counter events on two streams, timestamps 1..n, as row dicts in timestamp order."""
    rng = random.Random(seed)
    return [{"stream": STREAMS[ts % 2], "ts": ts, "event": [rng.choice("iir"), rng.choice(("alice", "bob", "carol"))]}
            for ts in range(1, n + 1)]


def _closing(rows: Rows, lateness: int) -> Rows:
    """A heartbeat of every stream far enough past the last event to take every held item."""
    end = max(r["ts"] for r in rows) + lateness + 1
    return [{"stream": s, "ts": end, "heartbeat": True} for s in STREAMS]


def _chunks(rows: Rows, size: int) -> list[Rows]:
    return [rows[i: i + size] for i in range(0, len(rows), size)]


def _swapped_pairs(chunks: list[Rows]) -> list[Rows]:
    """Chunks 0,1,2,3,... handed over as 1,0,3,2,...: pairs of same-millisecond files that the
    file source handed over in the other order."""
    order = [i ^ 1 if (i ^ 1) < len(chunks) else i for i in range(len(chunks))]
    return [chunks[i] for i in order]


def _disorder(files: Sequence[Rows]) -> int:
    """How far an item comes behind the largest timestamp its stream showed in an earlier file."""
    highest: dict[str, int] = {}
    worst = 0
    for rows in files:
        for r in rows:
            worst = max(worst, highest.get(r["stream"], r["ts"]) - r["ts"])
        for r in rows:
            highest[r["stream"]] = max(highest.get(r["stream"], r["ts"]), r["ts"])
    return worst


def _late_rows(files: Sequence[Rows], lateness: int) -> list[tuple[int, dict[str, Any]]]:
    """(file, row) of every late event by the documented rule: at or before its stream's
    watermark (``highest - L - 1``, ``highest`` with ``L = 0``) as its file's batch starts."""
    highest: dict[str, int] = {}
    late = []
    for number, rows in enumerate(files):
        marks = {s: top if lateness == 0 else top - lateness - 1 for s, top in highest.items()}
        taken = []
        for r in rows:
            if r["stream"] in marks and r["ts"] <= marks[r["stream"]]:
                if "event" in r:
                    late.append((number, r))
            else:
                taken.append(r)
        for r in taken:
            highest[r["stream"]] = max(highest.get(r["stream"], r["ts"]), r["ts"])
    return late


def _reference(rows: Rows) -> Counter[str]:
    """spec(sort(u)) of the event rows, as the sink's JSON texts."""
    streams: dict[str, list[Any]] = {s: [] for s in STREAMS}
    for r in sorted(rows, key=lambda r: r["ts"]):
        if "event" in r:
            streams[r["stream"]].append(StreamEvent(r["ts"], tuple(r["event"])))
    for s in STREAMS:
        streams[s].append(Heartbeat(10 ** 9))
    _, outputs = spec_run(PROGRAM, sort_streams(streams))
    return Counter(json.dumps(value_to_json(x), sort_keys=True) for x in outputs)


def _text(row: dict[str, Any], job: int = 0) -> str:
    return json.dumps({**({"job": job} if job else {}), **row})


# --- a stand-in streaming source: the foreachBatch function called file by file ---------------

class _Query:
    def __init__(self, source: "_Source") -> None:
        self.source = source

    def processAllAvailable(self) -> None:  # noqa: N802 - Spark's name
        if self.source.failed is not None:
            raise RuntimeError("py4j: the foreachBatch function failed")

    def stop(self) -> None:
        self.source.stopped = True


class _Frame:
    def __init__(self, rows: list[str]) -> None:
        self.rows = rows

    def select(self, column: str) -> "_Frame":
        return self

    def collect(self) -> list[tuple[str]]:
        return [(r,) for r in self.rows]


class _Source:
    """``spark.readStream...``: what start_dgs_query uses of a streaming DataFrame."""

    isStreaming = True  # noqa: N815 - Spark's name
    columns = ["value"]

    def __init__(self) -> None:
        self.handler: Callable[[Any, int], None] | None = None
        self.failed: BaseException | None = None
        self.stopped = False

    @property
    def writeStream(self) -> "_Source":  # noqa: N802 - Spark's name
        return self

    def foreachBatch(self, handler: Callable[[Any, int], None]) -> "_Source":  # noqa: N802 - Spark's name
        self.handler = handler
        return self

    def option(self, key: str, value: Any) -> "_Source":
        return self

    def start(self) -> _Query:
        return _Query(self)

    def batch(self, rows: list[str], batch_id: int) -> None:
        assert self.handler is not None and self.failed is None
        try:
            self.handler(_Frame(rows), batch_id)
        except BaseException as error:
            self.failed = error
            raise


class _Outputs:
    """A CallbackSink function keeping each batch's outputs (idempotent by batch id)."""

    def __init__(self) -> None:
        self.batches: dict[int, list[str]] = {}

    def __call__(self, df: Any, batch_id: int) -> None:
        self.batches[batch_id] = [json.dumps(json.loads(row[2]), sort_keys=True) for row in df.collect()]

    def counter(self) -> Counter[str]:
        return Counter(v for rows in self.batches.values() for v in rows)


class _LateRows:
    """A late sink function keeping each batch's late rows (idempotent by batch id)."""

    def __init__(self) -> None:
        self.batches: dict[int, list[tuple[str, int]]] = {}
        self.calls = 0

    def __call__(self, df: Any, batch_id: int) -> None:
        self.calls += 1
        self.batches[batch_id] = sorted((row[0], row[1]) for row in df.collect())


def _local(root: str, outputs: _Outputs, jobs: int = 1, **options: Any) -> tuple[Any, _Source]:
    source = _Source()
    run = start_dgs_query(LocalSpark(), [LiveJob(COUNTER, PLAN)] * jobs, source, checkpoint_dir=root,
                          sink=CallbackSink(outputs), **options)
    return run, source


def _feed(source: _Source, files: Sequence[list[str]], first: int = 0) -> None:
    for number, rows in enumerate(files):
        source.batch(rows, first + number)


# --- within allowed_lateness: the reference, whatever the file order ---------------------------

@pytest.mark.parametrize("seed", [1, 2, 3])
def test_swapped_same_ms_files_within_allowed_lateness_equal_the_reference(tmp_path: Any, seed: int) -> None:
    """docs/production/dgs.md: "Within the allowed lateness the outputs are the sequential
    program's on the event-time-sorted input, whatever order the source hands files over".
    Job 0 gets its files in order, job 1 every same-millisecond pair the other way round; with
    ``allowed_lateness`` = the input's disorder nothing is late and both equal the reference;
    with one less, something is late (the bound is tight, so this test can fail). Job 1 is
    re-planned half-way, while events wait for reordering (streaming_replan: "Events waiting in
    the mailbox are re-assigned to the new plan's responsible workers")."""
    rows = _events(seed, 48)
    chunks = _chunks(rows, 5)
    swapped = _swapped_pairs(chunks)
    lateness = max(_disorder(chunks), _disorder(swapped))
    assert lateness > 0
    closing = _closing(rows, lateness)
    files = [[_text(r) for r in a] + [_text(r, 1) for r in b] for a, b in zip(chunks, swapped)]
    files.append([_text(r, j) for j in (0, 1) for r in closing])
    outputs = _Outputs()
    run, source = _local(str(tmp_path / "within"), outputs, jobs=2, allowed_lateness=lateness, late_policy="drop")
    half = len(files) // 2
    _feed(source, files[:half])
    assert any(box.held for box in run.committed().mailboxes)  # events wait for reordering across the re-plan
    run.replan(keyed_plan(PROGRAM, STREAMS, 3), job=1)
    _feed(source, files[half:], half)
    assert run.replanned == [(half, 1)] and run.late_count() == 0
    assert all(box.held == [] and box.buffered == [] for box in run.committed().mailboxes)
    expected = _reference(rows)
    got = Counter(v for batch in outputs.batches.values() for v in batch)
    assert got == Counter({k: 2 * n for k, n in expected.items()})  # each job once
    assert run.final_states()[0] == run.final_states()[1]
    tight, source = _local(str(tmp_path / "tight"), _Outputs(), jobs=2, allowed_lateness=lateness - 1,
                           late_policy="drop")
    _feed(source, files)
    assert tight.late_count(job=1) == len(_late_rows(swapped + [closing], lateness - 1)) > 0


def test_fail_is_the_default_and_stops_the_query_naming_the_first_late_event() -> None:
    """The defaults keep the query from losing anything silently: with ``allowed_lateness=0``
    and ``late_policy="fail"`` (the defaults) the first late event stops the query with a
    LateEventError naming it (stream, event, tag, event time, watermark); process_all raises
    it; nothing of the batch is committed."""
    rows = _events(4, 12)
    chunks = _chunks(rows, 6)
    outputs = _Outputs()
    run, source = _local(tempfile.mkdtemp(prefix="dgs-late-"), outputs)
    source.batch([_text(r) for r in chunks[1]], 0)
    with pytest.raises(LateEventError) as caught:
        source.batch([_text(r) for r in chunks[0]], 1)
    first = min((r for r in chunks[0] if r["ts"] <= max(x["ts"] for x in chunks[1] if x["stream"] == r["stream"])),
                key=lambda r: r["ts"])
    mark = max(x["ts"] for x in chunks[1] if x["stream"] == first["stream"])
    message = str(caught.value)
    assert message.startswith("batch 1: late event (6 in the micro-batch; allowed_lateness 0; late_policy 'fail')")
    assert (f"stream {first['stream']!r}: event {tuple(first['event'])!r} (tag {tuple(first['event'])!r}) at event "
            f"time {first['ts']}, behind the stream's watermark {mark}") in message
    assert run.error is caught.value and run.committed().batch == 0 and run.late_count() == 0
    with pytest.raises(LateEventError, match="behind the stream's watermark"):
        run.process_all()


# --- drop: counted, one WARNING per batch ------------------------------------------------------

def test_drop_logs_one_warning_per_batch_with_its_count_and_equals_the_reference_without_them(
        tmp_path: Any, caplog: pytest.LogCaptureFixture) -> None:
    """spark_impl.lateness: ``"drop"``: "left out and counted ...; every micro-batch that drops
    logs ONE WARNING on the front end's logger (``streamproof.oplus``, ``streamproof.dgs``) with
    the count and the first late item"; the
    outputs are the reference's on the input without the dropped events."""
    rows = _events(5, 40)
    files = _swapped_pairs(_chunks(rows, 4)) + [_closing(rows, 0)]
    late = _late_rows(files, 0)
    per_file = Counter(number for number, _ in late)
    assert len(per_file) >= 3
    outputs = _Outputs()
    run, source = _local(str(tmp_path), outputs, late_policy="drop")
    with caplog.at_level(logging.INFO, logger="streamproof.dgs"):
        _feed(source, [[_text(r) for r in f] for f in files])
    warnings = [r for r in caplog.records if r.name == "streamproof.dgs" and r.levelno == logging.WARNING]
    assert [r.getMessage().split(";")[0] for r in warnings] == [
        f"batch {number}: dropped {count} late event(s) (allowed_lateness 0)" for number, count in sorted(per_file.items())]
    assert run.late_count() == len(late) == sum(run.late_count(stream=s) for s in STREAMS)
    dropped = [r for _, r in late]
    assert outputs.counter() == _reference([r for r in rows if r not in dropped])


# --- a late sink: exactly the late rows, exactly once across restarts --------------------------

@pytest.mark.parametrize("crash_at", ["before-commit", "after-commit", "after-deliver"])
def test_a_late_sink_receives_exactly_the_late_rows_once_across_a_restart(tmp_path: Any, crash_at: str) -> None:
    """spark_impl.lateness: a sink "receives the late rows of every micro-batch that has some,
    under the batch id, *before* the batch commits (a crash in between delivers them again under
    the same id ...)"; counts and outputs are exactly once after a driver kill at every point of the commit
    protocol and a restart on the checkpoint. A late heartbeat is neither delivered nor counted."""
    rows = _events(6, 40)
    files = [[_text(r) for r in f] for f in _swapped_pairs(_chunks(rows, 4)) + [_closing(rows, 1)]]
    files[3].append(_text({"stream": "s0", "ts": 1, "heartbeat": True}))  # late, but "ignored under every policy"
    late = _late_rows([[json.loads(t) for t in f] for f in files], 1)
    assert late
    assert late[0][0] == 1  # the kill comes in the first batch with late events
    sink, outputs = _LateRows(), _Outputs()
    root = str(tmp_path)
    run, source = _local(root, outputs, allowed_lateness=1, late_policy=sink)
    source.batch(files[0], 0)
    run, source = _local(root, outputs, allowed_lateness=1, late_policy=sink, crash_at=crash_at)
    with pytest.raises(Exception, match="simulated driver kill"):
        source.batch(files[1], 1)
    assert run.committed().batch == (0 if crash_at == "before-commit" else 1)
    run, source = _local(root, outputs, allowed_lateness=1, late_policy=sink)
    _feed(source, files[1:], 1)  # Structured Streaming replays the batch it did not commit
    assert sink.calls == len(sink.batches) + (1 if crash_at == "before-commit" else 0)
    expected: dict[int, list[str]] = {}
    for number, r in late:
        expected.setdefault(number, []).append(json.dumps(r))
    assert {b: [t for t, _ in rows_] for b, rows_ in sink.batches.items()} == {b: sorted(t) for b, t in expected.items()}
    assert all(w >= json.loads(t)["ts"] for rows_ in sink.batches.values() for t, w in rows_)
    assert run.late_count() == len(late)
    dropped = [r for _, r in late]
    assert outputs.counter() == _reference([r for r in rows if r not in dropped])


def test_late_policy_and_allowed_lateness_are_checked(tmp_path: Any) -> None:
    """start_dgs_query: InputError naming the argument for a bad ``allowed_lateness`` or
    ``late_policy``."""
    for options, where in (({"allowed_lateness": -1}, "allowed_lateness"), ({"allowed_lateness": True},
                           "allowed_lateness"), ({"allowed_lateness": 1.5}, "allowed_lateness"),
                           ({"late_policy": "ignore"}, "late_policy"), ({"late_policy": 3}, "late_policy")):
        with pytest.raises(InputError) as caught:
            _local(str(tmp_path), _Outputs(), **options)
        assert caught.value.where == where


# --- a real file source: same-millisecond files ------------------------------------------------

def _land(directory: str, name: str, rows: list[str], mtime: float) -> None:
    """A file written aside and renamed in, with modification time ``mtime`` (seconds)."""
    path = os.path.join(directory, name)
    with open(os.path.join(directory, f".{name}.tmp"), "w", encoding="utf-8") as handle:
        handle.write("".join(r + "\n" for r in rows))
    os.utime(handle.name, (mtime, mtime))
    os.replace(handle.name, path)


def _spark_query(spark: Any, root: str, jobs: int, **options: Any) -> Any:
    stream = spark.readStream.option("maxFilesPerTrigger", 1).text(os.path.join(root, "in"))
    return start_dgs_query(spark, [LiveJob(COUNTER, PLAN)] * jobs, stream, checkpoint_dir=os.path.join(root, "ckpt"),
                           sink=ParquetSink(os.path.join(root, "out")), **options)


def _landed(root: str, pairs: Sequence[tuple[list[str], list[str]]], last: list[str], *, same_ms: bool) -> None:
    """Each pair as two files in the same millisecond (``same_ms``) or the second one a
    millisecond *older* (the file source hands it over first); ``last`` one second later."""
    directory = os.path.join(root, "in")
    os.makedirs(directory)
    start = 1_700_000_000.0
    for number, (a, b) in enumerate(pairs):
        _land(directory, f"f{number:03d}a.json", a, start + number)
        _land(directory, f"f{number:03d}b.json", b, start + number - (0 if same_ms else 0.001))
    _land(directory, "zz-last.json", last, start + len(pairs) + 1)


def test_spark_same_ms_files_within_allowed_lateness_equal_the_reference_and_late_rows_reach_their_sink(
        spark: Any, tmp_path: Any) -> None:
    """docs/production/dgs.md, "Source order": Spark's file source hands same-millisecond files
    over in any order. Job 0's rows are in each pair's first file first, job 1's the other way
    round, so one of them sees every pair in the wrong order, whichever order the source picks:
    with ``allowed_lateness`` = the disorder both equal the reference and the late sink (a
    Parquet path) stays empty. With ``allowed_lateness=0`` and the second file of every pair a
    millisecond older, the late sink holds exactly the late rows with their watermarks, the
    count is on the run, and the outputs are the reference's without them; with
    ``late_policy="fail"`` the query stops and ``process_all`` raises the LateEventError."""
    rows = _events(9, 24)
    chunks = _chunks(rows, 6)
    swapped = _swapped_pairs(chunks)
    lateness = max(_disorder(chunks), _disorder(swapped))
    closing = _closing(rows, lateness)
    files = [[_text(r) for r in a] + [_text(r, 1) for r in b] for a, b in zip(chunks, swapped)]
    pairs = [(files[i], files[i + 1]) for i in range(0, len(files), 2)]
    root = str(tmp_path / "within")
    _landed(root, pairs, [_text(r, j) for j in (0, 1) for r in closing], same_ms=True)
    run = _spark_query(spark, root, 2, allowed_lateness=lateness, late_policy=os.path.join(root, "late"))
    run.process_all()
    assert run.late_count() == 0 and run.committed().batch == len(files)
    run.stop()
    table = spark.read.parquet(os.path.join(root, "out")).collect()
    expected = _reference(rows)
    for job in (0, 1):
        assert Counter(json.dumps(json.loads(r["value"]), sort_keys=True) for r in table if r["job"] == job) == expected
    assert not os.path.exists(os.path.join(root, "late"))

    root = str(tmp_path / "late")
    ordered = _chunks(rows, 6)
    handed = _swapped_pairs(ordered) + [_closing(rows, 0)]  # the older file of each pair first
    late = _late_rows(handed, 0)
    assert late
    _landed(root, [([_text(r) for r in ordered[i]], [_text(r) for r in ordered[i + 1]])
                   for i in range(0, len(ordered), 2)], [_text(r) for r in _closing(rows, 0)], same_ms=False)
    run = _spark_query(spark, root, 1, late_policy=os.path.join(root, "late"))
    run.process_all()
    assert run.late_count() == len(late)
    run.stop()
    got = sorted((r["value"], r["late_watermark"], r["batch"]) for r in
                 spark.read.parquet(os.path.join(root, "late")).collect())
    assert [(v, b) for v, _, b in got] == sorted((json.dumps(r), number) for number, r in late)
    assert all(w >= json.loads(v)["ts"] for v, w, _ in got)
    dropped = [r for _, r in late]
    table = spark.read.parquet(os.path.join(root, "out")).collect()
    assert Counter(json.dumps(json.loads(r["value"]), sort_keys=True) for r in table) == _reference(
        [r for r in rows if r not in dropped])

    root = str(tmp_path / "fail")
    _landed(root, [([_text(r) for r in ordered[0]], [_text(r) for r in ordered[1]])], [], same_ms=False)
    run = _spark_query(spark, root, 1)
    with pytest.raises(LateEventError, match=r"batch 1: late event .* behind the stream's watermark"):
        run.process_all()
    assert run.committed().batch == 0
    run.query.stop()


def test_allowed_lateness_may_change_from_one_start_to_the_next(tmp_path: Any) -> None:
    """docs/production/dgs.md: "``allowed_lateness`` and ``late_policy`` may change from one
    start to the next on the same checkpoint: the watermarks never move back, so a smaller bound
    takes the waiting items sooner". Started with a bound of 6 on disordered files, restarted
    with 0 on in-order files: the events held at the restart are taken at its first batch and
    the outputs are the reference's, nothing late."""
    rows = _events(8, 40)
    chunks = _chunks(rows, 4)
    first = _swapped_pairs(chunks[:4])
    assert _disorder(first) <= 6
    outputs = _Outputs()
    root = str(tmp_path)
    run, source = _local(root, outputs, allowed_lateness=6, late_policy="drop")
    _feed(source, [[_text(r) for r in f] for f in first])
    held = len(run.committed().mailboxes[0].held)
    assert held > 0
    run, source = _local(root, outputs, late_policy="fail")
    source.batch([_text(r) for r in chunks[4]], 4)
    assert run.committed().mailboxes[0].held == []
    _feed(source, [[_text(r) for r in f] for f in chunks[5:] + [_closing(rows, 0)]], 5)
    assert run.late_count() == 0 and outputs.counter() == _reference(rows)


def test_a_failed_batch_fails_again_on_restart_until_the_policy_changes(tmp_path: Any) -> None:
    """docs/production/dgs.md, "The late policies", ``"fail"``: "A restart replays the same
    micro-batch and fails the same way until you restart with another policy ... A larger
    ``allowed_lateness`` does not rescue them: the watermarks they were behind are committed and
    never move back". Restarted with a late sink, the replayed batch's late rows
    reach the sink and the rest of the stream equals the reference without them."""
    rows = _events(10, 24)
    handed = _swapped_pairs(_chunks(rows, 6)) + [_closing(rows, 0)]
    files = [[_text(r) for r in f] for f in handed]
    outputs = _Outputs()
    root = str(tmp_path)
    messages = []
    for options in ({}, {"allowed_lateness": _disorder(handed)}):
        run, source = _local(root, outputs, **options)
        source.batch(files[0], 0)  # committed by the first query, skipped by the second
        with pytest.raises(LateEventError) as caught:
            source.batch(files[1], 1)
        messages.append(str(caught.value).replace(f"allowed_lateness {options.get('allowed_lateness', 0)}", ""))
        assert run.committed().batch == 0
    assert messages[0] == messages[1]
    sink = _LateRows()
    run, source = _local(root, outputs, late_policy=sink)
    _feed(source, files[1:], 1)
    late = _late_rows(handed, 0)
    assert sorted(sink.batches) == sorted({number for number, _ in late}) and 1 in sink.batches
    assert sorted(t for rows_ in sink.batches.values() for t, _ in rows_) == sorted(json.dumps(r) for _, r in late)
    assert run.late_count() == len(late)
    assert outputs.counter() == _reference([r for r in rows if r not in [r for _, r in late]])
