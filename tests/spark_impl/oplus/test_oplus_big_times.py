"""Event times above 2**53 in the O+ executor (the scenario format allows up to 2**62,
``spec.oplus.scenario.MAX_TIME``): watermarks and bounds stay exact ints, never floats.

The bug: ``Feed._bounds`` took ``max(running, float(ts))`` and ``streaming_log.decode_time``
returned ``float(value)``; a float has 53 bits of mantissa, so ``2**60 + 200`` became
``2**60 + 256``. On sliding-sum (WA = WS = 1) over the lists ``[2**60 + 200, 2**60 + 250]`` and
``[2**60 + 250]`` with one item per round, round 0's watermark ``2**60 + 256`` expired the
window ``[2**60 + 250, 2**60 + 251)`` before the second list's tuple at ``2**60 + 250`` arrived:
the executor emitted ``(251, a, 1)`` twice, the sequential reference ``(251, a, 2)`` once.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from spec.oplus.emission import round_watermark
from spec.oplus.scenario import parse_scenario

from spark_impl.oplus import run_batch
from spark_impl.oplus.feed import Feed
from spark_impl.oplus.streaming_log import Commit, decode_time, encode_time

from conformance.oplus.oracles import as_rows, sequential
from conformance.standin.spark import LocalSpark

BIG = 2**60
"""Above 2**53 (a float rounds it), below ``MAX_TIME = 2**62``."""


def big_times_case() -> dict[str, Any]:
    """Sliding-sum WT multi, WA = WS = 1, two lists at ``2**60 + 200 .. 2**60 + 250``."""
    def item(ts: int) -> dict[str, Any]:
        return {"ts": BIG + ts, "key": "a", "value": 1}

    return {"operator": "sliding-sum", "WA": 1, "WS": 1, "WT": "multi", "parallelism": 2,
            "inputs": [[item(200), item(250)], [item(250)]]}


def test_the_feed_keeps_big_watermarks_exact() -> None:
    case = dict(big_times_case(), inputs=[[{"ts": BIG + 200, "key": "a", "value": 1}, {"watermark": BIG + 201},
                                           {"ts": BIG + 250, "key": "a", "value": 1}],
                                          [{"ts": BIG + 250, "key": "a", "value": 1}]])
    fed = Feed(parse_scenario(case), 1)
    marks = [fed.watermark(r) for r in range(-1, fed.rounds)]
    assert marks == [-math.inf, BIG + 200, BIG + 201, math.inf]
    assert all(isinstance(w, int) for w in marks[1:-1])


def test_a_rescale_just_above_a_big_watermark_is_not_applied_early() -> None:
    case = dict(big_times_case(), parallelism=3, reconfigurations=[{"watermark": BIG + 201, "parallelism": 1}])
    fed = Feed(parse_scenario(case), 1)
    assert fed.parallelism_after(0) == (3, 0)


def test_the_driver_outputs_equal_the_sequential_reference_above_2_to_the_53(tmp_path: Path) -> None:
    """The batch driver's own loop (``Feed``, ``round_plans``, ``process``, handovers and the
    sink) on the pure-Python Spark stand-in; the second scenario asks for a rescale at
    ``2**60 + 201``, which no round's watermark reaches while the stream runs (round 0's is
    ``2**60 + 200``, the last one's +inf)."""
    case = big_times_case()
    wide = dict(case, parallelism=3, reconfigurations=[{"watermark": BIG + 201, "parallelism": 1}])
    result = run_batch(LocalSpark(), [case, wide], items_per_round=1, sink_dir=str(tmp_path))
    got = sorted((ts - BIG, key, value) for ts, key, value in as_rows(result.rows[0]))
    assert got == [(201, "a", "1"), (251, "a", "2")]
    for scenario, rows in zip((case, wide), result.rows):
        assert sorted(as_rows(rows)) == sorted(sequential(parse_scenario(scenario)))
    assert result.applied == [0, 0] and result.handovers == []


@pytest.mark.parametrize("value", [2**53 + 1, 2**60 + 1, -(2**60) - 1, 2**62 - 1, -(2**62) + 1])
def test_a_big_time_survives_the_commit_record(value: int) -> None:
    assert decode_time(json.loads(json.dumps(encode_time(value)))) == value
    record = Commit(3, {0: 1}, {0: 1}, 1, {(0, 0): value, (0, 1): math.inf}, {0: value})
    back = Commit.from_json(json.loads(json.dumps(record.to_json())))
    assert back == record and back.watermark[0] == value and back.bounds[(0, 1)] == math.inf


def test_infinite_times_still_round_trip() -> None:
    assert decode_time(encode_time(math.inf)) == math.inf and decode_time(encode_time(-math.inf)) == -math.inf


def test_the_round_oracle_keeps_big_watermarks_exact() -> None:
    """Failed before the fix: ``spec.oplus.emission.round_watermark`` took ``float(ts)``, so round
    0's watermark over ``2**60 + 200`` read ``2**60 + 256`` and the oracle judged the executor's
    emission rounds against a watermark no input carries."""
    scenario = parse_scenario(big_times_case())
    marks = [round_watermark(scenario, 1, r) for r in range(-1, 2)]
    assert marks == [-math.inf, BIG + 200, math.inf]  # round 1: both lists ended
    assert isinstance(marks[1], int)
