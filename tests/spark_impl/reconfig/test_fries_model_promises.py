"""The Fries executor's value types and bookkeeping against their docstrings, without Spark:
promises no run's outputs show (a mutable value, a fold that keeps the wrong delays, a
retention that keeps too much, a conversion no suite sink exercises).

* frozen public values (``Executor.submit`` validates a request at once, a batch makes it
  later: a value that can change in between would run a transformation never validated);
* delay bookkeeping (:mod:`spark_impl.reconfig.progress`);
* what the retention keeps (:mod:`spark_impl.reconfig.retention`, docs/spark.md "Bounded storage");
* user-written operators (:mod:`spark_impl.reconfig.model`: ``user_job``, ``user_update``);
* sink column types (:mod:`spark_impl.reconfig.sinks`) and ``ObjectStoreSink``'s columns
  (:mod:`spark_impl.reconfig.objectstore`);
* batch directory names (:mod:`spark_impl.reconfig.storage`);
* request validation on keys of mixed types (:mod:`spark_impl.reconfig.validate`).
"""

from __future__ import annotations

import dataclasses
import os
import random
from pathlib import Path
from types import SimpleNamespace
from typing import Any, Callable

import pytest

from spec.errors import InputError
from spec.fries.dataflow import Dataflow, Operator, OperatorKind
from spec.fries.scenario import scenario_from_json
from support.fries_chains import chain_json

from spark_impl.keys import route
from spark_impl.reconfig import (
    DirectorySource, GeneratedSource, Job, ListSource, PlannedRequest, Request, RunResult, Timing, Update,
    UserOperator, user_job, user_update,
)
from spark_impl.reconfig.api import scenario_job
from spark_impl.reconfig.control import ControlEntry
from spark_impl.reconfig.model import CatalogueLogic, CatalogueTransform, UserLogic
from spark_impl.reconfig.objectstore import COLUMNS, fields_of, filesystem
from spark_impl.reconfig.progress import DelaySummary, Progress
from spark_impl.reconfig.retention import Retention, needed_by
from spark_impl.reconfig.sinks import CallbackSink, ParquetSink, check_types, column_converter
from spark_impl.reconfig.storage import batch_name, batches_on
from spark_impl.reconfig.validate import validate_request
from spark_impl.store import open_store

SEED = 12
"""Seeded draws, so a failure is reproducible."""

TRIALS = 60
"""Draws per property."""

PUBLIC_VALUES = [Update, Request, PlannedRequest, UserOperator, UserLogic, CatalogueLogic, CatalogueTransform, Timing,
                 Job, ListSource, GeneratedSource, DirectorySource, Retention, ParquetSink, CallbackSink, RunResult,
                 ControlEntry]
"""The value types a user hands to the executor, the result it hands back, and the tasks'
view of a request."""


@pytest.mark.parametrize("cls", PUBLIC_VALUES, ids=lambda cls: cls.__name__)
def test_values_handed_to_the_executor_are_frozen(cls: type) -> None:
    """A request is validated at ``submit`` and made batches later; a job, its logic, sources,
    timing, retention and sink are read at every batch: assigning a field raises."""
    value: Any = object.__new__(cls)  # no __init__: only the class's __setattr__ is exercised
    with pytest.raises(dataclasses.FrozenInstanceError):
        setattr(value, dataclasses.fields(cls)[0].name, None)


def drawn_delays(rng: random.Random, n: int) -> dict[int, float]:
    """``n`` completed requests (some numbers skipped: rejected requests), with delays that are
    exact binary fractions (sums need no rounding)."""
    out: dict[int, float] = {}
    j = 0
    for _ in range(n):
        j += rng.choice((1, 1, 1, 2))
        out[j] = rng.randrange(0, 400_000) / 8
    return out


def assert_summarizes(got: DelaySummary, delays: dict[int, float]) -> None:
    want = (len(delays), sum(delays.values()), max(delays.values(), default=0.0), max(delays, default=0))
    assert (got.count, got.total_ms, got.max_ms, got.last) == want
    if delays:
        assert got.mean_ms == pytest.approx(want[1] / want[0], abs=1e-9)
    else:
        assert got.mean_ms is None


@pytest.mark.parametrize("trial", range(TRIALS))
def test_fold_delays_keeps_the_newest_and_summarizes_every_delay(trial: int) -> None:
    """``Progress.fold_delays(keep)`` keeps the newest ``keep`` delays (by request number) and
    folds the others into ``earlier`` (count, total, maximum, newest folded); ``delay_stats()``
    summarizes every completed request's delay however often it was folded; the record's JSON
    form reads back equal."""
    rng = random.Random(SEED * 1000 + trial)
    keep = rng.randint(1, 5)
    every = drawn_delays(rng, rng.randint(0, 14))
    prog = Progress()
    for j, d in every.items():  # as the executor does: one completion, then a fold, per batch
        prog.delays[j] = d
        if rng.random() < 0.7:
            prog.fold_delays(keep)
    prog.fold_delays(keep)
    newest = dict(sorted(every.items())[-keep:]) if every else {}
    assert prog.delays == newest
    assert_summarizes(prog.earlier, {j: d for j, d in every.items() if j not in newest})
    assert_summarizes(prog.delay_stats(), every)
    assert Progress.from_json(prog.to_json()) == prog


@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_delay_summary_keeps_its_total_in_whole_microseconds(trial: int) -> None:
    """``DelaySummary``: the total kept in whole microseconds (``round(.., 3)`` ms), so the
    record's JSON stays short and a re-written record reads back equal."""
    rng = random.Random(SEED * 1000 + TRIALS + trial)
    total = DelaySummary()
    delays = [rng.uniform(0.0, 5000.0) for _ in range(rng.randint(1, 8))]
    for j, d in enumerate(delays, 1):
        total = total.add(j, d)
    assert abs(total.total_ms - sum(delays)) <= 0.0005 * len(delays) + 1e-9
    assert round(total.total_ms, 3) == total.total_ms


def test_an_empty_delay_summary_has_no_mean() -> None:
    assert DelaySummary().mean_ms is None


@pytest.mark.parametrize("bad", [(0, 1), (1, 0), (-1, 16)])
def test_a_retention_keeps_at_least_one_batch_and_one_delay(bad: tuple[int, int]) -> None:
    with pytest.raises(ValueError):
        Retention(*bad)
    for good in ((1, 1), (2, 16), (3, 5)):
        Retention(*good)


def test_a_retention_keeps_two_batches_and_sixteen_delays_by_default() -> None:
    """docs/spark.md, "Bounded storage": the restart base and one more; 16 delays."""
    default = Retention()
    assert (default.batches, default.delays) == (2, 16)


@pytest.mark.parametrize("trial", range(TRIALS))
def test_a_job_needs_its_pending_its_last_committed_and_its_undelivered_batches(trial: int) -> None:
    """``needed_by``: a job needs its pending batches, its last ``keep`` committed batches and,
    with a sink, the committed batches after the last one delivered."""
    rng = random.Random(SEED * 1000 + 2 * TRIALS + trial)
    batches = sorted(rng.sample(range(0, 400), rng.randint(0, 12)))
    cut = rng.randint(0, len(batches))
    history, pending = batches[:cut], batches[cut:]
    keep = rng.randint(1, 4)
    after = rng.choice([None, -1, *history, *(g + 1 for g in history)]) if history else rng.choice([None, -1])
    want = set(pending) | set(history[-keep:])
    if after is not None:
        want |= {g for g in history if g > after}
    assert needed_by(Progress(history=list(history), pending=list(pending)), keep, after) == want


def user_function(state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[Any, Any]]]:
    """A user operator: counts, emits two keyed outputs (keys routed to different children)."""
    return (state or 0) + value, [(key, 2 * value), (f"{key}/x", value)]


def user_flush(state: Any, key: Any) -> list[tuple[Any, Any]]:
    return [(key, state), ((key, "end"), -1)]


KINDS = {"S": OperatorKind.SOURCE, "R": OperatorKind.REPLICATE, "M": OperatorKind.ONE_TO_MANY,
         "O": OperatorKind.ONE_TO_ONE, "B": OperatorKind.BLOCKING, "K": OperatorKind.ONE_TO_ONE}
FLOW = Dataflow(tuple(Operator(n, k) for n, k in KINDS.items()),
                (("S", "R"), ("R", "M"), ("R", "O"), ("M", "B"), ("M", "K"), ("M", "O"), ("O", "B"), ("B", "K")))
USER_OPERATORS = {n: UserOperator(k, user_function, user_flush) for n, k in KINDS.items() if n != "S"}


def routed(children: tuple[str, ...], kind: OperatorKind, pairs: list[tuple[Any, Any]]) -> list[tuple[str, Any, Any]]:
    """Where the model's docstring sends a user function's ``(key, value)`` outputs."""
    if not children:
        return [("", k, v) for k, v in pairs]
    if kind is OperatorKind.REPLICATE:
        return [(c, k, v) for k, v in pairs for c in children]
    return [(children[route(k, len(children))], k, v) for k, v in pairs]


def test_user_job_gives_every_operator_its_logic_and_keeps_the_jobs_options() -> None:
    timing = Timing(batch_size=3)
    job = user_job(FLOW, USER_OPERATORS, ListSource(()), timing=timing, unbounded=True)
    assert set(job.logic) == set(USER_OPERATORS) and job.timing == timing and job.unbounded
    assert user_update(FLOW, "O", user_function, abs).transform is abs


@pytest.mark.parametrize("name", sorted(USER_OPERATORS))
@pytest.mark.parametrize("made_by", ["user_job", "user_update"])
def test_a_user_operators_outputs_go_where_the_model_routes_them(name: str, made_by: str) -> None:
    """The model's docstring: a user function's outputs go to the child ``route(key, n)``
    picks, to every child from a replicate operator, to the sink (receiver ``""``) from an
    operator without children; a blocking operator emits nothing per tuple and its ``flush``
    output once per key at end of input (routed alike); no other kind flushes."""
    logic = (user_job(FLOW, USER_OPERATORS, ListSource(())).logic[name] if made_by == "user_job"
             else user_update(FLOW, name, user_function, abs, user_flush).logic)
    children, kind = FLOW.children(name), KINDS[name]
    for key, value in ((4, 5), ("w", 2), (("t", 1), 3)):
        want_state, pairs = user_function(None, key, value)
        got = logic.process(None, key, value)
        assert (got[0], list(got[1])) == (want_state, [] if kind is OperatorKind.BLOCKING else routed(children, kind, pairs))
        want_flush = routed(children, kind, user_flush(7, key)) if kind is OperatorKind.BLOCKING else []
        assert list(logic.flush(7, key)) == want_flush


@pytest.mark.parametrize("kind, value, want", [
    ("string", "k1", "k1"), ("string", ("k", (1, None)), '["k", [1, null]]'), ("string", 2.5, "2.5"),
    ("string", {"b": 1, "a": 2}, '{"a": 2, "b": 1}'), ("long", 3.0, 3), ("long", True, 1), ("double", 2, 2.0),
    ("double", "1.5", 1.5), ("boolean", 0, False), ("boolean", 2, True),
])
def test_a_sink_column_holds_its_documented_conversion(kind: str, value: Any, want: Any) -> None:
    """``spark_impl.reconfig.sinks``: a ``"string"`` column holds a string as is and anything
    else as JSON text; ``"long"``, ``"double"`` and ``"boolean"`` convert."""
    got = column_converter(kind)(value)
    assert got == want and type(got) is type(want)


@pytest.mark.parametrize("kind", ["string", "long", "double", "boolean"])
def test_a_null_stays_null_in_every_sink_column(kind: str) -> None:
    check_types(kind, kind)
    assert column_converter(kind)(None) is None


@pytest.mark.parametrize("make", [lambda: ParquetSink("table", key_type="int"),
                                  lambda: CallbackSink(print, value_type="text"),
                                  lambda: check_types("string", "float")])
def test_an_unknown_sink_column_type_is_bad_input(make: Callable[[], Any]) -> None:
    with pytest.raises(InputError):
        make()


def frame(columns: tuple[str, ...], kinds: tuple[str, ...]) -> Any:
    """A DataFrame as ``fields_of`` reads it: columns and a schema of Spark type names."""
    fields = [SimpleNamespace(name=n, dataType=SimpleNamespace(simpleString=lambda k=k: k))
              for n, k in zip(columns, kinds)]
    return SimpleNamespace(columns=list(columns), schema=SimpleNamespace(fields=fields))


def test_object_store_sink_columns_follow_the_fries_layout_or_the_spark_schema() -> None:
    """``spark_impl.reconfig.objectstore``: the Fries executor's six columns with the sink's key
    and value types; any other DataFrame's columns with the Arrow types of its Spark schema;
    another Spark type refused as bad input; a plain path is the local filesystem."""
    assert fields_of(frame(COLUMNS, ("int",) * 6), "long", "double") == (
        ("job", "int32"), ("batch", "int64"), ("operator", "string"), ("txn", "string"), ("key", "int64"),
        ("value", "float64"))
    kinds = ("int", "bigint", "smallint", "tinyint", "double", "float", "string", "boolean")
    arrow = ("int32", "int64", "int16", "int8", "float64", "float32", "string", "bool")
    assert fields_of(frame(tuple(f"c{i}" for i in range(len(kinds))), kinds), "string", "string") == tuple(
        (f"c{i}", a) for i, a in enumerate(arrow))
    with pytest.raises(InputError):
        fields_of(frame(("job", "m"), ("int", "map<string,int>")), "string", "string")
    fs, path = filesystem("some/table/")
    assert type(fs).__name__ == "LocalFileSystem" and path == os.path.abspath("some/table")


def test_batch_directories_list_back_as_their_numbers_past_the_padding(tmp_path: Path) -> None:
    """``spark_impl.reconfig.storage``: ``batches_on`` lists exactly the batches whose
    directories ``batch_name`` made, as numbers, past the 7-digit padding too (a restart
    resumes after the highest one listed), ignoring other entries."""
    made = [0, 7, 99, 999_999, 1_000_000, 1_234_567, 31_000_000]
    for g in made:
        os.makedirs(tmp_path / batch_name(g))
    for other in ("batches/.tmp-g0000004", "batches/gx12", "batches/notes"):
        os.makedirs(tmp_path / other)
    assert batches_on(open_store(str(tmp_path))) == made


MIXED: list[tuple[Any, int]] = [("a", 1), (None, 2), (("a", 1), 3), ((1, "a"), 4), (2.5, 5), (b"k", 6), (7, 7), (True, 8)]


@pytest.mark.parametrize("n", range(2, len(MIXED) + 1))
def test_validation_answers_on_keys_of_mixed_types(n: int) -> None:
    """``validate_request`` dry-runs a transformation "on the operator's last committed state
    of every key", keys of any supported type mixed in one operator: an identity is accepted,
    one that raises on one key's state is rejected naming that key, never a ``TypeError``."""
    job = scenario_job(scenario_from_json(chain_json(2, 4, at=1), "validation"))
    logic = job.logic["O1"]
    states = {("O1", key): value for key, value in MIXED[:n]}
    bad_key, bad = MIXED[n - 1]

    def raising(state: Any) -> Any:
        if state == bad:
            raise ValueError("refused")
        return state

    assert validate_request(job, Request({"O1": Update(logic, lambda state: state)}), states) is None
    rejected = validate_request(job, Request({"O1": Update(logic, raising)}), states)
    assert rejected is not None and (repr(bad_key) in rejected or str(bad_key) in rejected)
