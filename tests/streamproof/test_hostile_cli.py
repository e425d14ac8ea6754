"""Regression tests of the CLI-wide findings on hostile input - lone surrogates in text
output, one-line usage errors, consistent error prefixes, ``simulate klink`` validating its
arguments before building anything."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from support.hostile_cli import assert_contract, export_vectors, run

SURROGATE = "\ud800"


def _write(tmp_path: Path, text: str, name: str = "in.json") -> str:
    path = tmp_path / name
    path.write_text(text)
    return str(path)


def test_check_schedule_text_mode_prints_a_lone_surrogate(tmp_path: Path) -> None:
    # was: exit 3 (UnicodeEncodeError) in text mode; --json worked
    path = _write(tmp_path, '{"logs": {"A": [{"txn": "\\ud800"}, {"txn": "R", "update": true},'
                            ' {"txn": "\\ud800"}], "B": [{"txn": "R", "update": true},'
                            ' {"txn": "\\ud800"}]}}')
    text = run(["check-schedule", path])
    assert text.code == 1 and "\\ud800" in text.out, text.describe()
    machine = run(["check-schedule", path, "--json"])
    assert_contract(machine)
    assert json.loads(machine.out)["cycle"] is not None


def test_mcs_text_mode_prints_a_lone_surrogate(tmp_path: Path) -> None:
    # was: half the report, then exit 3
    dag = {"operators": [{"name": "S", "kind": "source"}, {"name": SURROGATE, "kind": "one-to-one"}],
           "edges": [["S", SURROGATE]]}
    path = _write(tmp_path, json.dumps(dag))
    outcome = run(["mcs", path, "--reconfigure", SURROGATE])
    assert outcome.code == 0 and outcome.out.count("\\ud800") >= 2, outcome.describe()
    machine = run(["mcs", path, "--reconfigure", SURROGATE, "--json"])
    assert json.loads(machine.out) == {"components": [[SURROGATE]]}


def test_bare_streamproof_is_a_one_line_usage_error() -> None:
    # was: the whole help on stderr
    outcome = run([])
    assert_contract(outcome)
    assert outcome.code == 2 and "expected a COMMAND" in outcome.err


def test_bare_simulate_is_a_one_line_usage_error() -> None:
    outcome = run(["simulate"])
    assert_contract(outcome)
    assert outcome.code == 2 and outcome.err.startswith("streamproof simulate: error: expected a "
                                                        "SIMULATOR (klink")


def test_bare_vectors_is_a_one_line_usage_error() -> None:
    outcome = run(["vectors"])
    assert_contract(outcome)
    assert outcome.err.startswith("streamproof vectors: error: expected an ACTION"), outcome.describe()


def test_simulate_klink_errors_all_carry_the_full_command_name() -> None:
    # was: "streamproof simulate:" for validation errors, "streamproof simulate klink:" for
    # argparse's
    for argv in (["simulate", "klink", "--queries", "x"], ["simulate", "klink", "--horizon", "5"],
                 ["simulate", "klink", "--cores", "5000"]):
        outcome = run(argv)
        assert_contract(outcome)
        assert outcome.code == 2 and outcome.err.startswith("streamproof simulate klink: error:"), \
            outcome.describe()


@pytest.mark.parametrize("argv, problem", [
    (["--queries", "1000000", "--horizon", "10"], "input items"),   # built 2.4 GB first
    (["--horizon", "1e12"], "input items"),                         # was MemoryError, exit 3
    (["--horizon", "5"], "warm-up"),
    (["--queries", "100000", "--horizon", "11"], "input items"),
    (["--cores", "1000000000"], "cores"),                           # was minutes of work
])
def test_simulate_klink_rejects_before_building(argv: list[str], problem: str) -> None:
    started = time.monotonic()
    outcome = run(["simulate", "klink", *argv, "--json"], seconds=10)
    assert_contract(outcome)
    assert outcome.code == 2 and problem in outcome.err, outcome.describe()
    assert time.monotonic() - started < 5


def test_argparse_errors_stay_one_line_with_a_newline_in_the_value() -> None:
    outcome = run(["oplus", "x.json", "--mode", "a\nb"])
    assert_contract(outcome)
    assert outcome.code == 2


ODD_DAG = {"operators": [{"name": "S", "kind": "source"}, {"name": "a,b", "kind": "one-to-one"},
                         {"name": " pad ", "kind": "one-to-one"}, {"name": "C", "kind": "one-to-one"}],
           "edges": [["S", "a,b"], ["S", " pad "], ["S", "C"]]}


def test_mcs_names_operators_with_commas_and_spaces_literally(tmp_path: Path) -> None:
    # was: such operators could never be named (--reconfigure splits on ',' and strips)
    path = _write(tmp_path, json.dumps(ODD_DAG))
    outcome = run(["mcs", path, "--operator", "a,b", "--operator", " pad ", "--json"])
    assert outcome.code == 0, outcome.describe()
    assert json.loads(outcome.out) == {"components": [[" pad "], ["a,b"]]}
    mixed = run(["mcs", path, "--reconfigure", "C", "--operator", "a,b", "--json"])
    assert json.loads(mixed.out) == {"components": [["C"], ["a,b"]]}


def test_mcs_reconfigure_contract_is_unchanged_and_may_be_repeated(tmp_path: Path) -> None:
    path = _write(tmp_path, json.dumps(ODD_DAG))
    split = run(["mcs", path, "--reconfigure", "a,b", "--json"])  # still two names: a and b
    assert split.code == 2 and "unknown reconfigured operators 'a', 'b'" in split.err
    repeated = run(["mcs", path, "--reconfigure", "C", "--reconfigure", " C ", "--json"])
    assert json.loads(repeated.out) == {"components": [["C"]]}
    none = run(["mcs", path])
    assert none.code == 2 and "--operator NAME" in none.err, none.describe()


def test_mcs_unknown_operator_error_is_bounded(tmp_path: Path) -> None:
    # was: up to 20 names listed in full (a 200 KB line with long names)
    names = [f"op{i}" + "x" * 10_000 for i in range(30)]
    dag = {"operators": [{"name": "S", "kind": "source"}]
           + [{"name": n, "kind": "one-to-one"} for n in names],
           "edges": [["S", n] for n in names]}
    path = _write(tmp_path, json.dumps(dag))
    wanted = ",".join("nope" + "y" * 10_000 + str(i) for i in range(30))
    outcome = run(["mcs", path, "--reconfigure", wanted])
    assert_contract(outcome)
    assert outcome.code == 2 and len(outcome.err) < 1500, outcome.describe()
    assert "and 25 more" in outcome.err


@pytest.fixture(scope="module")
def exported(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return export_vectors(tmp_path_factory.mktemp("vectors"))


@pytest.mark.parametrize("name, edit, problem", [
    ("oplus/0000.json", lambda v: v.pop("expected"), "missing field 'expected'"),
    ("oplus/0000.json", lambda v: v.update(expected=[{"ts": "x", "key": 1, "value": 2}]),
     "expected[0].ts: expected an integer"),
    ("oplus/0000.json", lambda v: v.update(scenario={**v["scenario"], "WS": 10**12}),
     "oplus/0000.json: scenario: "),
    ("fries/0000.json", lambda v: v.pop("scenario"), "missing field 'scenario'"),
    ("fries/0000.json", lambda v: v.update(reference_run={"outputs": [[{}]]}),
     "reference_run.outputs[0]"),
    ("fries/0000.json", lambda v: v.update(reference_run=[]), "reference_run: expected a JSON object"),
])
def test_vectors_check_names_a_malformed_vector(exported: Path, name: str, edit: Any,
                                                problem: str) -> None:
    # was: KeyError / TypeError, exit 3
    path = exported / name
    original = path.read_text()
    vector = json.loads(original)
    edit(vector)
    path.write_text(json.dumps(vector))
    try:
        outcome = run(["vectors", "check", str(exported), "--engine", "reference", "--json"])
    finally:
        path.write_text(original)
    assert_contract(outcome)
    assert outcome.code == 2 and problem in outcome.err, outcome.describe()


def test_vectors_export_into_a_file_or_too_many_cases(tmp_path: Path) -> None:
    # was: NotADirectoryError, exit 3; --cases had no upper bound
    afile = tmp_path / "file"
    afile.write_text("x")
    for argv in (["vectors", "export", str(afile)], ["vectors", "export", str(afile / "sub")],
                 ["vectors", "export", str(tmp_path / "d"), "--cases", "100000000"]):
        outcome = run(argv)
        assert_contract(outcome)
        assert outcome.code == 2, outcome.describe()


@pytest.mark.parametrize("argv", [
    ["simulate", "klink", "--queries", "1" + "0" * 400],   # was OverflowError, exit 3
    ["simulate", "klink", "--cores", "1" + "0" * 400],
    ["simulate", "klink", "--horizon", "1e308"],
])
def test_simulate_klink_huge_integers_are_bad_input(argv: list[str]) -> None:
    outcome = run(argv)
    assert_contract(outcome)
    assert outcome.code == 2 and len(outcome.err) < 400, outcome.describe()
