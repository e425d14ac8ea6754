"""``streamproof conformance --engine spark-streaming`` (conformance.streaming_runner): the
suites through the live front ends. Fast tests: the CLI's contract (faults, bad input) and how
a DGS case is cut into files. Slow ones: live runs judged clean, and seeded faults caught."""

from __future__ import annotations

import json
from collections import Counter
from typing import Any

import pytest

from spec.dgs.streams import StreamEvent, value_to_json

from conformance.cli.main import main
from conformance.dgs_streaming import FILES, case_chunks
from conformance.dgs_suite import draw_dgs_cases, judge


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
    from conformance.dgs_streaming import streaming_engine

    cases = draw_dgs_cases(6, 0)
    observed = streaming_engine(spark)(cases)
    assert [judge(c, o) for c, o in zip(cases, observed)] == [[]] * len(cases)
    # the judge has teeth on this path: an output seen twice is an outputs failure
    outputs, state, processed = observed[0]  # type: ignore[misc]
    if outputs:
        assert [o for o, _ in judge(cases[0], (outputs + outputs[:1], state, processed))] == ["outputs"]
    assert Counter(len(case_chunks(c)) > 1 for c in cases)[True] >= 1


@pytest.mark.slow
def test_live_fries_engine_catches_double_transform_on_cases_that_pass_without_it(spark: Any) -> None:
    from conformance.fries.frontends import prepare
    from conformance.fries.oracles import judge as judge_fries
    from conformance.fries.streaming_engine import StreamingEngine, streaming_cases

    cases = streaming_cases(8, 0)[:2]  # benchmarks/live_faults.py: both fail only with the fault
    for faults, wanted in ((frozenset(), [True, True]), (frozenset({"double-transform"}), [False, False])):
        outcomes = StreamingEngine("fries", faults, spark=spark).run(cases)
        assert [judge_fries(prepare("streaming", c), o).ok for c, o in zip(cases, outcomes)] == wanted
