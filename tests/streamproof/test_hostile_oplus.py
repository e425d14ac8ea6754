"""Hostile O+ input, unbounded work and lone surrogates: scenarios asking for more
work than can finish are refused before anything runs (spec.oplus.budget), the key -> instance
mapping accepts every JSON string, and the modes agree on them."""

from __future__ import annotations

import json
import time
import zlib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from conformance.oplus.cases import oplus_scenarios
from reference.oplus.operators.text import pairs_of
from reference.oplus.run import run_scenario
from spec.errors import InputError
from spec.oplus.budget import MAX_WORK, work_estimate
from spec.oplus.scenario import instance_of, parse_scenario
from support.hostile_cli import assert_contract, run
from reference.oplus.state import WindowStore
from spec.oplus.model import WindowSet

SUM: dict[str, Any] = {"operator": "sliding-sum", "WA": 1, "WS": 2, "parallelism": 1,
                       "inputs": [[{"ts": 1, "key": "a", "value": 3}]]}
FORWARD: dict[str, Any] = {"operator": "forward", "WA": 1, "WS": 1, "parallelism": 1,
                           "inputs": [[{"ts": 1, "value": 1}], []]}
JOIN: dict[str, Any] = {"operator": "scalejoin", "WA": 1, "WS": 10, "parallelism": 1,
                        "inputs": [[{"ts": 1, "x": 1, "y": 1}], [{"ts": 2, "a": 1, "b": 1}]]}


def _write(tmp_path: Path, scenario: dict[str, Any]) -> str:
    path = tmp_path / "scenario.json"
    path.write_text(json.dumps(scenario))
    return str(path)


UNBOUNDED = [
    ({**SUM, "WS": 10**12}, "window instances"),                      # spun forever (multi)
    ({**SUM, "WS": 10**12, "WT": "single"}, "window instances"),      # 324 MB after 20 s
    ({**SUM, "WS": 10**7}, "window instances"),                       # > 20 s
    ({**SUM, "parallelism": 10**6}, "at most 1,024 instances"),        # sn / vsn: 1.7 GB
    ({**SUM, "reconfigurations": [{"watermark": 0, "parallelism": 10**6}]}, "at most 1,024"),
    ({**FORWARD, "params": {"keys": 10**6}}, "at most 10,000 keys"),  # hung
    ({**FORWARD, "params": {"keys": 10**12}}, "at most 10,000 keys"),  # MemoryError
    ({**JOIN, "params": {"keys": 10**6}}, "at most 10,000 keys"),     # hung
    ({**JOIN, "WS": 10**12}, "WS = 1,000,000,000,000"),               # hung
    ({**SUM, "parallelism": 1000, "inputs": [[{"ts": t, "key": "a", "value": 1}
                                              for t in range(3000)]]}, "delivered to 1,000"),
    ({"operator": "paircount", "WA": 1, "WS": 3, "parallelism": 1,
      "params": {"duplication": "high"},
      "inputs": [[{"ts": 1, "text": " ".join(f"w{i}" for i in range(3000))}]]}, "(tuple, key)"),
]


@pytest.mark.parametrize("scenario, problem", UNBOUNDED)
def test_unbounded_scenarios_are_refused_at_once_in_every_mode(
        tmp_path: Path, scenario: dict[str, Any], problem: str) -> None:
    path = _write(tmp_path, scenario)
    for mode in ("sequential", "sn", "vsn"):
        started = time.monotonic()
        outcome = run(["oplus", path, "--mode", mode, "--json"], seconds=10)
        assert_contract(outcome)
        assert outcome.code == 2 and problem in outcome.err, outcome.describe()
        assert time.monotonic() - started < 3, outcome.describe()


def test_event_times_beyond_64_bits_are_bad_input(tmp_path: Path) -> None:
    # was: exit 3 (OverflowError) in vsn, accepted elsewhere
    path = _write(tmp_path, {**SUM, "inputs": [[{"ts": 10**400, "key": "a", "value": 1}]]})
    for mode in ("sequential", "sn", "vsn"):
        outcome = run(["oplus", path, "--mode", mode])
        assert outcome.code == 2 and "64-bit" in outcome.err, outcome.describe()


def test_a_lone_surrogate_key_runs_alike_in_every_mode(tmp_path: Path) -> None:
    # was: sequential exit 0, sn and vsn exit 3 (the key hash encoded to strict UTF-8)
    scenario = {**SUM, "parallelism": 3, "reconfigurations": [{"watermark": 2, "parallelism": 2}],
                "inputs": [[{"ts": 1, "key": "\ud800", "value": 3}, {"ts": 2, "key": "b", "value": 1},
                            {"ts": 4, "key": "\udfff\ud800", "value": 5}]]}
    path = _write(tmp_path, scenario)
    outputs = []
    for mode in ("sequential", "sn", "vsn"):
        outcome = run(["oplus", path, "--mode", mode, "--json"])
        assert outcome.code == 0, outcome.describe()
        outputs.append(json.loads(outcome.out))
        text = run(["oplus", path, "--mode", mode])
        assert text.code == 0 and "\\ud800" in text.out, text.describe()
    assert outputs[0] == outputs[1] == outputs[2]
    assert {row["key"] for row in outputs[0]} == {"\ud800", "b", "\udfff\ud800"}


def test_instance_of_accepts_every_json_string() -> None:
    assert instance_of("\ud800", 7) == instance_of("\ud800", 7)
    assert instance_of("abc", 5) == instance_of("abc", 5)  # unchanged for valid UTF-8
    assert instance_of("h\u00e9", 1000) == zlib.crc32("h\u00e9".encode()) % 1000


def test_empty_text_is_allowed_and_a_non_string_says_string(tmp_path: Path) -> None:
    base = {"operator": "wordcount", "WA": 1, "WS": 1, "parallelism": 1}
    ok = run(["oplus", _write(tmp_path, {**base, "inputs": [[{"ts": 1, "text": ""}]]}), "--json"])
    assert ok.code == 0 and json.loads(ok.out) == []
    bad = run(["oplus", _write(tmp_path, {**base, "inputs": [[{"ts": 1, "text": 5}]]})])
    # was: "expected a non-empty string" although the empty string is allowed
    assert bad.code == 2 and "expected a string, got the number 5" in bad.err, bad.describe()


def test_paircount_of_a_long_text_is_linear_in_its_pairs() -> None:
    # pairs_of enumerated every (i, j) and filtered: 5 * 10**9 steps for 10**5 words
    words = " ".join(f"w{i}" for i in range(100_000))
    started = time.monotonic()
    assert len(pairs_of(words, 3)) == 3 * 100_000 - 6
    assert time.monotonic() - started < 5


@given(st.lists(st.sampled_from(["a", "b", "c", "dd"]), max_size=12),
       st.sampled_from([None, 0, 1, 3, 10]))
def test_pairs_of_is_the_definition(words: list[str], distance: int | None) -> None:
    expected = {f"{words[i]} {words[j]}" for i in range(len(words))
                for j in range(i + 1, len(words)) if distance is None or j - i <= distance}
    assert pairs_of(" ".join(words), distance) == expected


@settings(max_examples=40)
@given(oplus_scenarios())
def test_generated_scenarios_are_within_budget_and_the_estimate_bounds_the_outputs(
        raw: dict[str, Any]) -> None:
    scenario = parse_scenario(raw)  # never refused: real scenarios are far below the limits
    work, _ = work_estimate(scenario)
    assert work <= MAX_WORK
    assert len(run_scenario(scenario, "sequential")) <= work


def test_refusal_names_the_json_path() -> None:
    with pytest.raises(InputError, match=r"^s\.json: params\.keys: at most"):
        parse_scenario({**FORWARD, "params": {"keys": 10**6}}, "s.json")


def test_window_store_lookups_are_logarithmic_in_ws_over_wa() -> None:
    # a tuple of a WA = 1, WS = 300,000 scenario creates 300,000 window sets of one key; each
    # check&Create / set rebuilt the list of left boundaries (quadratic: 2 tuples did not
    # finish in 120 s)

    store = WindowStore()
    started = time.monotonic()
    for left in range(20_000):
        store.check_and_create("k", left, (None,))
        store.set("k", WindowSet(left, "k", (left,)), left, 0, 0)
    assert store.check_and_create("k", 7, (None,)).states == (7,)
    assert time.monotonic() - started < 3


def test_many_instances_times_items_is_refused(tmp_path: Path) -> None:
    # 300 items x 1,024 instances is 0.3M deliveries but each step of the SN / VSN simulation
    # looks at every instance: it ran for more than 60 s
    scenario = {**SUM, "parallelism": 1024,
                "inputs": [[{"ts": t, "key": str(t), "value": 1} for t in range(300)]]}
    outcome = run(["oplus", _write(tmp_path, scenario), "--mode", "sn", "--json"], seconds=10)
    assert outcome.code == 2 and "delivered to 1,024 instances" in outcome.err, outcome.describe()


@pytest.mark.parametrize("scenario", [
    {**FORWARD, "params": {"keys": 10**400}},             # was OverflowError (exit 3)
    {**SUM, "parallelism": 10**400},
    {**SUM, "reconfigurations": [{"watermark": 0, "parallelism": 10**400}]},
])
def test_huge_counts_are_refused_in_one_short_line(tmp_path: Path, scenario: dict[str, Any]) -> None:
    outcome = run(["oplus", _write(tmp_path, scenario)])
    assert_contract(outcome)
    assert outcome.code == 2 and len(outcome.err) < 300, outcome.describe()
