"""The O+ batch driver (``spark_impl.oplus.driver``, :func:`spark_impl.oplus.run_batch`) run for
real on the pure-Python Spark stand-in (:class:`conformance.standin.spark.LocalSpark`): what a
run reports besides its rows, and what it does with the caller's storage.

* elastic rescale: "one handover job sends every key state to its instance under the new
  mapping (... keys that keep their instance stay in the same partition index)" and
  :class:`~spark_impl.oplus.driver.Handover` reports the round, the rescaled scenarios, the
  partitions before and after (the largest parallelism among the scenarios still running) and
  the key states moved - at every parallelism a scenario allows
  (``spec.oplus.budget.MAX_PARALLELISM``);
* ``run_batch``: "``sink_dir`` must be shared storage on a cluster (default: a fresh local temp
  dir)": a caller's directory is the caller's, the temp dir is the run's - also when Spark
  fails;
* bad input to the batch API is refused before any Spark call (InputError naming it): not a list
  of scenarios, a bad scenario (located ``scenarios[i]``), ``items_per_round`` not a whole number
  >= 1 or not one per scenario, an unknown fault; good input reaches Spark (a stand-in session
  whose context raises tells the two apart).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from spec.errors import InputError

from spec.oplus.budget import MAX_PARALLELISM
from spec.oplus.scenario import parse_scenario

from spark_impl.oplus import run_batch, run_scenario, run_scenarios

from conformance.oplus.oracles import as_rows, sequential
from conformance.standin.spark import LocalSpark

from support.oplus_keys import key_of_instance


def test_a_rescale_from_the_largest_parallelism_moves_exactly_the_keys_whose_instance_changes(
        tmp_path: Path) -> None:
    """At :data:`MAX_PARALLELISM` -> half of it: a key of instance ``i < P/2`` keeps its
    instance, one of instance ``i >= P/2`` moves to ``i - P/2``; both windows span the rescale,
    so a state left behind (or moved twice) splits its window's sum."""
    wide, half = MAX_PARALLELISM, MAX_PARALLELISM // 2
    stay, index = key_of_instance(half // 2, half, wide)
    move, gone = key_of_instance(half + half // 2, wide, wide)
    case = {"operator": "sliding-sum", "WA": 100, "WS": 100, "WT": "multi", "parallelism": wide,
            "inputs": [[{"ts": 1, "key": stay, "value": 1}, {"ts": 2, "key": move, "value": 2},
                        {"ts": 10, "key": stay, "value": 4}, {"ts": 11, "key": move, "value": 8}]],
            "reconfigurations": [{"watermark": 2, "parallelism": half}]}
    result = run_batch(LocalSpark(), [case], items_per_round=2, sink_dir=str(tmp_path))
    assert [(h.after_round, h.scenarios, h.partitions_before, h.partitions_after, h.keys_moved)
            for h in result.handovers] == [(0, (0,), wide, half, 1)]
    assert sorted(as_rows(result.rows[0])) == sorted(sequential(parse_scenario(case)))
    owner = {row["key"]: instance for row, (_, instance) in zip(result.rows[0], result.emitted[0])}
    assert owner == {stay: index, move: gone - half}


FORWARD = {"operator": "forward", "WA": 1, "WS": 1, "parallelism": 2,
           "inputs": [[{"ts": 1, "value": 5}], [{"ts": 2, "value": 6}]]}


def test_a_callers_sink_directory_is_kept(tmp_path: Path) -> None:
    sink = tmp_path / "sink"
    sink.mkdir()
    (sink / "mine.txt").write_text("the caller's", encoding="utf-8")
    rows = run_batch(LocalSpark(), [FORWARD], sink_dir=str(sink)).rows[0]
    assert (sink / "mine.txt").read_text(encoding="utf-8") == "the caller's"
    assert sorted(as_rows(rows)) == sorted(sequential(parse_scenario(FORWARD)))


def test_the_default_sink_is_a_temporary_directory_removed_after_the_run(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    made: list[str] = []
    real = tempfile.mkdtemp

    def recorded(*args: Any, **kwargs: Any) -> str:
        made.append(real(*args, **kwargs))
        return made[-1]

    monkeypatch.setattr(tempfile, "mkdtemp", recorded)
    rows = run_scenario(FORWARD, spark=LocalSpark())
    assert len(made) == 1 and os.path.dirname(made[0]) == str(tmp_path)
    assert list(tmp_path.iterdir()) == []
    assert sorted(as_rows(rows)) == sorted(sequential(parse_scenario(FORWARD)))


class _Reached(Exception):
    """Raised by :class:`_NoSpark` when a call got past its validation to the Spark context."""


class _NoSpark:
    """A SparkSession stand-in whose context is never there: reaching it means "accepted"."""

    @property
    def sparkContext(self) -> Any:  # noqa: N802 - Spark's name
        raise _Reached()


CASE = {"operator": "sliding-sum", "WA": 2, "WS": 4, "parallelism": 2,
        "inputs": [[{"ts": t, "key": "k", "value": t} for t in range(6)]]}
LONG = {"operator": "forward", "WA": 1, "WS": 1, "parallelism": 2,
        "inputs": [[{"ts": t, "value": t} for t in range(40)], []]}  # cut into ceil(40 / ROUNDS) = 3 a round

REFUSED: list[tuple[str, Any, str | None]] = [
    ("a string for the scenarios", lambda: run_batch(_NoSpark(), "scenario"), "scenarios"),
    ("one scenario, not in a list", lambda: run_batch(_NoSpark(), CASE), "scenarios"),  # type: ignore[arg-type]
    ("a bad second scenario", lambda: run_batch(_NoSpark(), [CASE, dict(CASE, WA=0)]), "scenarios[1]"),
    ("two items_per_round for one scenario", lambda: run_batch(_NoSpark(), [CASE], items_per_round=[1, 2]),
     "items_per_round"),
    ("one items_per_round for two scenarios", lambda: run_batch(_NoSpark(), [CASE, CASE], items_per_round=[1]),
     "items_per_round"),
    ("0 items per round", lambda: run_batch(_NoSpark(), [CASE], items_per_round=0), "items_per_round"),
    ("2.5 items per round", lambda: run_batch(_NoSpark(), [CASE], items_per_round=2.5), "items_per_round"),
    ("[2.5] items per round", lambda: run_batch(_NoSpark(), [CASE], items_per_round=[2.5]), "items_per_round"),
    ("'3' items per round", lambda: run_batch(_NoSpark(), [CASE], items_per_round="3"), "items_per_round"),
    ("[True] items per round", lambda: run_batch(_NoSpark(), [CASE], items_per_round=[True]), "items_per_round"),
    ("an unknown fault", lambda: run_batch(_NoSpark(), [CASE], faults=["drop-near-watermarks"]), None),
    ("run_scenario with 0 items per round", lambda: run_scenario(CASE, spark=_NoSpark(), items_per_round=0),
     "items_per_round"),
]


@pytest.mark.parametrize("what, call, where", REFUSED, ids=[r[0] for r in REFUSED])
def test_bad_batch_input_is_refused_before_any_spark_call(what: str, call: Any, where: str | None) -> None:
    with pytest.raises(InputError) as refused:
        call()
    assert where is None or (refused.value.where or "").startswith(where)


ACCEPTED: list[tuple[str, Any]] = [
    ("one item per round", lambda sink: run_batch(_NoSpark(), [CASE], items_per_round=1, sink_dir=sink)),
    ("1 and 3 items per round", lambda sink: run_batch(_NoSpark(), [CASE, CASE], items_per_round=[1, 3],
                                                       sink_dir=sink)),
    ("run_scenario's default cut", lambda sink: run_scenario(CASE, spark=_NoSpark())),
    ("run_scenario's default cut of 40 items", lambda sink: run_scenario(LONG, spark=_NoSpark())),
    ("run_scenarios", lambda sink: run_scenarios(_NoSpark(), [CASE, LONG], items_per_round=2)),
]


@pytest.mark.parametrize("what, call", ACCEPTED, ids=[a[0] for a in ACCEPTED])
def test_good_batch_input_reaches_spark(tmp_path: Path, what: str, call: Any) -> None:
    with pytest.raises(_Reached):
        call(str(tmp_path))


def test_the_batch_options_are_keyword_only() -> None:
    for call in (lambda: run_batch(_NoSpark(), [CASE], ()), lambda: run_scenarios(_NoSpark(), [CASE], ()),
                 lambda: run_scenario(CASE, _NoSpark())):
        with pytest.raises(TypeError):
            call()


class _BrokenContext:
    def parallelize(self, *_: Any) -> Any:
        raise RuntimeError("the cluster is gone")


class _BrokenSpark:
    def __init__(self, context: bool) -> None:
        self.context = context

    @property
    def sparkContext(self) -> Any:  # noqa: N802 - Spark's name
        if not self.context:
            raise RuntimeError("stopped SparkContext")
        return _BrokenContext()


@pytest.mark.parametrize("context", [False, True], ids=["no context", "a failing first job"])
def test_run_batch_leaves_no_temporary_sink_when_spark_fails(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                            context: bool) -> None:
    """Regression: ``run_batch`` created its temporary sink directory before the ``try`` that
    removes it, so a session whose context is gone, or a first Spark job that failed, left a
    ``streamproof-oplus-sink-*`` directory behind on every call."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    with pytest.raises(RuntimeError):
        run_batch(_BrokenSpark(context), [FORWARD])
    assert list(tmp_path.iterdir()) == []
