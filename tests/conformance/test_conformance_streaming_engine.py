"""``streamproof conformance --engine spark-streaming`` (conformance.run): the
suites through the live front ends. Fast tests: the CLI's contract (faults, bad input), how a
DGS case is cut into files, which Fries cases the live path runs, and one crashing alignment
probe through the live front end that must pass clean and fail under each Fries fault. Slow
ones: live runs judged clean, and seeded faults caught through the CLI."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any
from concurrent.futures import ThreadPoolExecutor

import pytest

from spec.dgs.streams import StreamEvent, value_to_json

from streamproof.main import main
from conformance.dgs.engines.live import FILES, case_chunks, streaming_engine
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.oracles import judge
from conformance.fries.engines.paths import applicable, prepare
from conformance.fries.suite import stepped_cases, streaming_cases, explain
from conformance.fries.engines.live import StreamingEngine
from conformance.fries.oracles import judge as judge_fries
from conformance.run import RunConfig, run_streaming_suites


def test_list_faults_of_the_live_engine(capsys: Any) -> None:
    assert main(["conformance", "--engine", "spark-streaming", "--list-faults", "--json"]) == 0
    assert set(json.loads(capsys.readouterr().out)) == {
        "naive", "missing-alignment", "double-transform", "duplicate-after-restart", "window-off-by-one",
        "drop-near-watermark"}


@pytest.mark.parametrize("argv, message", [
    (["--suite", "dgs", "--inject-fault", "naive"], "select --suite fries or all"),
    (["--suite", "fries", "--inject-fault", "window-off-by-one"], "select --suite oplus or all"),
    (["--suite", "fries", "--inject-fault", "nope"], "unknown fault 'nope'"),
])
def test_faults_without_their_suite_are_bad_input(argv: list[str], message: str, capsys: Any) -> None:
    assert main(["conformance", "--engine", "spark-streaming", *argv]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_dgs_case_files_keep_every_item_once_and_each_stream_in_order() -> None:
    for case in draw_dgs_cases(30, 3):
        chunks = case_chunks(case)
        assert 1 <= len(chunks) <= FILES
        rows = [row for chunk in chunks for row in chunk]
        for stream, items in case.streams.items():
            mine = [r for r in rows if r["stream"] == stream]
            assert [r["ts"] for r in mine] == [i.ts for i in items]  # FIFO per stream, nothing lost
            assert [r.get("event") for r in mine] == [
                value_to_json(i.payload) if isinstance(i, StreamEvent) else None for i in items]
    several = [len(case_chunks(c)) for c in draw_dgs_cases(30, 3)]
    assert max(several) > 1  # the input really arrives in several files


@pytest.mark.slow
def test_live_dgs_engine_judged_clean_and_a_duplicated_output_is_caught(spark: Any) -> None:
    cases = draw_dgs_cases(6, 0)
    observed = streaming_engine(spark)(cases)
    assert [judge(c, o) for c, o in zip(cases, observed)] == [[]] * len(cases)
    # the judge has teeth on this path: an output seen twice is an outputs failure
    outputs, state, processed = observed[0]
    if outputs:
        assert [o for o, _ in judge(cases[0], (outputs + outputs[:1], state, processed))] == ["outputs"]
    assert Counter(len(case_chunks(c)) > 1 for c in cases)[True] >= 1


@pytest.mark.slow
def test_live_fries_engine_catches_double_transform_on_cases_that_pass_without_it(spark: Any) -> None:
    cases = streaming_cases(8, 0)[:2]  # benchmarks/live_faults.py: both fail only with the fault
    for faults, wanted in ((frozenset(), [True, True]), (frozenset({"double-transform"}), [False, False])):
        outcomes = StreamingEngine("fries", faults, spark=spark).run(cases)
        assert [judge_fries(prepare("streaming", c), o).ok for c, o in zip(cases, outcomes)] == wanted


def test_live_fries_cases_keep_their_crash_points_and_the_stepped_section_fits_the_front_end() -> None:
    stepped = stepped_cases(0)
    assert len(stepped) >= 8 and all(applicable("streaming", c) for c in stepped)
    assert sum(bool(c.timing.restarts) for c in stepped) >= 3  # crashes while heads are released
    assert any(len(c.reconfigurations) == 2 for c in stepped)  # a second request: align afresh
    random = streaming_cases(30, 0)
    assert any(c.timing.restarts for c in random)
    assert all(c.timing.reorder_bound == 0 and applicable("streaming", c) for c in stepped + random)


def test_live_path_catches_every_fries_fault_on_one_crashing_alignment_probe(spark: Any) -> None:
    """One alignment probe with a second request and a driver crash while the first request's
    heads are released, through the live front end with the harness owning the FCM clock
    (mode live-stepped): clean without a fault, caught by the right oracle under each."""
    (case,) = [c for c in stepped_cases(0) if c.timing.restarts and len(c.reconfigurations) == 2][:1]
    wanted = {"": None, "missing-alignment": "serializable", "naive": "serializable",
              "duplicate-after-restart": "exactly-once", "double-transform": "states"}

    def run(fault: str) -> Any:
        engine = StreamingEngine("fries", frozenset({fault} - {""}), spark=spark, mode="live-stepped")
        return judge_fries(case, engine.run([case])[0])

    with ThreadPoolExecutor(len(wanted)) as pool:
        judged = dict(zip(wanted, pool.map(run, wanted)))
    assert judged[""].ok, explain(judged[""])
    for fault, oracle in wanted.items():
        if fault:
            assert oracle in judged[fault].failed_oracles, (fault, judged[fault].failed_oracles)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["naive", "missing-alignment", "duplicate-after-restart"])
def test_the_cli_catches_the_faults_the_live_path_used_to_miss(fault: str, spark: Any, tmp_path: Any,
                                                               capsys: Any) -> None:
    """Through the CLI at 10 cases (the stepped section and 2 random cases): exit 1, and the
    failure is saved for a live replay."""
    config = RunConfig(suites=("fries",), cases=10, seed=0, engine="spark-streaming", faults=frozenset({fault}),
                       save_dir=str(tmp_path), shrink_budget=0, spark=spark)
    (result,) = run_streaming_suites(config, lambda suite: None)
    assert result.failed >= 1
    (failure,) = result.failures
    assert failure.replay_file is not None
    saved = json.loads(open(failure.replay_file, encoding="utf-8").read())
    assert saved["engine"] == "spark-streaming" and saved["scheduler"].startswith("fries:live")
