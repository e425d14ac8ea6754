"""``streamproof fuse`` under hostile job files (docs/cli.md "streamproof fuse": exit 0 after a
fusion, 2 for a bad job file with one stderr line; ``--json`` always valid JSON; docs/klink.md's
job format bounds: a domain size at most 10^100 values, an operator's partition cardinality at
most 10^100, rates summing to a finite number)."""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import pytest

from support.hostile_cli import assert_contract, run
from support.paths import ROOT

EXAMPLE = ROOT / "examples" / "fusion" / "fraud_job.json"
JOB: dict[str, Any] = json.loads(EXAMPLE.read_text())


def _write(tmp_path: Path, job: Any) -> str:
    path = tmp_path / "job.json"
    path.write_text(json.dumps(job))
    return str(path)


@pytest.mark.parametrize("size", [10**101, 10**400, int("9" * 1000)], ids=["101 digits", "401 digits", "1000 digits"])
def test_fuse_refuses_a_domain_beyond_the_stated_bound(tmp_path: Path, size: int) -> None:
    """docs/cli.md: a bad job file is exit 2 with one line (a 400-digit domain size was an
    OverflowError, exit 3)."""
    job = {**JOB, "domains": {k: (size if v is not None else None) for k, v in JOB["domains"].items()}}
    outcome = run(["fuse", _write(tmp_path, job), "--json"])
    assert_contract(outcome)
    assert outcome.code == 2 and "domains.card" in outcome.err and "10^100" in outcome.err, outcome.describe()


def test_fuse_refuses_an_operator_whose_partition_cardinality_is_beyond_the_bound(tmp_path: Path) -> None:
    """docs/klink.md: an operator's partition cardinality (the product of its attributes'
    domain sizes) is at most 10^100; 200 attributes of 10^18 values each are refused."""
    names = [f"a{i}" for i in range(200)]
    job = {"domains": {n: 10**18 for n in names},
           "operators": [{"name": "x", "kind": "map", "pa": names}, {"name": "y", "kind": "map", "pa": names}],
           "edges": [{"from": "x", "to": "y", "rate": 1}]}
    outcome = run(["fuse", _write(tmp_path, job), "--json"])
    assert_contract(outcome)
    assert outcome.code == 2 and "operators[0]" in outcome.err and "cardinality" in outcome.err, outcome.describe()


def test_fuse_reports_a_large_bounded_parallelism_exactly(tmp_path: Path) -> None:
    """A partition cardinality of 10^100 is still reported exactly (a JSON integer)."""
    job = {"domains": {"a": 10**50, "b": 10**50},
           "operators": [{"name": "x", "kind": "map", "pa": ["a", "b"]}, {"name": "y", "kind": "map", "pa": ["a", "b"]}],
           "edges": [{"from": "x", "to": "y", "rate": 1}]}
    outcome = run(["fuse", _write(tmp_path, job), "--json"])
    assert_contract(outcome)
    assert json.loads(outcome.out)["components"][0]["max_parallelism"] == 10**100


@pytest.mark.parametrize("as_json", [True, False])
def test_fuse_refuses_rates_whose_sum_is_not_finite(tmp_path: Path, as_json: bool) -> None:
    """docs/cli.md: ``--json`` is always valid JSON (every rate 1.7e308 printed ``Infinity`` and
    ``NaN``, the text "nan% (inf of inf)")."""
    job = {**JOB, "edges": [{**edge, "rate": 1.7e308} for edge in JOB["edges"]]}
    outcome = run(["fuse", _write(tmp_path, job)] + (["--json"] if as_json else []))
    assert_contract(outcome)
    assert outcome.code == 2 and "edges" in outcome.err and "sum" in outcome.err, outcome.describe()
    assert outcome.out == ""


def test_fuse_percent_of_huge_finite_rates_is_finite(tmp_path: Path) -> None:
    """Rates whose sum is finite but whose 100-fold is not still give a percentage."""
    job = {**JOB, "edges": [{**edge, "rate": 1e308 / len(JOB["edges"])} for edge in JOB["edges"]]}
    outcome = run(["fuse", _write(tmp_path, job), "--json"])
    assert_contract(outcome)
    assert outcome.code == 0, outcome.describe()
    assert 0 <= json.loads(outcome.out)["inter_component_percent"] <= 100


def test_fuse_answers_a_long_chain_quickly(tmp_path: Path) -> None:
    """A chain of 20,000 operators (about 2 MB) is fused in seconds (the acyclicity check was
    quadratic: 8.4 s; 60,000 took 131 s). Times: benchmarks/cli_scaling.py."""
    count = 20_000
    job = {"domains": {"k": 10},
           "operators": [{"name": f"o{i}", "kind": "map", "pa": ["k"]} for i in range(count)],
           "edges": [{"from": f"o{i}", "to": f"o{i + 1}", "rate": 1} for i in range(count - 1)]}
    started = time.monotonic()
    outcome = run(["fuse", _write(tmp_path, job), "--json"], seconds=30)
    assert_contract(outcome)
    assert outcome.code == 0 and len(json.loads(outcome.out)["components"]) == 1
    assert time.monotonic() - started < 6
