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
  dir)": a caller's directory is the caller's, the temp dir is the run's.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

from spec.oplus.budget import MAX_PARALLELISM
from spec.oplus.scenario import parse_scenario

from spark_impl.oplus import run_batch, run_scenario

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
