"""``streamproof fuse``: the job format, the shipped example, the JSON contract, bad input."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamproof.main import main
from reference.fusion.random_jobs import random_job
from spec.errors import InputError
from spec.fusion.components import inter_component_percent, is_valid_fusion
from spec.fusion.greedy import automatic_fusion as literal_fusion
from spec.fusion.job_json import job_from_json, job_to_json
from support.paths import ROOT

EXAMPLE = ROOT / "examples" / "fusion" / "fraud_job.json"


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.mark.parametrize("score", ["comm", "pa"])
def test_example_json_is_alg1_of_the_spec(score: str, capsys: pytest.CaptureFixture[str]) -> None:
    """The command's components are those of the literal Alg. 1 (spec), valid by §4.4.1."""
    code, out, err = _run(["fuse", str(EXAMPLE), "--score", score, "--json"], capsys)
    assert code == 0 and err == ""
    document = json.loads(out)
    job = job_from_json(json.loads(EXAMPLE.read_text()), "example")
    expected = literal_fusion(job, score)
    got = [frozenset(row["operators"]) for row in document["components"]]
    assert sorted(map(sorted, got)) == sorted(map(sorted, expected))
    assert is_valid_fusion(job, got)
    assert document["inter_component_percent"] == pytest.approx(
        inter_component_percent(job, expected))
    alerts = next(r for r in document["components"] if "alerts" in r["operators"])
    assert alerts == {"operators": ["alerts"], "pa": [], "max_parallelism": 1,
                      "stateless": True, "flexible": False}


def test_example_text(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(["fuse", str(EXAMPLE)], capsys)
    assert code == 0
    assert out.splitlines()[0].startswith("7 operators fused into ")
    assert "partitioned on {card}" in out


def test_unbounded_parallelism_is_null(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    job = {"domains": {"ts": None},
           "operators": [{"name": "a", "kind": "map", "pa": ["ts"]},
                         {"name": "b", "kind": "compute", "pa": ["ts"]}],
           "edges": [{"from": "a", "to": "b", "rate": 3}]}
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    code, out, _ = _run(["fuse", str(path), "--json"], capsys)
    assert code == 0
    (row,) = json.loads(out)["components"]
    assert row["max_parallelism"] is None and row["operators"] == ["a", "b"]


@settings(max_examples=25, deadline=None)
@given(st.integers(4, 30), st.integers(0, 10**6))
def test_format_round_trips(operators: int, seed: int) -> None:
    job = random_job(operators, random.Random(seed), attributes=6)
    assert job_from_json(json.loads(json.dumps(job_to_json(job))), "x") == job


def _ok() -> dict[str, Any]:
    return {"domains": {"k": 4},
            "operators": [{"name": "a", "kind": "map", "pa": ["k"]},
                          {"name": "b", "kind": "compute", "pa": ["k"]}],
            "edges": [{"from": "a", "to": "b", "rate": 1.5}]}


def _with(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    doc = _ok()
    target: Any = doc
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return doc


BAD: list[tuple[str, Any, str]] = [
    ("not an object", [], "expected a JSON object"),
    ("no operators", {"edges": []}, "missing field 'operators'"),
    ("unknown field", {**_ok(), "edge": []}, "unknown field 'edge'"),
    ("unknown kind", _with(("operators", 0, "kind"), "reduce"), "unknown operator kind"),
    ("negative rate", _with(("edges", 0, "rate"), -1), "rate must be"),
    ("string rate", _with(("edges", 0, "rate"), "1"), "expected a number"),
    ("huge rate", _with(("edges", 0, "rate"), 10**400), "too large"),
    ("zero domain", _with(("domains", "k"), 0), "domain size must be >= 1"),
    ("unknown attribute", _with(("operators", 1, "pa"), ["z"]), "unknown partition attribute"),
    ("repeated attribute", _with(("operators", 1, "pa"), ["k", "k"]), "listed twice"),
    ("unknown endpoint", _with(("edges", 0, "to"), "c"), "unknown operator 'c'"),
    ("self loop", _with(("edges", 0, "to"), "a"), "self-loop"),
    ("cycle", {**_ok(), "edges": [{"from": "a", "to": "b", "rate": 1},
                                  {"from": "b", "to": "a", "rate": 1}]}, "cycle"),
    ("duplicate operator", _with(("operators", 1, "name"), "a"), "duplicate operator"),
]


@pytest.mark.parametrize("label, document, message", BAD, ids=[b[0] for b in BAD])
def test_bad_jobs_exit_2_in_one_line(label: str, document: Any, message: str, tmp_path: Path,
                                     capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(document))
    code, out, err = _run(["fuse", str(path), "--json"], capsys)
    assert code == 2 and out == ""
    assert len(err.strip().splitlines()) == 1
    assert message in err and str(path) in err


def test_nan_rate_is_bad_input(tmp_path: Path) -> None:
    """Python's JSON reader accepts ``NaN``: a NaN rate would make every comparison false."""
    path = tmp_path / "job.json"
    path.write_text(json.dumps(_ok()).replace("1.5", "NaN"))
    with pytest.raises(InputError, match="finite"):
        job_from_json(json.loads(path.read_text()), str(path))


def test_missing_file_and_bad_score(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _run(["fuse", "/nonexistent/job.json"], capsys)
    assert code == 2 and "no such file" in err
    with pytest.raises(SystemExit) as caught:
        main(["fuse", str(EXAMPLE), "--score", "rate"])
    assert caught.value.code == 2
