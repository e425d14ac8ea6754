"""The live O+ query's ``foreachBatch`` handler run for real on a pure-Python Spark (no Spark).

:class:`spark_impl.oplus.streaming._Handler`'s ``_run`` (steps 2-3 of the module docstring of
:mod:`spark_impl.oplus.streaming`: summary pass, watermarks, the round, the commit record)
runs only on Spark in the suite (the commit tests stop it at ``df.rdd``),
and the live cases of :mod:`conformance.oplus.engines.live` deliver every source in event-time
order (a "silent" source sends nothing, never anything old), never send a late tuple, a stale
heartbeat or a bad row, key every tuple by a string and never run a parallelism above 256. So
these promises were never exercised where ``_run`` keeps them:

* "A source's *bound* is the largest timestamp or explicit watermark it has delivered ... a
  job's watermark is the minimum bound over its sources" (:mod:`spark_impl.oplus.streaming_jobs`)
  - with a late tuple or a stale heartbeat in a batch, the batch's own largest bound is *below*
  the old one: a watermark taken from the batch alone moves backwards, and the next batch
  accepts a tuple behind the old watermark, re-creates an already emitted window and emits it
  a second time;
* "A tuple below its job's previous watermark is *late* ...: dropped and counted
  (``status().late``)", and ``commit_batch``'s record "carries ``prev``'s ... late counts"
  forward, adding "the late tuples ... of this batch alone": with in-order sources the count is
  0 whatever ``_run`` passes;
* ``commit_batch``'s ``batch``: "the late tuples and outputs of this batch alone" - the
  record's ``outputs`` is the number of rows the batch emitted (the delivery skips a batch whose
  record says 0: ``deliver_pending``);
* "A row with an unknown job or source, a tuple missing one of its operator's fields, or a row
  with neither ``ts``, ``watermark`` nor ``end`` fails the batch with a message naming it"
  (docs/spark.md, "Stream rows"): nothing of such a batch is run or committed;
* "Key -> instance: a string key goes to ``crc32(key) % p`` ...; keys of other types go through
  ``spark_impl.keys.route`` (``k mod p`` for integers)" (docs/spark.md; ``route_key``): the
  instances must route *and own* keys by ``route_key`` (``instance_of``, the default of
  ``ScenarioRound.route``, is the same for strings and crashes on an int);
* ``RoundPlan.moved``: "jobs rescaled at the previous watermark: re-read by the new mapping",
  and the key -> instance mapping "changes there and only there" (docs/spark.md): a job that was
  not rescaled must not be re-read by every instance (``P`` reads of every one of ``P`` state
  files, for nothing). A parallelism equal before and after, read back from the commit record,
  is two ``int`` objects above 256, so only an identity test there tells them apart; the Spark
  cases never run above 256 and the outputs are the same (only the cost differs), so this one
  is judged on the plan the instances receive (a spy on ``streaming_round.load_state``).

:func:`live_local_problem` runs the real :func:`~spark_impl.oplus.streaming.start_oplus_query`
and its handler on :class:`~conformance.standin.spark.LocalSpark` with the contract check's
stand-in stream (:class:`conformance.standin.streaming.Stream`), micro-batches of
``pyspark.sql.Row`` rows (no session) and a collecting ``CallbackSink`` (``key_type`` and
``value_type`` ``long``), one sliding-sum job (WA 5, WS 10) with integer keys at parallelism
:data:`P0` = 257, batch by batch as Structured Streaming would call it (:data:`BATCHES`):
tuples at ts 1..12; a late tuple at 5; a late tuple at 7; a stale heartbeat (watermark 3); a
rescale to :data:`P1` requested at watermark 15, then ts 13..16 (reaches it); ts 17..20 (runs
rescaled); the end; then a batch of three bad rows. After every batch it compares
``status()`` with a model of the definition above (watermark, the running ``late`` count,
``outputs`` = the rows due in the batch = the rows delivered under its id) and every
delivered row with its due batch (the first whose watermark reaches the window's end) and its
instance (``key mod p`` for the parallelism in force); at the end, no window emitted twice and
the delivered rows equal the sequential reference (:mod:`reference.oplus`) of the tuples that
are not late. About a second (257 instances a batch, in the calling thread).
"""

from __future__ import annotations

import json
import math
import shutil
import tempfile
from collections import Counter
from typing import Any

from spec.oplus.scenario import parse_scenario

from conformance.core.refusals import refused
from conformance.core.results import SuiteResult
from conformance.oplus.checks import append_check
from conformance.oplus.oracles import sequential
from conformance.standin.spark import LocalSpark
from conformance.standin.streaming import MicroBatch, Stream

#: Name of the check in the O+ suite.
CHECK = "spark-streaming O+ foreachBatch on a local Spark stand-in: late tuples, watermarks, bad rows (no Spark)"
#: The job: sliding-sum over [L, L + WS) on the WA grid.
WA, WS = 5, 10
#: The initial parallelism (above 256: equal parallelisms read back are distinct int objects)
#: and the one rescaled to at event time :data:`RESCALE_AT`, requested before batch :data:`REQUEST`.
P0, P1, RESCALE_AT, REQUEST = 257, 3, 15, 4
#: Integer keys (instances ``k mod 257``: 4, 7, 91; ``k mod 3``: 1, 1, 2).
KEYS = (4, 7, 605)
#: The stream's columns.
COLUMNS = ("job", "source", "seq", "ts", "watermark", "end", "key", "value")
Item = dict[str, Any]


def _tuples(first: int, last: int) -> list[Item]:
    return [{"ts": ts, "key": KEYS[(ts - 1) % len(KEYS)], "value": ts} for ts in range(first, last + 1)]


#: ``(what, rows)`` of each micro-batch, in order (module docstring).
BATCHES: list[tuple[str, list[Item]]] = [
    ("tuples at ts 1..12", _tuples(1, 12)),
    ("a late tuple at ts 5", [{"ts": 5, "key": KEYS[0], "value": 100}]),
    ("a late tuple at ts 7", [{"ts": 7, "key": KEYS[1], "value": 100}]),
    ("a stale heartbeat (watermark 3)", [{"watermark": 3}]),
    (f"tuples at ts 13..16 (a rescale to {P1} at watermark {RESCALE_AT} requested before)", _tuples(13, 16)),
    ("tuples at ts 17..20", _tuples(17, 20)),
    ("the end of the stream", [{"end": True}]),
]
#: The batch after :data:`BATCHES`: a row of an unknown job, a tuple without its ``value``, a
#: row with neither ``ts``, ``watermark`` nor ``end``.
BAD: list[Item] = [{"job": 3, "ts": 30, "key": 4, "value": 1}, {"ts": 31, "key": 4}, {"key": 7, "value": 1}]


class _Batch(MicroBatch):
    """One micro-batch DataFrame: :data:`COLUMNS` and ``rdd`` over ``Row`` s (2 partitions)."""

    columns = list(COLUMNS)


def _rows(items: list[Item]) -> list[Any]:
    from pyspark.sql import Row  # a Row needs no SparkSession

    row = Row(*COLUMNS)
    return [row(*(item.get(c) for c in COLUMNS)) for item in items]


class _Replanned(Exception):
    """Raised by the ``load_state`` spy when an instance gets a plan with the wrong ``moved``."""


class _Model:
    """The definition's view of every batch (module docstring), computed from the rows alone."""

    def __init__(self) -> None:
        self.watermark: list[float] = []  # after each batch
        self.late: list[int] = []  # the running count after each batch
        self.ran: list[int] = []  # the parallelism each batch runs with
        self.kept: list[Item] = []  # every tuple not late
        bound, late, size, previous = -math.inf, 0, P0, -math.inf
        for index, (_, items) in enumerate(BATCHES):
            self.ran.append(size)
            for item in items:
                if "ts" in item:
                    if item["ts"] < previous:
                        late += 1
                    else:
                        self.kept.append(item)
                mark = math.inf if item.get("end") else max(item.get("ts", -math.inf), item.get("watermark", -math.inf))
                bound = max(bound, mark)
            self.watermark.append(bound)
            self.late.append(late)
            if index >= REQUEST and size == P0 and math.isfinite(bound) and bound >= RESCALE_AT:
                size = P1  # applied at this batch's commit: the next batch runs with it
            previous = bound
        self.reference = _reference(self.kept)

    def before(self, index: int) -> float:
        return self.watermark[index - 1] if index else -math.inf

    def moved(self, index: int) -> frozenset[int]:
        """The jobs rescaled at the previous batch's watermark."""
        return frozenset({0}) if index and self.ran[index] != self.ran[index - 1] else frozenset()


def _reference(kept: list[Item]) -> list[tuple[int, str, str]]:
    """The sequential reference's rows of the tuples not late (keys as strings)."""
    case = {"operator": "sliding-sum", "WA": WA, "WS": WS, "parallelism": 1,
            "inputs": [[{"ts": t["ts"], "key": str(t["key"]), "value": t["value"]} for t in kept]]}
    return sequential(parse_scenario(case))


def _shown(time: float) -> str:
    return str(int(time)) if math.isfinite(time) else str(time)


def live_local_problem() -> str | None:
    """The first broken promise of the module docstring (one line), or None."""
    found = live_local_problems()
    return found[0] if found else None


def live_local_problems() -> list[str]:
    """Every broken promise found (module docstring); a crash of the handler ends the run."""
    directory = tempfile.mkdtemp(prefix="streamproof-oplus-live-local-")
    try:
        return _run(directory)
    finally:
        shutil.rmtree(directory, ignore_errors=True)


def _run(directory: str) -> list[str]:
    import spark_impl.oplus.streaming_round as streaming_round
    from spark_impl.oplus.streaming import start_oplus_query
    from spark_impl.oplus.streaming_jobs import oplus_job
    from spark_impl.reconfig.sinks import CallbackSink

    model = _Model()
    spark = LocalSpark()
    delivered: dict[int, list[tuple[Any, ...]]] = {}
    sink = CallbackSink(lambda df, b: delivered.__setitem__(b, df.collect()), key_type="long", value_type="long")
    stream = Stream(columns=COLUMNS)
    run = start_oplus_query(spark, stream, [oplus_job("sliding-sum", WA, WS, parallelism=P0)],
                            checkpoint_dir=directory, sink=sink)
    handler = stream.writeStream.handler
    real = streaming_round.load_state
    due_moved: list[frozenset[int]] = [frozenset()]

    def spy(plan: Any, index: int) -> Any:
        if plan.moved != due_moved[0]:
            raise _Replanned(
                f"batch {plan.batch} gave its instances RoundPlan.moved = {sorted(plan.moved)}, expected "
                f"{sorted(due_moved[0])} (the jobs rescaled at the previous watermark; parallelism "
                f"{model.ran[plan.batch - 1] if plan.batch else P0} -> {model.ran[plan.batch]}): every one of "
                f"{plan.partitions} instances re-reads every state file of a job whose mapping did not change")
        return real(plan, index)

    found: list[str] = []
    setattr(streaming_round, "load_state", spy)
    try:
        for index, (what, items) in enumerate(BATCHES):
            if index == REQUEST:
                run.rescale(P1, watermark=RESCALE_AT)
            due_moved[0] = model.moved(index)
            try:
                handler(_Batch(spark, _rows(items)), index)
            except _Replanned as error:
                return [*found, str(error)]
            except Exception as error:  # noqa: BLE001 - a crash of the handler is the finding
                return [*found, f"batch {index} ({what}; integer keys, which route_key sends to k mod p) raised "
                                f"{type(error).__name__}: {error}"]
            found += _batch_problems(run, model, index, what, delivered.get(index, []))
    finally:
        setattr(streaming_round, "load_state", real)
    last = len(BATCHES)
    problem = refused(lambda: handler(_Batch(spark, _rows(BAD)), last), "stream",
                      f"batch {last} (a row of job 3 of 1, a tuple without its value, a row with no ts, watermark "
                      "or end)", words=f"batch {last}")
    if problem is not None:
        found.append(problem + ": a bad row fails its batch with a message naming it")
    status = run.status()
    if last in run.log.committed() or last in delivered or status is None or status.batch != last - 1:
        found.append(f"the refused batch {last} left the commits {run.log.committed()}, deliveries "
                     f"{sorted(delivered)}, status().batch {status.batch if status else None} (expected nothing of it)")
    return found + _output_problems(model, delivered)


def _batch_problems(run: Any, model: _Model, index: int, what: str, rows: list[tuple[Any, ...]]) -> list[str]:
    """``status()`` and the rows delivered under batch ``index`` against the model."""
    found: list[str] = []
    status = run.status()
    if status is None or status.batch != index:
        return [f"after batch {index} ({what}) the last commit is {status.batch if status else None}"]
    when = f"after batch {index} ({what})"
    want, before = model.watermark[index], model.before(index)
    got = status.watermark.get(0, -math.inf)
    if index and got < before:
        found.append(f"{when} the job's watermark went back from {_shown(before)} to {_shown(got)}: a source's bound is "
                     "the largest ts or watermark it has delivered, so the watermark never decreases")
    elif got != want:
        found.append(f"{when} status().watermark is {_shown(got)}, expected {_shown(want)}")
    if status.late != {0: model.late[index]}:
        found.append(f"{when} status().late is {status.late}, expected {{0: {model.late[index]}}} (every tuple below the "
                     "job's previous watermark counted once, a running count)")
    due = sum(1 for ts, _, _ in model.reference if before < ts <= want)
    if status.outputs != due or len(rows) != due:
        found.append(f"{when} status().outputs is {status.outputs} and {len(rows)} rows were delivered under its id, "
                     f"expected {due} (the windows whose end is in ({_shown(before)}, {_shown(want)}]: the outputs "
                     "of this batch alone)")
    size = model.ran[index]
    for job, batch, instance, ts, key, value in rows:
        if (job, batch) != (0, index) or not before < ts <= want:
            found.append(f"{when} the row {(job, batch, instance, ts, key, value)} was delivered, expected job 0, "
                         f"batch {index}, ts in ({_shown(before)}, {_shown(want)}] (due when the watermark reaches it)")
            break
        if instance != key % size:
            found.append(f"{when} key {key} was emitted by instance {instance} at parallelism {size}, expected "
                         f"{key % size} (an integer key k goes to k mod p: route_key)")
            break
    return found


def _output_problems(model: _Model, delivered: dict[int, list[tuple[Any, ...]]]) -> list[str]:
    """No window twice, and the delivered rows equal the reference of the tuples not late."""
    found: list[str] = []
    batches: dict[tuple[Any, Any], list[int]] = {}
    for batch, rows in sorted(delivered.items()):
        for _, _, _, ts, key, _ in rows:
            batches.setdefault((key, ts), []).append(batch)
    for (key, ts), where in sorted(batches.items(), key=lambda kv: (kv[0][1], str(kv[0][0]))):
        if len(where) > 1:
            found.append(f"the window [{ts - WS}, {ts}) of key {key} was emitted {len(where)} times (batches {where}): "
                         "a tuple behind an emitted window is late, so a window is emitted once")
            break
    got = Counter((int(ts), str(key), json.dumps(value)) for rows in delivered.values() for *_, ts, key, value in rows)
    want = Counter(model.reference)
    if got != want:
        missing, extra = sorted((want - got).elements()), sorted((got - want).elements())
        found.append(f"the delivered rows differ from the sequential reference of the tuples not late: missing "
                     f"{missing[:3]}, unexpected {extra[:3]} (ts, key, value)")
    return found


def run_check(result: SuiteResult) -> None:
    """Append the check to ``result`` (a failure is a ``contract`` failure)."""
    append_check(result, CHECK, len(BATCHES) + 1, lambda: [p] if (p := live_local_problem()) else [])
