"""The executor's model and bookkeeping against their documented contracts, without Spark.

Promises that no run of the suite's cases can show, checked by the Fries suite's contracts
check (:mod:`conformance.fries.checks.contracts`) before any Spark job:

* **Values handed to the executor cannot change afterwards.** ``Executor.submit`` validates a
  request at once (``spark_impl.reconfig.validate``: the operators exist, every state
  transformation is dry-run on the committed states) but the request is *made* - pickled for
  the tasks - later, when a batch takes it (``Executor.submit`` queues it while no batch runs);
  a job, its logic, sources, timing, retention and sink are read at every batch. So the public
  value types are frozen dataclasses: assigning a field raises ``FrozenInstanceError``. A
  mutable ``Update`` would let a user's later assignment run a transformation that was never
  validated, with every run of the suite unchanged (nothing in ``spark_impl`` assigns one).
* **Delay bookkeeping** (:mod:`spark_impl.reconfig.progress`): ``Progress.fold_delays(keep)``
  keeps the newest ``keep`` delays (by request number) unchanged and folds the others into
  ``earlier`` (:class:`~spark_impl.reconfig.progress.DelaySummary`: count, total, maximum, the
  newest request folded; the total kept in whole microseconds, ``round(.., 3)`` ms, so the
  record's JSON text stays short and a re-written record reads back equal); ``delay_stats()`` summarizes every completed request's delay however
  often it was folded; the record's JSON form reads back equal. The suite's jobs complete at
  most a few requests, fewer than ``Retention.delays`` (16), so no run folds anything.
* **What the retention keeps** (:func:`spark_impl.reconfig.retention.needed_by`): a job needs
  its pending batches, its last ``keep`` committed batches and, with a sink, the committed
  batches after the last one delivered; ``Retention`` refuses to keep no batch or no delay and
  keeps 2 batches and 16 delays by default (docs/spark.md, "Bounded storage").

* **User-written operators** (:func:`user_logic_problem`): the default routing of
  ``user_job`` / ``user_update`` (the model's docstring), reached only by user jobs.
* **Sink column types** (:func:`sink_types_problem`): conversions and refusals the suite's
  sinks (string keys, long values) never exercise.
* **The bounded caches** (:func:`lru_problem`): ``spark_impl.lru.LRU``'s size bound and order.
* **Batch directory names** (:func:`batch_names_problem`): listed back as numbers past batch 10^6.
* **Request validation on keys of mixed types** (:func:`validation_problem`): accepted or
  rejected, never a ``TypeError`` at the user (a real bug: it raised).
* **The round-based executors' part files** (:func:`part_sink_problem`): ``spark_impl.sink`` on
  a directory and on a URI; ``ObjectStoreSink``'s columns for non-Fries DataFrames
  (:func:`object_store_columns_problem`).

:func:`model_problem` names the first broken promise (None: all hold).
"""

from __future__ import annotations

import dataclasses
import os
import random
import shutil
import tempfile as scratch
from types import SimpleNamespace
from typing import Any

from spec.errors import InputError
from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.scenario import scenario_from_json

from conformance.fries.checks.chains import chain_json

#: Seeded, so a failure is reproducible; cases per property.
SEED = 12
TRIALS = 60


def _public_values() -> list[type]:
    """The value types a user hands to the executor (``spark_impl.reconfig``'s public API,
    the logic it wraps, retentions and sinks), the result it hands back, and the tasks' view
    of a request (one ``ControlEntry`` shared by every object of a task)."""
    from spark_impl.reconfig import (
        DirectorySource,
        GeneratedSource,
        Job,
        ListSource,
        PlannedRequest,
        Request,
        RunResult,
        Timing,
        Update,
        UserOperator,
    )
    from spark_impl.reconfig.control import ControlEntry
    from spark_impl.reconfig.model import CatalogueLogic, CatalogueTransform, UserLogic
    from spark_impl.reconfig.retention import Retention
    from spark_impl.reconfig.sinks import CallbackSink, ParquetSink

    return [Update, Request, PlannedRequest, UserOperator, UserLogic, CatalogueLogic, CatalogueTransform, Timing,
            Job, ListSource, GeneratedSource, DirectorySource, Retention, ParquetSink, CallbackSink, RunResult,
            ControlEntry]


def frozen_problem() -> str | None:
    """The first public value type whose fields can be assigned (module docstring)."""
    for cls in _public_values():
        first = dataclasses.fields(cls)[0].name
        value: Any = object.__new__(cls)  # no __init__: only the class's __setattr__ is exercised
        try:
            setattr(value, first, None)
        except dataclasses.FrozenInstanceError:
            continue
        return (f"{cls.__module__}.{cls.__name__}.{first} can be assigned after construction: a value handed to "
                "the executor (validated at submit, used batches later) could change under it")
    return None


def _delays(rng: random.Random, first: int, n: int) -> dict[int, float]:
    """``n`` completed requests numbered from ``first`` (some numbers skipped: rejected
    requests), with delays that are exact binary fractions (sums need no rounding)."""
    out: dict[int, float] = {}
    j = first
    for _ in range(n):
        j += rng.choice((1, 1, 1, 2))
        out[j] = rng.randrange(0, 400_000) / 8
    return out


def _summary_problem(what: str, got: Any, delays: dict[int, float]) -> str | None:
    """``got`` (a DelaySummary) must summarize exactly ``delays``."""
    want = (len(delays), sum(delays.values()), max(delays.values(), default=0.0), max(delays, default=0))
    have = (got.count, got.total_ms, got.max_ms, got.last)
    if have != want:
        return f"{what}: (count, total ms, max ms, last request) = {have}, expected {want}"
    mean = got.mean_ms
    if (mean is None) != (not delays) or delays and abs(mean - want[1] / want[0]) > 1e-9:
        return f"{what}: mean_ms = {mean}, expected {want[1] / want[0] if delays else None}"
    return None


def delays_problem() -> str | None:
    """``fold_delays`` / ``delay_stats`` / ``DelaySummary`` / the JSON form (module docstring)."""
    from spark_impl.reconfig.progress import DelaySummary, Progress

    if DelaySummary().mean_ms is not None:
        return "an empty DelaySummary has a mean delay"
    rng = random.Random(SEED)
    for trial in range(TRIALS):
        keep = rng.randint(1, 5)
        every = _delays(rng, 0, rng.randint(0, 14))
        prog = Progress()
        for j, d in every.items():  # as the executor does: one completion, then a fold, per batch
            prog.delays[j] = d
            if rng.random() < 0.7:
                prog.fold_delays(keep)
        prog.fold_delays(keep)
        newest = dict(sorted(every.items())[-keep:]) if every else {}
        if prog.delays != newest:
            return (f"fold_delays({keep}) left the delays of requests {sorted(prog.delays)}; the newest {keep} of "
                    f"{sorted(every)} are {sorted(newest)}")
        folded = {j: d for j, d in every.items() if j not in newest}
        found = (_summary_problem(f"the folded summary of requests {sorted(folded)}", prog.earlier, folded)
                 or _summary_problem(f"delay_stats() over requests {sorted(every)}", prog.delay_stats(), every))
        if found is not None:
            return f"trial {trial}, keep {keep}: {found}"
        back = Progress.from_json(prog.to_json())
        if back != prog:
            return f"trial {trial}: a progress record read back from its JSON form differs: {back} != {prog}"
    return _microseconds_problem(rng)


def _microseconds_problem(rng: random.Random) -> str | None:
    """Measured delays (any float): the folded total is the sum to within half a microsecond
    per delay, in whole microseconds."""
    from spark_impl.reconfig.progress import DelaySummary

    for _ in range(TRIALS):
        total = DelaySummary()
        delays = [rng.uniform(0.0, 5000.0) for _ in range(rng.randint(1, 8))]
        for j, d in enumerate(delays, 1):
            total = total.add(j, d)
        if abs(total.total_ms - sum(delays)) > 0.0005 * len(delays) + 1e-9 or round(total.total_ms, 3) != total.total_ms:
            return (f"DelaySummary.add over {delays}: total {total.total_ms!r} ms is not the sum {sum(delays)!r} in "
                    "whole microseconds")
    return None


def retention_problem() -> str | None:
    """``needed_by`` and ``Retention``'s bounds (module docstring)."""
    from spark_impl.reconfig.progress import Progress
    from spark_impl.reconfig.retention import Retention, needed_by

    for bad in ((0, 1), (1, 0), (-1, 16)):
        try:
            Retention(*bad)
        except ValueError:
            continue
        return f"Retention{bad} was accepted: a retention keeps at least one committed batch and one delay"
    for good in ((1, 1), (2, 16), (3, 5)):
        Retention(*good)  # a refusal raises: the check's caller reports it
    default = Retention()
    if (default.batches, default.delays) != (2, 16):
        return (f"Retention() keeps {default.batches} batches and {default.delays} delays; its defaults are 2 batches "
                "(the restart base and one more) and 16 delays (docs/spark.md, 'Bounded storage')")
    rng = random.Random(SEED + 1)
    for _ in range(TRIALS):
        batches = sorted(rng.sample(range(0, 400), rng.randint(0, 12)))
        cut = rng.randint(0, len(batches))
        history, pending = batches[:cut], batches[cut:]
        keep = rng.randint(1, 4)
        after = rng.choice([None, -1, *history, *(g + 1 for g in history)]) if history else rng.choice([None, -1])
        prog = Progress(history=list(history), pending=list(pending))
        want = set(pending) | set(history[-keep:])
        if after is not None:
            want |= {g for g in history if g > after}
        got = needed_by(prog, keep, after)
        if got != want:
            return (f"needed_by(history={history}, pending={pending}, keep={keep}, last delivered={after}) = "
                    f"{sorted(got)}; the pending, the last {keep} committed and the undelivered batches are "
                    f"{sorted(want)}")
    return None


def _user_function(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    """A user operator: counts, emits two keyed outputs (keys routed to different children)."""
    return (state or 0) + value, [(key, 2 * value), (f"{key}/x", value)]


def _user_flush(state: Any, key: Any) -> list[tuple[Any, Any]]:
    return [(key, state), ((key, "end"), -1)]


def user_logic_problem() -> str | None:
    """User-written operators (``user_job``, ``user_update``, :class:`UserLogic`; the model's
    docstring): a user function's ``(key, value)`` outputs go to the child ``route(key, n)``
    picks, to every child from a replicate operator, to the sink (receiver ``""``) from an
    operator without children; a blocking operator emits nothing per tuple and its ``flush``
    output once per key at end of input (routed alike); no other kind flushes. ``user_job``
    gives every non-source operator this logic and keeps the job's options; ``user_update``
    the same logic with the request's transformation. The default suite's scenarios use the
    catalogue's logic only, so no run reaches these lines (``streamproof conformance --job`` does)."""
    from spark_impl.reconfig import model

    route: Any = getattr(model, "route")  # the routing UserLogic uses (``route`` itself: contracts_check.key_problem)
    from spark_impl.reconfig import ListSource, Timing, UserOperator, user_job, user_update

    kinds = {"S": OperatorKind.SOURCE, "R": OperatorKind.REPLICATE, "M": OperatorKind.ONE_TO_MANY,
             "O": OperatorKind.ONE_TO_ONE, "B": OperatorKind.BLOCKING, "K": OperatorKind.ONE_TO_ONE}
    flow = Dataflow(tuple(Operator(n, k) for n, k in kinds.items()),
                    (("S", "R"), ("R", "M"), ("R", "O"), ("M", "B"), ("M", "K"), ("M", "O"), ("O", "B"), ("B", "K")))
    operators = {n: UserOperator(k, _user_function, _user_flush) for n, k in kinds.items() if n != "S"}
    timing = Timing(batch_size=3)
    job = user_job(flow, operators, ListSource(()), timing=timing, unbounded=True)
    if set(job.logic) != set(operators) or job.timing != timing or not job.unbounded:
        return (f"user_job gave logic to {sorted(job.logic)} (expected every non-source operator {sorted(operators)}) "
                "or lost the job's options")
    for name, logic in [*job.logic.items(), *((n, user_update(flow, n, _user_function, abs, _user_flush).logic)
                                             for n in operators)]:
        children = flow.children(name)
        kind = kinds[name]
        for key, value in ((4, 5), ("w", 2), (("t", 1), 3)):
            want_state, pairs = _user_function(None, key, value)
            routed = [("", k, v) for k, v in pairs] if not children else \
                [(c, k, v) for k, v in pairs for c in children] if kind is OperatorKind.REPLICATE else \
                [(children[route(k, len(children))], k, v) for k, v in pairs]
            want = (want_state, [] if kind is OperatorKind.BLOCKING else routed)
            got = logic.process(None, key, value)
            if (got[0], list(got[1])) != want:
                return f"user operator {name} ({kind.value}, children {children}) processed ({key!r}, {value}) into {got}, expected {want}"
            flushed = list(logic.flush(7, key))
            want_flush = [] if kind is not OperatorKind.BLOCKING else \
                [(children[route(k, len(children))], k, v) for k, v in _user_flush(7, key)] if children else \
                [("", k, v) for k, v in _user_flush(7, key)]
            if flushed != want_flush:
                return f"user operator {name} ({kind.value}) flushed key {key!r} into {flushed}, expected {want_flush}"
    update = user_update(flow, "O", _user_function, abs)
    if update.transform is not abs:
        return "user_update lost the request's state transformation"
    return None


def sink_types_problem() -> str | None:
    """The sinks' column types (``spark_impl.reconfig.sinks``' docstring): a ``"string"``
    column holds a string as is and anything else as JSON text; ``"long"``, ``"double"`` and
    ``"boolean"`` convert; ``None`` stays null; any other type name is bad input. The suite's
    sink cases write string keys and long values only."""
    from spark_impl.reconfig.sinks import CallbackSink, ParquetSink, _convert, check_types

    cases: list[tuple[str, Any, Any]] = [
        ("string", "k1", "k1"), ("string", ("k", (1, None)), '["k", [1, null]]'), ("string", 2.5, "2.5"),
        ("string", {"b": 1, "a": 2}, '{"a": 2, "b": 1}'), ("long", 3.0, 3), ("long", True, 1), ("double", 2, 2.0),
        ("double", "1.5", 1.5), ("boolean", 0, False), ("boolean", 2, True),
    ]
    for kind, value, want in cases:
        got = _convert(kind)(value)
        if got != want or type(got) is not type(want):
            return f"a sink column of type {kind!r} holds {got!r} for {value!r}, expected {want!r}"
    for kind in ("string", "long", "double", "boolean"):
        check_types(kind, kind)
        if _convert(kind)(None) is not None:
            return f"a null in a sink column of type {kind!r} became {_convert(kind)(None)!r}"
    for make in (lambda: ParquetSink("table", key_type="int"), lambda: CallbackSink(print, value_type="text"),
                 lambda: check_types("string", "float")):
        try:
            make()
        except InputError:
            continue
        return "an unknown sink column type was accepted (expected InputError: bad input)"
    return None


def lru_problem() -> str | None:
    """:class:`spark_impl.lru.LRU` (its docstring): at most ``maxsize`` entries (``maxsize >= 1``,
    else ``ValueError``), the least recently used - inserted, read or loaded - evicted first;
    ``get_or_load`` loads only a missing entry. A cache that is unbounded or evicts the wrong
    entry gives the same answers (every entry can be loaded again), so no run can see it - only
    a month-long stream's memory, or a reload per tuple."""
    from spark_impl.lru import LRU

    for bad in (0, -1):
        try:
            LRU(bad)
        except ValueError:
            continue
        return f"LRU({bad}) was accepted: a cache needs maxsize >= 1"
    cache: LRU[str, int] = LRU(2)
    loads: list[str] = []

    def load(key: str) -> int:
        loads.append(key)
        return len(key)

    cache.put("a", 1)
    cache.put("b", 2)
    if cache.get("a") != 1:
        return "LRU.get lost an entry of a cache below its size"
    cache.put("c", 3)  # "b" is now the least recently used
    if "b" in cache or "a" not in cache or len(cache) != 2:
        return f"after a, b, read a, put c, an LRU(2) holds {sorted(cache._items)}; expected a and c"
    if cache.get_or_load("a", lambda: load("a")) != 1 or cache.get_or_load("dd", lambda: load("dd")) != 2:
        return "LRU.get_or_load returned the wrong value"
    if loads != ["dd"] or "c" in cache or cache.get("b") is not None:
        return f"LRU.get_or_load loaded {loads} (expected only the missing 'dd') or kept the least recently used 'c'"
    cache.discard("a")
    cache.discard("zz")
    if "a" in cache or len(cache) != 1:
        return "LRU.discard did not remove exactly its key"
    one: LRU[int, int] = LRU(1)
    for i in range(5):
        one.put(i, i)
    if len(one) != 1 or one.get(4) != 4:
        return f"an LRU(1) after five puts holds {len(one)} entries"
    return None


def part_sink_problem() -> str | None:
    """``spark_impl.sink`` (the O+ / DGS executors' part files; its docstring), on a local
    directory and on a ``file://`` URI (write-once framed objects): a part reads back as
    written, empty outputs write nothing, a re-executed task's write replaces its part (one
    part, the new outputs), an absent part reads as None, parts are listed in name order and
    only ``.pkl`` entries count. The suite's O+ / DGS runs use local directories only."""
    from spark_impl.sink import read_part, read_parts, write_part

    root = scratch.mkdtemp(prefix="streamproof-parts-check-")
    try:
        for sink in (os.path.join(root, "local"), "file://" + os.path.join(root, "uri")):
            os.makedirs(sink.removeprefix("file://"), exist_ok=True)
            write_part(sink, "b1-p0", [("x", 1), ("y", (2, None))])
            write_part(sink, "b0-p1", [3])
            write_part(sink, "b2-p0", [])
            write_part(sink, "b0-p1", [4, 5])  # the task ran again: its part is replaced
            if not sink.startswith("file://"):
                with open(os.path.join(sink, "notes.txt"), "w", encoding="utf-8") as handle:
                    handle.write("not a part")
            got = list(read_parts(sink))
            want = [("b0-p1", [4, 5]), ("b1-p0", [("x", 1), ("y", (2, None))])]
            if got != want:
                return f"the parts of {sink} read back as {got}, expected {want} (name order, empty parts not written)"
            if read_part(sink, "b9-p9.pkl") is not None:
                return f"an absent part of {sink} did not read as None"
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return None


def object_store_columns_problem() -> str | None:
    """``ObjectStoreSink``'s columns (``spark_impl.reconfig.objectstore``' docstring): the Fries
    executor's six columns with the sink's key and value types; any other DataFrame's columns
    with the Arrow types of its Spark schema (int, bigint, smallint, tinyint, double, float,
    string, boolean), another Spark type refused as bad input; a plain path is the local
    filesystem at its absolute path. The suite's ``objstore`` case delivers Fries rows only."""
    from spark_impl.reconfig.objectstore import COLUMNS, fields_of, filesystem

    def frame(columns: tuple[str, ...], kinds: tuple[str, ...]) -> Any:
        fields = [SimpleNamespace(name=n, dataType=SimpleNamespace(simpleString=lambda k=k: k))
                  for n, k in zip(columns, kinds)]
        return SimpleNamespace(columns=list(columns), schema=SimpleNamespace(fields=fields))

    fries = fields_of(frame(COLUMNS, ("int",) * 6), "long", "double")
    want: tuple[tuple[str, str], ...] = (("job", "int32"), ("batch", "int64"), ("operator", "string"),
                                         ("txn", "string"), ("key", "int64"), ("value", "float64"))
    if fries != want:
        return f"ObjectStoreSink writes the Fries columns as {fries}, expected {want}"
    kinds = ("int", "bigint", "smallint", "tinyint", "double", "float", "string", "boolean")
    other = fields_of(frame(tuple(f"c{i}" for i in range(len(kinds))), kinds), "string", "string")
    arrow = ("int32", "int64", "int16", "int8", "float64", "float32", "string", "bool")
    if other != tuple((f"c{i}", a) for i, a in enumerate(arrow)):
        return f"ObjectStoreSink writes columns of Spark types {kinds} as {other}"
    try:
        fields_of(frame(("job", "m"), ("int", "map<string,int>")), "string", "string")
    except InputError:
        pass
    else:
        return "ObjectStoreSink accepted a map column (expected InputError: bad input)"
    fs, path = filesystem("some/table/")
    if type(fs).__name__ != "LocalFileSystem" or path != os.path.abspath("some/table"):
        return f"the plain path 'some/table/' is {type(fs).__name__} at {path!r}, not the local filesystem"
    return None


def batch_names_problem() -> str | None:
    """Batch directories (``spark_impl.reconfig.storage``): ``batches_on`` lists exactly the
    batches whose directories ``batch_name`` made, as numbers, past the 7-digit padding too (a
    month-long stream at a few seconds per batch passes batch 1,000,000; a restart resumes after
    the highest one listed, so a misread number would reuse batch numbers), ignoring other
    entries. The suite's runs stay below batch 100."""
    from spark_impl.reconfig.storage import batch_name, batches_on
    from spark_impl.store import open_store

    root = scratch.mkdtemp(prefix="streamproof-batches-check-")
    try:
        store = open_store(root)
        made = [0, 7, 99, 999_999, 1_000_000, 1_234_567, 31_000_000]
        for g in made:
            os.makedirs(os.path.join(root, batch_name(g)))
        for other in ("batches/.tmp-g0000004", "batches/gx12", "batches/notes"):
            os.makedirs(os.path.join(root, other))
        listed = batches_on(store)
        if listed != made:
            return f"batches_on lists {listed} for the batch directories of {made} (and three other entries)"
    finally:
        shutil.rmtree(root, ignore_errors=True)
    return None


def validation_problem() -> str | None:
    """``validate_request`` (its docstring) dry-runs a request's transformation "on the
    operator's last committed state of every key" - keys of any supported type, mixed in one
    operator (``spark_impl.keys``): a transformation that holds on every state is accepted, one
    that raises on one key's state is rejected with a message naming that key, whatever the
    other keys' types. A real bug (fixed): the keys were sorted as they are, so an operator holding a
    string key beside a number (or ``None`` beside a tuple) made ``Executor.submit`` raise
    ``TypeError`` at the user instead of answering. The suite's submitted requests run on
    integer keys; its mixed keys (the sink path) come with planned requests, never validated."""
    from spark_impl.reconfig import Request, Update
    from spark_impl.reconfig.api import scenario_job
    from spark_impl.reconfig.model import CatalogueLogic
    from spark_impl.reconfig.validate import validate_request

    job = scenario_job(scenario_from_json(chain_json(2, 4, at=1), "validation"))
    logic = job.logic["O1"]
    assert isinstance(logic, CatalogueLogic)
    mixed = [("a", 1), (None, 2), (("a", 1), 3), ((1, "a"), 4), (2.5, 5), (b"k", 6), (7, 7), (True, 8)]
    for n in range(2, len(mixed) + 1):
        states = {("O1", key): value for key, value in mixed[:n]}
        try:
            accepted = validate_request(job, Request({"O1": Update(logic, lambda state: state)}), states)
            bad_key = mixed[n - 1][0]

            def raising(state: Any, bad: Any = mixed[n - 1][1]) -> Any:
                if state == bad:
                    raise ValueError("refused")
                return state

            rejected = validate_request(job, Request({"O1": Update(logic, raising)}), states)
        except Exception as error:  # noqa: BLE001 - the finding
            return (f"validate_request on states with the keys {[k for k, _ in mixed[:n]]} raised "
                    f"{type(error).__name__}: {error} (keys of mixed types must be accepted or rejected)")
        if accepted is not None:
            return f"an identity transformation on keys {[k for k, _ in mixed[:n]]} was rejected: {accepted}"
        if rejected is None or repr(bad_key) not in rejected and str(bad_key) not in rejected:
            return (f"a transformation raising on the state of key {bad_key!r} (beside keys of other types) "
                    f"was answered {rejected!r}: it must be rejected naming the key")
    return None


def model_problem() -> str | None:
    """The first broken promise (module docstring), or None."""
    for find in (frozen_problem, delays_problem, retention_problem, user_logic_problem, sink_types_problem,
                 lru_problem, part_sink_problem, object_store_columns_problem, batch_names_problem,
                 validation_problem):
        found = find()
        if found is not None:
            return found
    return None
