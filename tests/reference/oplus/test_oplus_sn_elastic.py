"""SN under reconfigurations (state transfer at the reconfiguration point, reference.oplus.sn):
it produces O+'s output multiset (STRETCH Corollary 1) and agrees with elastic VSN on random
elastic scenarios; every request is applied or explicitly rejected; the state transfer is
real (keys move, and a run without it loses or duplicates outputs)."""

from __future__ import annotations

import random
from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings, strategies as st

from spec.oplus.semantics import expected_outputs
from reference.oplus.executors import all_tuples, run_sequential
from reference.oplus.run import execute
from reference.oplus.sn import run_sn_elastic
from reference.oplus.vsn import Request, run_vsn
from spec.oplus.scenario import parse_scenario

from support.oplus_gen import Case, cases, mapping_factories, requests
from reference.oplus.operators.catalogue import build


@settings(max_examples=150, deadline=None)
@given(cases(max_len=9), st.integers(1, 4), mapping_factories(), requests(),
       st.integers(0, 2**16))
def test_elastic_sn_equals_spec_and_vsn(case: Case, parallelism: int, factory: Any,
                                        points: list[tuple[int, int]], seed: int) -> None:
    reqs = [Request(mark, size) for mark, size in points]
    expected = expected_outputs(case.op, all_tuples(case.sources))
    sn = run_sn_elastic(case.op, case.sources, parallelism, factory, reqs, random.Random(seed),
                        audit=True)
    vsn = run_vsn(case.op, case.sources, parallelism, factory, reqs, random.Random(seed))
    assert Counter(sn.outputs) == expected
    assert Counter(sn.outputs) == Counter(vsn.outputs)
    for result in (sn, vsn):  # every request is accounted for, none silently dropped
        assert len(result.reconfigurations) + len(result.rejected) == len(reqs)
    # Theorem 3's audit holds for SN too: a key's writes never go back to an older epoch.
    last_epoch: dict[Any, int] = {}
    for write in sn.writes:
        assert write.epoch >= last_epoch.get(write.key, 0)
        last_epoch[write.key] = write.epoch


def _scenario(reconfigurations: list[dict[str, int]], parallelism: int = 2) -> Any:
    events = [{"ts": ts, "key": f"k{ts % 5}", "value": ts} for ts in range(0, 60, 2)]
    return parse_scenario({
        "operator": "sliding-sum", "WA": 5, "WS": 10, "parallelism": parallelism,
        "inputs": [events[0::2], events[1::2]],
        "reconfigurations": reconfigurations,
    }, "test")


@pytest.mark.parametrize("target", [1, 4])
def test_scale_moves_state_and_matches_sequential(target: int) -> None:
    scenario = _scenario([{"watermark": 25, "parallelism": target}])
    sequential = execute(scenario, "sequential")
    sn = execute(scenario, "sn")
    vsn = execute(scenario, "vsn")
    assert Counter(sn.outputs) == Counter(sequential.outputs) == Counter(vsn.outputs)
    (event,) = sn.reconfigurations
    assert event.after == frozenset(range(target)) and not sn.rejected
    assert sn.transferred_keys > 0 and sn.transferred_sets >= sn.transferred_keys


def test_without_state_transfer_outputs_are_wrong(monkeypatch: pytest.MonkeyPatch) -> None:
    """The transfer is what makes SN correct: moving no state loses window contents."""
    scenario = _scenario([{"watermark": 25, "parallelism": 3}])
    sequential = Counter(execute(scenario, "sequential").outputs)
    monkeypatch.setattr("reference.oplus.state.WindowStore.keys", lambda self: [])
    assert Counter(execute(scenario, "sn").outputs) != sequential


def test_requests_reached_only_by_the_end_are_rejected_explicitly() -> None:
    scenario = _scenario([{"watermark": 25, "parallelism": 3},
                          {"watermark": 10_000, "parallelism": 1}])
    for mode in ("sn", "vsn"):
        result = execute(scenario, mode)
        assert len(result.reconfigurations) == 1, mode
        (rejected,) = result.rejected
        assert (rejected.watermark, rejected.parallelism) == (10_000, 1)
        assert "input" in rejected.reason


def test_static_sn_has_no_reconfiguration_cost() -> None:
    case_scenario = _scenario([])
    built = execute(case_scenario, "sn")
    assert built.transferred_keys == built.rerouted == 0 and not built.rejected
    assert Counter(built.outputs) == Counter(execute(case_scenario, "sequential").outputs)


def test_sn_run_rerouted_tuples_keep_every_output() -> None:
    """Buffered (not yet ready) tuples are re-forwarded: a source lagging far behind the
    other keeps many tuples pending at the reconfiguration point."""
    fast = [{"ts": ts, "key": f"k{ts % 3}", "value": 1} for ts in range(0, 40)]
    slow = [{"ts": ts, "key": f"k{ts % 4}", "value": 2} for ts in range(0, 40, 4)]
    scenario = parse_scenario({
        "operator": "sliding-sum", "WA": 2, "WS": 6, "parallelism": 2,
        "inputs": [fast, slow], "reconfigurations": [{"watermark": 12, "parallelism": 3}],
    }, "test")
    for seed in range(20):
        result = execute(scenario, "sn", seed)
        assert Counter(result.outputs) == Counter(run_sequential(
            *_op_and_sources(scenario)).outputs), seed
    assert any(execute(scenario, "sn", seed).rerouted > 0 for seed in range(20))


def _op_and_sources(scenario: Any) -> tuple[Any, Any]:
    built = build(scenario)
    return built.op, built.sources

