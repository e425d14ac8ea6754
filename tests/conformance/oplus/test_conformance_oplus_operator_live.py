"""``streamproof conformance --operator`` on the live front end: out of order within the
allowed lateness, explicit watermarks, restarts, and the seeded O+ faults.

docs/conformance.md ("Your own O+ operator") and conformance/oplus/engines/user.py: the live
check lands each case's groups of items pairwise swapped with the smallest allowed lateness at
which nothing is late (``late_policy="fail"``), sends with every second file a watermark per
list at the event time of its next tuple, crashes the driver at each crash point on files 2-4
and restarts it on the same checkpoint; the outputs must equal the sequential reference, once
each. ``--inject-fault`` (``window-off-by-one``, ``drop-near-watermark``) switches on the
seeded fault in spark_impl's front end, for a user's operator as for the catalogue's: a
correct operator then fails (exit 1); a fault that is not an O+ one is bad input (exit 2).
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from streamproof.main import main

from conformance.oplus import user_cases
from conformance.oplus.engines import user
from conformance.oplus.user_suite import LIVE, load_under

OPS = str(Path(__file__).resolve().parents[2] / "support" / "oplus_conformance_operators.py")


def _cases(name: str, count: int = 60) -> list[dict[str, Any]]:
    under = load_under(f"{OPS}:{name}", "key,value")
    return [user_cases.build(random.Random(seed), under.op, under.fields) for seed in range(count)]


def test_every_item_lands_once_and_every_watermark_promise_is_kept() -> None:
    for case in _cases("KEY_SUM") + _cases("DISTINCT"):
        files = user.case_files(case)
        tuples = sorted((r["source"], r["seq"]) for rows in files for r in rows if "ts" in r)
        assert tuples == sorted((s, p) for s, items in enumerate(case["inputs"]) for p in range(len(items)))
        for index, rows in enumerate(files):
            for mark in (r for r in rows if "watermark" in r):
                later = [r["ts"] for f in files[index + 1:] for r in f if "ts" in r and r["source"] == mark["source"]]
                assert later and mark["watermark"] == min(later)  # kept, and the strongest promise


def test_the_allowed_lateness_is_the_least_with_no_late_tuple() -> None:
    out_of_order = 0
    for case in _cases("KEY_SUM"):
        files = user.case_files(case)
        lateness = user.lateness_needed(files, len(case["inputs"]))
        assert not user.late_at(files, len(case["inputs"]), lateness)  # noqa: SLF001 - the rule itself
        if lateness > 0:
            assert user.late_at(files, len(case["inputs"]), lateness - 1)  # noqa: SLF001
            out_of_order += 1
    assert out_of_order >= 10


def test_the_batch_file_holds_every_case_and_a_last_file_ends_every_list() -> None:
    cases = _cases("KEY_SUM", 3)
    files = user.landed(cases)
    assert files[-1] == [{"job": j, "source": 0, "end": True} for j in range(3)]
    assert {r["job"] for rows in files[:-1] for r in rows} == {0, 1, 2}


@pytest.mark.parametrize("fault, engine", [("naive", "spark"), ("no-such-fault", "spark"),
                                           ("drop-near-watermark", "reference")])
def test_a_fault_the_live_o_plus_front_end_cannot_inject_is_bad_input(fault: str, engine: str, capsys: Any) -> None:
    assert main(["conformance", "--operator", f"{OPS}:KEY_SUM", "--inject-fault", fault, "--engine", engine,
                 "--cases", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "--inject-fault" in err and "Traceback" not in err, err


@pytest.mark.slow
@pytest.mark.parametrize("fault", ["window-off-by-one", "drop-near-watermark"])
def test_a_seeded_fault_makes_a_correct_operator_fail_live(fault: str, spark: Any, tmp_path: Path,
                                                           capsys: Any) -> None:
    code = main(["conformance", "--operator", f"{OPS}:KEY_SUM", "--inject-fault", fault, "--cases", "8",
                 "--shrink-budget", "0", "--json", "--save-dir", str(tmp_path)])
    out = json.loads(capsys.readouterr().out)
    checks = {c["name"]: c for c in out["suites"][0]["checks"]}
    assert code == 1 and checks[LIVE]["failed"] > 0, checks[LIVE]
    assert checks["reference SN vs sequential"]["failed"] == 0  # the fault is spark_impl's, not the operator's
    saved = [json.loads(p.read_text()) for p in tmp_path.glob("*.json")]
    assert [r["faults"] for r in saved] == [[fault]]
    assert main(["conformance", "--replay", str(next(tmp_path.glob("*.json")))]) == 1  # replayed with its fault
