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

import inspect
import json
import math
import textwrap
from pathlib import Path
from typing import Any

import pytest

import spark_impl.oplus.feed as feed
import spark_impl.oplus.streaming_log as streaming_log
from conformance.oplus.checks.commit import format_problems
from conformance.standin.spark import LocalSpark
from conformance.oplus.checks.model import BIG, big_time_problems, big_times_case
from conformance.oplus.oracles import as_rows, sequential
from spark_impl.oplus import run_batch
from spark_impl.oplus.feed import Feed
from spark_impl.oplus.streaming_log import Commit, decode_time, encode_time
from spec.oplus.scenario import parse_scenario
from support.source_rewrite import rewritten_function


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
    case = big_times_case()
    result = run_batch(LocalSpark(), [case], items_per_round=1, sink_dir=str(tmp_path))
    got = sorted((ts - BIG, key, value) for ts, key, value in as_rows(result.rows[0]))
    assert got == [(201, "a", "1"), (251, "a", "2")]
    assert sorted(as_rows(result.rows[0])) == sorted(sequential(parse_scenario(case)))
    assert big_time_problems(str(tmp_path / "check")) == []


@pytest.mark.parametrize("value", [2**53 + 1, 2**60 + 1, -(2**60) - 1, 2**62 - 1, -(2**62) + 1])
def test_a_big_time_survives_the_commit_record(value: int) -> None:
    assert decode_time(json.loads(json.dumps(encode_time(value)))) == value
    record = Commit(3, {0: 1}, {0: 1}, 1, {(0, 0): value, (0, 1): math.inf}, {0: value})
    back = Commit.from_json(json.loads(json.dumps(record.to_json())))
    assert back == record and back.watermark[0] == value and back.bounds[(0, 1)] == math.inf


def test_infinite_times_still_round_trip() -> None:
    assert decode_time(encode_time(math.inf)) == math.inf and decode_time(encode_time(-math.inf)) == -math.inf
    assert format_problems() == []


def _float_bounds() -> Any:
    """``Feed._bounds`` (a cached_property) as it was: bounds through float."""
    source = textwrap.dedent(inspect.getsource(Feed.__dict__["_bounds"].func))
    old = "max(running, item.value if isinstance(item, ScenarioMark) else item.ts)"
    assert source.count(old) == 1
    source = source.replace("@cached_property\n", "").replace(
        old, "max(running, float(item.value if isinstance(item, ScenarioMark) else item.ts))")
    namespace = dict(vars(feed))
    exec(compile(source, "<changed>", "exec"), namespace)  # noqa: S102
    return property(namespace["_bounds"])


def test_the_model_check_names_float_bounds(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(Feed, "_bounds", _float_bounds())
    found = big_time_problems(str(tmp_path))
    assert found and "differ from the sequential reference" in found[0], found
    assert "(251, 'a', '1'), (251, 'a', '1')" in found[0]


def test_the_commit_check_names_a_float_decode_time(monkeypatch: pytest.MonkeyPatch) -> None:
    wrong = rewritten_function(streaming_log, "decode_time", "else int(value)", "else float(value)")
    monkeypatch.setattr(streaming_log, "decode_time", wrong)
    found = format_problems()
    assert found and "the time 1152921504606846977" in found[0], found


def test_the_round_oracle_keeps_big_watermarks_exact() -> None:
    """Failed before the fix: ``spec.oplus.emission.round_watermark`` took ``float(ts)``, so round
    0's watermark over ``2**60 + 200`` read ``2**60 + 256`` and the oracle judged the executor's
    emission rounds against a watermark no input carries."""
    from spec.oplus.emission import round_watermark

    scenario = parse_scenario(big_times_case())
    marks = [round_watermark(scenario, 1, r) for r in range(-1, 2)]
    assert marks == [-math.inf, BIG + 200, math.inf]  # round 1: both lists ended
    assert isinstance(marks[1], int)
