"""spark_impl.oplus against the sequential reference (differential), elastic rescale at a
watermark, the seeded faults, bad input and the CLI's ``--engine spark``.

Every Spark test runs its scenarios as ONE batch (scenario index in every key), so the whole
file costs a handful of Spark jobs per round."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from hypothesis import strategies as st

from conformance.core.cases import draw_cases
from streamproof.main import main
from conformance.oplus.cases import oplus_scenarios
from reference.oplus.operators.catalogue import to_row
from reference.oplus.run import execute
from spec.errors import InputError
from spec.oplus.scenario import parse_scenario
from spark_impl.oplus import run_batch, run_scenarios
from conformance.run import RunConfig, run_suites

pytestmark = pytest.mark.spark

_WORDS = ("a", "b", "#c", "#d", "e")


@st.composite
def _text_stream(draw: st.DrawFn, horizon: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for ts in sorted(draw(st.lists(st.integers(0, horizon), max_size=7))):
        if draw(st.integers(0, 4)) == 0:
            items.append({"watermark": ts})
        items.append({"ts": ts, "text": " ".join(draw(st.lists(st.sampled_from(_WORDS), min_size=1, max_size=4)))})
    return items


@st.composite
def _int_stream(draw: st.DrawFn, names: tuple[str, ...], horizon: int) -> list[dict[str, Any]]:
    items: list[dict[str, Any]] = []
    for ts in sorted(draw(st.lists(st.integers(0, horizon), max_size=6))):
        if draw(st.integers(0, 4)) == 0:
            items.append({"watermark": ts})
        items.append({"ts": ts, **{n: draw(st.integers(0, 12)) for n in names}})
    return items


@st.composite
def other_operators(draw: st.DrawFn) -> dict[str, Any]:
    """paircount, longest-tweet, scalejoin and forward scenarios (the suite's generator draws
    sliding-sum and wordcount only)."""
    name = draw(st.sampled_from(["paircount", "longest-tweet", "scalejoin", "forward"]))
    marks = sorted(draw(st.lists(st.integers(1, 25), max_size=2, unique=True)))
    case: dict[str, Any] = {"operator": name, "parallelism": draw(st.integers(1, 3)),
                            "reconfigurations": [{"watermark": w, "parallelism": draw(st.integers(1, 4))}
                                                 for w in marks]}
    if name in ("paircount", "longest-tweet"):
        wa = draw(st.integers(1, 4))
        case.update(WA=wa, WS=wa * draw(st.integers(1, 3)), WT=draw(st.sampled_from(["single", "multi"])),
                    inputs=[draw(_text_stream(25)) for _ in range(draw(st.integers(1, 2)))])
        if name == "paircount":
            case["params"] = {"duplication": draw(st.sampled_from(["low", "medium", "high"]))}
    elif name == "scalejoin":
        case.update(WA=1, WS=draw(st.integers(1, 8)),
                    inputs=[draw(_int_stream(("x", "y"), 25)), draw(_int_stream(("a", "b"), 25))],
                    params={"keys": draw(st.integers(1, 5)), "band": draw(st.integers(0, 6))})
    else:
        case.update(WA=1, WS=1, inputs=[draw(_int_stream(("value",), 25)) for _ in range(2)],
                    params={"keys": draw(st.integers(1, 3))})
    return case


def _canon(rows: list[dict[str, Any]]) -> Counter[tuple[int, str, str]]:
    return Counter((r["ts"], r["key"], json.dumps(r["value"], sort_keys=True)) for r in rows)


def _expected(case: dict[str, Any]) -> Counter[tuple[int, str, str]]:
    return _canon([to_row(o) for o in execute(parse_scenario(case), "sequential", 0).outputs])


CASES = draw_cases(oplus_scenarios(), 24, seed=7) + draw_cases(other_operators(), 24, seed=7)


def test_spark_equals_the_sequential_reference_on_every_operator(spark: Any) -> None:
    # two items per list per round: many round boundaries, hence many watermarks and
    # rescale points while the stream runs
    result = run_batch(spark, CASES, items_per_round=2)
    for index, (case, rows) in enumerate(zip(CASES, result.rows)):
        assert _canon(rows) == _expected(case), (index, case)
    assert {c["operator"] for c in CASES} == {"sliding-sum", "wordcount", "paircount", "longest-tweet",
                                              "scalejoin", "forward"}
    assert sum(result.applied) > 0 and result.handovers, "the batch rescaled at least once"


def test_outputs_do_not_depend_on_the_cut_into_rounds(spark: Any) -> None:
    cases = CASES[:8] + CASES[24:32]
    for case, rows in zip(cases, run_scenarios(spark, cases, items_per_round=5)):
        assert _canon(rows) == _expected(case)


def test_elastic_rescale_moves_state_at_the_watermark_without_changing_outputs(spark: Any) -> None:
    words = ["a b c", "b c d", "c d e", "a e", "b d", "a b c d e"]
    stream = [{"ts": 2 * i, "text": words[i % len(words)]} for i in range(24)]
    case = {"operator": "wordcount", "WA": 2, "WS": 6, "WT": "multi", "parallelism": 1,
            "inputs": [stream], "reconfigurations": [{"watermark": 10, "parallelism": 4},
                                                     {"watermark": 30, "parallelism": 2}]}
    result = run_batch(spark, [case], items_per_round=4)
    assert _canon(result.rows[0]) == _expected(case)
    assert result.applied == [2]
    assert [(h.partitions_before, h.partitions_after) for h in result.handovers] == [(1, 4), (4, 2)]
    assert all(h.keys_moved > 0 and h.pause_s > 0 for h in result.handovers)


@pytest.mark.parametrize("fault", ["window-off-by-one", "drop-near-watermark"])
def test_each_seeded_fault_changes_the_outputs(spark: Any, fault: str) -> None:
    cases = CASES[:12]
    rows = run_scenarios(spark, cases, faults=[fault], items_per_round=2)
    wrong = [i for i, (case, got) in enumerate(zip(cases, rows)) if _canon(got) != _expected(case)]
    assert wrong, f"fault {fault} went unnoticed"


def test_bad_input_is_rejected_before_any_job(spark: Any) -> None:
    with pytest.raises(InputError, match="unknown fault"):
        run_scenarios(spark, CASES[:1], faults=["no-such-fault"])
    with pytest.raises(InputError, match=r"scenarios\[1\].*WS"):
        run_scenarios(spark, [CASES[0], {**CASES[0], "WS": 0}])
    with pytest.raises(InputError, match="items_per_round"):
        run_scenarios(spark, CASES[:1], items_per_round=0)


def test_cli_engine_spark_prints_the_reference_rows(spark: Any, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    case = CASES[24]
    path = tmp_path / "s.json"
    path.write_text(json.dumps(case))
    assert main(["oplus", str(path), "--engine", "spark", "--json"]) == 0
    spark_rows = json.loads(capsys.readouterr().out)
    assert main(["oplus", str(path), "--json"]) == 0
    assert spark_rows == json.loads(capsys.readouterr().out)


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["window-off-by-one", "drop-near-watermark"])
def test_the_conformance_suite_finds_and_shrinks_each_oplus_fault(spark: Any, tmp_path: Path, fault: str) -> None:
    (result,) = run_suites(RunConfig(suites=("oplus",), cases=40, engine="spark", faults=frozenset({fault}),
                                     save_dir=str(tmp_path), spark=spark), lambda suite: None)
    check = next(c for c in result.checks if c.name == "spark vs sequential")
    assert check.status == "ran" and check.failed > 0
    assert result.failures and result.failures[0].replay_file
