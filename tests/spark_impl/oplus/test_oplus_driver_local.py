"""The O+ batch driver (``spark_impl.oplus.driver``, :func:`spark_impl.oplus.run_batch`) run for
real on the pure-Python Spark stand-in (:class:`conformance.standin.spark.LocalSpark`): what a
run reports besides its rows, and what it does with the caller's storage.

* elastic rescale: "one handover job sends every key state to its instance under the new
  mapping (... keys that keep their instance stay in the same partition index)" and
  :class:`~spark_impl.oplus.driver.Handover` reports the round, the rescaled scenarios, the
  partitions before and after (the largest parallelism among the scenarios still running) and
  the key states moved - at every parallelism a scenario allows
  (``spec.oplus.budget.MAX_PARALLELISM``);
* what a batch reports (``BatchResult``, the figures ``benchmarks/spark_dgs_oplus.py`` prints):
  a handover per rescale boundary with exactly the keys whose instance ``crc32(key) mod p``
  changes counted (0 when none moves), the partitions before and after; ``applied``, the
  reconfigurations that took effect; ``round_seconds`` and each handover's ``pause_s``, the
  time between two readings of the driver's clock; ``run_scenario`` (what ``streamproof oplus
  --engine spark`` calls, its default cut) gives the reference's rows;
* ``round_plans``: round ``r`` tells every scenario still running its operator, the
  parallelism in force, "the watermark after round ``r - 1`` (``previous``: -inf before round 0;
  what the seeded fault ``drop-near-watermark`` compares with) and the watermark after round
  ``r``"; a scenario whose rounds are over gets no plan;
* ``run_batch``: "``sink_dir`` must be shared storage on a cluster (default: a fresh local temp
  dir)": a caller's directory is the caller's, the temp dir is the run's - also when Spark
  fails;
* bad input to the batch API is refused before any Spark call (InputError naming it): not a list
  of scenarios, a bad scenario (located ``scenarios[i]``), ``items_per_round`` not a whole number
  >= 1 or not one per scenario, an unknown fault; good input reaches Spark (a stand-in session
  whose context raises tells the two apart).
"""

from __future__ import annotations

import math
import os
import random
import tempfile
from pathlib import Path
from typing import Any, cast

import pytest

from spec.errors import InputError

from spec.oplus.budget import MAX_PARALLELISM
from spec.oplus.scenario import instance_of, parse_scenario

import spark_impl.oplus.driver as driver
from spark_impl.oplus import run_batch, run_scenario, run_scenarios
from spark_impl.oplus.feed import Feed
from spark_impl.oplus.operators import OperatorConfig

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


Expected = tuple[int, tuple[int, ...], int, int, int]
"""A handover as ``(round, rescaled scenarios, partitions before, after, keys moved)``."""


def _handover_case(seed: int) -> tuple[dict[str, Any], int, list[Expected]]:
    """Sliding-sum with ``k`` keys, one tuple of each per round and a window far longer than the
    stream (every key has a state at every boundary), rescaled ``p0 -> p1 -> p2`` at the
    watermarks of rounds 0 and 1; the keys drawn so that at least two move at the first
    handover and none at the second. With its items per round and the handovers it reports."""
    rng = random.Random(f"oplus-handover-{seed}")
    sizes = rng.sample(range(1, 6), 3)  # every handover changes the parallelism
    k = rng.randint(5, 8)
    candidates = [f"k{rng.randrange(10_000)}-{i}" for i in range(400)]
    same = [key for key in candidates if instance_of(key, sizes[1]) == instance_of(key, sizes[2])]
    movers = [key for key in same if instance_of(key, sizes[0]) != instance_of(key, sizes[1])]
    keys = movers[:2] + [key for key in same if key not in movers[:2]][: k - 2]
    rng.shuffle(keys)
    case = {"operator": "sliding-sum", "WA": 500, "WS": 1000, "WT": rng.choice(("single", "multi")),
            "parallelism": sizes[0],
            "inputs": [[{"ts": r * k + j, "key": key, "value": rng.randint(-5, 9)}
                        for r in range(3) for j, key in enumerate(keys)]],
            "reconfigurations": [{"watermark": k - 1, "parallelism": sizes[1]},
                                 {"watermark": 2 * k - 1, "parallelism": sizes[2]}]}
    moved = sum(instance_of(key, sizes[0]) != instance_of(key, sizes[1]) for key in keys)
    return case, k, [(0, (0,), sizes[0], sizes[1], moved), (1, (0,), sizes[1], sizes[2], 0)]


class _TickingClock:
    """The driver's ``time`` module: ``perf_counter`` reads 0, 1, 2, ... (one second a reading)."""

    def __init__(self) -> None:
        self.now = -1.0

    def perf_counter(self) -> float:
        self.now += 1.0
        return self.now


@pytest.mark.parametrize("seed", range(5))
def test_a_batch_reports_each_handover_its_reconfigurations_and_its_durations(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, seed: int) -> None:
    case, per_round, expected = _handover_case(seed)
    monkeypatch.setattr(driver, "time", _TickingClock())
    result = run_batch(LocalSpark(), [case], items_per_round=per_round, sink_dir=str(tmp_path))
    assert [(h.after_round, h.scenarios, h.partitions_before, h.partitions_after, h.keys_moved)
            for h in result.handovers] == expected
    assert expected[0][4] >= 2 and result.applied == [2]
    assert len(result.round_seconds) == 3
    assert [h.pause_s for h in result.handovers] + result.round_seconds == [1.0] * 5  # one tick each
    assert sorted(as_rows(result.rows[0])) == sorted(sequential(parse_scenario(case)))


def test_a_handover_is_as_wide_as_the_widest_scenario_still_running(tmp_path: Path) -> None:
    """A narrow scenario rescaled while a wider one runs: the state keeps the wider one's
    instances (its keys must not lose their states), and both give the reference's rows."""
    narrow = {"operator": "sliding-sum", "WA": 100, "WS": 100, "parallelism": 1,
              "inputs": [[{"ts": t, "key": f"n{t}", "value": t} for t in range(1, 7)]],
              "reconfigurations": [{"watermark": 2, "parallelism": 2}]}
    wide = {"operator": "sliding-sum", "WA": 100, "WS": 100, "parallelism": 5,
            "inputs": [[{"ts": t, "key": f"w{t % 4}", "value": t} for t in range(1, 7)]]}
    result = run_batch(LocalSpark(), [narrow, wide], items_per_round=2, sink_dir=str(tmp_path))
    assert [(h.partitions_before, h.partitions_after) for h in result.handovers] == [(5, 5)]
    for case, rows in zip((narrow, wide), result.rows):
        assert sorted(as_rows(rows)) == sorted(sequential(parse_scenario(case)))


def test_run_scenario_gives_the_references_rows_with_its_default_cut() -> None:
    case = {"operator": "wordcount", "WA": 2, "WS": 4, "WT": "single", "parallelism": 3,
            "inputs": [[{"ts": t, "text": text} for t, text in ((1, "a b"), (2, "b #x"), (5, "a a c"), (7, "a b"))]],
            "reconfigurations": [{"watermark": 2, "parallelism": 2}]}
    assert sorted(as_rows(run_scenario(case, spark=LocalSpark()))) == sorted(sequential(parse_scenario(case)))


@pytest.mark.parametrize("drop", [False, True], ids=["no fault", "drop-near-watermark"])
def test_round_plans_carry_the_previous_and_the_new_watermark_of_every_running_scenario(drop: bool) -> None:
    def scenario(lists: int, length: int) -> dict[str, Any]:
        return {"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "multi", "parallelism": 1,
                "inputs": [[{"ts": 3 * t + s, "key": "k", "value": 1} for t in range(length)] for s in range(lists)]}

    parsed = [parse_scenario(scenario(1, 9)), parse_scenario(scenario(2, 4))]
    feeds, sizes = [Feed(parsed[0], 2), Feed(parsed[1], 1)], [3, 2]
    configs = [OperatorConfig.of(s) for s in parsed]
    before: dict[int, float] = {}
    for r in range(max(f.rounds for f in feeds) + 1):
        plans = driver.round_plans(feeds, configs, sizes, r, drop)
        assert sorted(plans) == [i for i, f in enumerate(feeds) if r < f.rounds], r
        for i, plan in plans.items():
            assert (plan.op, plan.parallelism, plan.previous, plan.watermark, plan.drop_near_watermark) == (
                configs[i], sizes[i], before.get(i, -math.inf), feeds[i].watermark(r), drop), (r, i)
        before = {i: plan.watermark for i, plan in plans.items()}
    assert feeds[0].rounds != feeds[1].rounds  # one scenario ended first


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
    ("2.5 items per round", lambda: run_batch(_NoSpark(), [CASE], items_per_round=cast(Any, 2.5)), "items_per_round"),
    ("[2.5] items per round", lambda: run_batch(_NoSpark(), [CASE], items_per_round=cast(Any, [2.5])), "items_per_round"),
    ("'3' items per round", lambda: run_batch(_NoSpark(), [CASE], items_per_round=cast(Any, "3")), "items_per_round"),
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


@pytest.mark.parametrize("function, arguments", [(run_batch, (_NoSpark(), [CASE], ())),
                                                (run_scenarios, (_NoSpark(), [CASE], ())),
                                                (run_scenario, (CASE, _NoSpark()))],
                         ids=["run_batch", "run_scenarios", "run_scenario"])
def test_the_batch_options_are_keyword_only(function: Any, arguments: tuple[Any, ...]) -> None:
    with pytest.raises(TypeError):
        function(*arguments)


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
