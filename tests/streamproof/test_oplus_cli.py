"""``streamproof oplus``: its documented contract (docs/cli.md), every mode, and every bad input (exit 2,
one line)."""

from __future__ import annotations

import json
import sys
import types
from pathlib import Path
from typing import Any

import pytest

from streamproof.main import main
import spark_impl

BASE: dict[str, Any] = {
    "operator": "sliding-sum", "WA": 5, "WS": 10, "WT": "multi", "parallelism": 2,
    "inputs": [[{"ts": 1, "key": "a", "value": 3}, {"ts": 7, "key": "b", "value": 1},
                {"ts": 12, "key": "a", "value": 2}],
               [{"ts": 2, "key": "b", "value": 5}, {"watermark": 20},
                {"ts": 30, "key": "a", "value": 1}]],
    "reconfigurations": [{"watermark": 10, "parallelism": 3}],
}

EXPECTED = [  # worked by hand: windows [5l, 5l + 10), ts = right boundary
    {"ts": 5, "key": "a", "value": 3}, {"ts": 5, "key": "b", "value": 5},
    {"ts": 10, "key": "a", "value": 3}, {"ts": 10, "key": "b", "value": 6},
    {"ts": 15, "key": "a", "value": 2}, {"ts": 15, "key": "b", "value": 1},
    {"ts": 20, "key": "a", "value": 2}, {"ts": 35, "key": "a", "value": 1},
    {"ts": 40, "key": "a", "value": 1},
]


def _write(tmp_path: Path, scenario: Any, name: str = "s.json") -> str:
    path = tmp_path / name
    path.write_text(scenario if isinstance(scenario, str) else json.dumps(scenario))
    return str(path)


def _json_run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> Any:
    assert main(argv) == 0
    return json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("mode", ["sequential", "sn", "vsn"])
@pytest.mark.parametrize("wt", ["single", "multi"])
def test_every_mode_gives_the_worked_example(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                             mode: str, wt: str) -> None:
    path = _write(tmp_path, {**BASE, "WT": wt})
    assert _json_run(capsys, ["oplus", path, "--mode", mode, "--json"]) == EXPECTED


def test_text_output_and_summary(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["oplus", _write(tmp_path, BASE), "--mode", "vsn"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == "5\ta\t3"
    assert lines[-1].startswith("mode vsn: 9 outputs from 5 tuples")
    assert "1 reconfigurations applied" in lines[-1]


def test_sn_counts_duplicated_tuples(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    scenario = {"operator": "wordcount", "WA": 10, "WS": 10, "parallelism": 4,
                "inputs": [[{"ts": 1, "text": "a b c d e f g h"}]]}
    path = _write(tmp_path, scenario)
    assert main(["oplus", path, "--mode", "sn"]) == 0
    summary = capsys.readouterr().out.splitlines()[-1]
    assert "1 tuples" in summary and " 0 duplicated" not in summary
    assert main(["oplus", path, "--mode", "vsn"]) == 0
    assert "1 tuple copies delivered, 0 duplicated" in capsys.readouterr().out


@pytest.mark.parametrize("operator, inputs, params, wa, ws, wt", [
    ("wordcount", [[{"ts": 0, "text": "x y x"}, {"ts": 3, "text": "y"}]], {}, 2, 4, "multi"),
    ("paircount", [[{"ts": 0, "text": "x y z"}]], {"duplication": "high"}, 5, 5, "single"),
    ("longest-tweet", [[{"ts": 0, "text": "#a hi"}, {"ts": 1, "text": "#a #b"}]], {}, 5, 5,
     "multi"),
    ("scalejoin", [[{"ts": 0, "x": 1, "y": 1}], [{"ts": 2, "a": 5, "b": 9}]], {"keys": 3}, 1, 5,
     "single"),
    ("forward", [[{"ts": 0, "value": 7}], [{"ts": 0, "value": 8}]], {"keys": 2}, 1, 1, "single"),
])
def test_every_catalogue_operator_runs_the_same_in_every_mode(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], operator: str, inputs: Any,
        params: Any, wa: int, ws: int, wt: str) -> None:
    scenario = {"operator": operator, "WA": wa, "WS": ws, "WT": wt, "parallelism": 2,
                "inputs": inputs, "params": params,
                "reconfigurations": [{"watermark": 0, "parallelism": 3}]}
    path = _write(tmp_path, scenario)
    runs = [_json_run(capsys, ["oplus", path, "--mode", m, "--json"])
            for m in ("sequential", "sn", "vsn")]
    assert runs[0] == runs[1] == runs[2] and runs[0]
    assert runs[0] == sorted(runs[0], key=lambda r: (r["ts"], r["key"],
                                                     json.dumps(r["value"], sort_keys=True)))


def test_specific_operator_values(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    words = {"operator": "wordcount", "WA": 10, "WS": 10, "parallelism": 1,
             "inputs": [[{"ts": 1, "text": "x y x"}, {"ts": 2, "text": "y"}]]}
    assert _json_run(capsys, ["oplus", _write(tmp_path, words), "--json"]) == [
        {"ts": 10, "key": "x", "value": 1}, {"ts": 10, "key": "y", "value": 2}]
    join = {"operator": "scalejoin", "WA": 1, "WS": 5, "parallelism": 2,
            "inputs": [[{"ts": 0, "x": 1, "y": 1}, {"ts": 1, "x": 50, "y": 1}],
                       [{"ts": 4, "a": 5, "b": 9}, {"ts": 5, "a": 5, "b": 9}]]}
    assert _json_run(capsys, ["oplus", _write(tmp_path, join), "--json"]) == [
        {"ts": 5, "key": "match",
         "value": {"left": {"ts": 0, "x": 1, "y": 1}, "right": {"ts": 4, "a": 5, "b": 9}}}]


def test_spark_engine_not_available_yet(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delattr(spark_impl, "oplus", raising=False)
    monkeypatch.setitem(sys.modules, "spark_impl.oplus", None)  # the import fails
    assert main(["oplus", _write(tmp_path, BASE), "--engine", "spark"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "the spark engine for oplus is not available yet" in err


def test_spark_engine_rows_are_sorted_and_printed(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    fake = types.ModuleType("spark_impl.oplus")
    seen: list[Any] = []

    def run_scenario(scenario: Any) -> list[dict[str, Any]]:
        seen.append(scenario)
        return list(reversed(EXPECTED))

    fake.run_scenario = run_scenario  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "spark_impl.oplus", fake)
    monkeypatch.setattr(spark_impl, "oplus", fake, raising=False)
    assert _json_run(capsys, ["oplus", _write(tmp_path, BASE), "--engine", "spark",
                              "--json"]) == EXPECTED
    assert seen and seen[0].operator == "sliding-sum"  # the parsed Scenario is passed


BAD = [
    ({**BASE, "inputs": [[{"ts": 5, "key": "a", "value": 1}, {"ts": 4, "key": "a", "value": 1}]]},
     "input not sorted"),
    ({**BASE, "inputs": [[{"watermark": 5}, {"ts": 4, "key": "a", "value": 1}]]},
     "input not sorted"),
    ({**BASE, "WA": 0}, "WA must be > 0"),
    ({**BASE, "WA": -3}, "WA must be > 0"),
    ({**BASE, "WS": 4}, "WS must be >= WA"),
    ({**BASE, "operator": "median"}, "unknown operator 'median'"),
    ({**BASE, "WT": "double"}, "WT must be 'single' or 'multi'"),
    ({**BASE, "parallelism": 0}, "parallelism: must be >= 1"),
    ({**BASE, "parallelism": "2"}, "expected an integer"),
    ({**BASE, "WS": 1.5}, "expected an integer"),
    ({k: v for k, v in BASE.items() if k != "WA"}, "missing field 'WA'"),
    ({**BASE, "extra": 1}, "unknown field 'extra'"),
    ({**BASE, "inputs": []}, "at least one input list"),
    ({**BASE, "inputs": [[{"ts": 1, "key": "a"}]]}, "missing field 'value'"),
    ({**BASE, "inputs": [[{"ts": 1, "key": "a", "value": 1, "colour": 2}]]}, "unknown field"),
    ({**BASE, "inputs": [[{"ts": 1, "key": 3, "value": 1}]]}, "expected a string, got the number 3"),
    ({**BASE, "inputs": [["x"]]}, "expected a JSON object"),
    ({**BASE, "reconfigurations": [{"watermark": 5, "parallelism": 2},
                                   {"watermark": 5, "parallelism": 3}]}, "strictly increasing"),
    ({**BASE, "reconfigurations": [{"watermark": 5, "parallelism": 0}]}, "must be >= 1"),
    ({**BASE, "operator": "scalejoin", "WA": 1, "WS": 5, "WT": "single",
      "inputs": [[{"ts": 1, "x": 1, "y": 1}]]}, "exactly 2 input lists"),
    ({**BASE, "operator": "scalejoin", "WA": 1, "WS": 5}, "supports WT ['single']"),
    ({**BASE, "operator": "scalejoin", "WA": 2, "WS": 5, "WT": "single"}, "needs WA = 1"),
    ({**BASE, "operator": "forward", "WA": 1, "WS": 2}, "needs WA, WS = (1, 1)"),
    ({**BASE, "operator": "paircount", "inputs": [[{"ts": 1, "text": "a"}]],
      "params": {"duplication": "huge"}}, "duplication must be one of"),
    ({**BASE, "params": {"keys": 3}}, "operator 'sliding-sum' takes no params, got ['keys']"),
    ({**BASE, "operator": "forward", "WA": 1, "WS": 1, "WT": "single", "inputs": [[{"ts": 1, "value": 1}]] * 2,
      "params": {"band": 3}}, "unknown field 'band'"),
    ([1, 2], "expected a JSON object"),
    ("{not json", "malformed JSON"),
]


@pytest.mark.parametrize("scenario, message", BAD)
def test_bad_scenarios_exit_2_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                          scenario: Any, message: str) -> None:
    path = _write(tmp_path, scenario)
    assert main(["oplus", path]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    assert message in err and "s.json" in err


def test_missing_file_and_bad_mode(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["oplus", str(tmp_path / "nope.json")]) == 2
    assert "no such file" in capsys.readouterr().err
    with pytest.raises(SystemExit) as caught:
        main(["oplus", _write(tmp_path, BASE), "--mode", "parallel"])
    assert caught.value.code == 2
    assert "invalid choice" in capsys.readouterr().err
    with pytest.raises(SystemExit) as caught:
        main(["oplus", _write(tmp_path, BASE), "--engine", "flink"])
    assert caught.value.code == 2
