"""docs/conformance.md ("Replaying a saved case") and docs/cli.md: a damaged or hand-edited
replay file is bad input - exit 2 with one stderr line naming the file and the field - never a
crash (exit 3) and never "still fails" because an engine refused invalid data (exit 1); and
docs/fries.md ("Size bounds"): every size of a Fries scenario is bounded before work starts.

The records are built here from the suites' own generators and replayed on the reference
engines, in-process (:mod:`hostile_cli`); the hypothesis property mutates them at random
(:mod:`hostile_mutations`) and checks the CLI contract for each.
"""

from __future__ import annotations

import copy
import json
import os
import time
from pathlib import Path
from typing import Any, Callable

import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

from spec.errors import InputError
from spec.fries.scenario import MAX_COPIES, MAX_PARALLELISM, MAX_RECORDS, scenario_from_json

from conformance.core.cases import draw_cases
from conformance.core.saved_case import FORMAT
from conformance.dgs.cases import case_to_json, draw_dgs_cases
from conformance.oplus.cases import oplus_cases
from support.hostile_cli import assert_contract, run
from support.hostile_mutations import mutated

EXAMPLES = int(os.environ.get("HOSTILE_EXAMPLES", "0"))
FRIES_CASE: dict[str, Any] = {
    "dataflow": {"operators": [{"name": "A", "kind": "source"}, {"name": "F", "kind": "one-to-many"},
                               {"name": "K", "kind": "one-to-one"}],
                 "edges": [["A", "F"], ["F", "K"]]},
    "functions": {"F": {"op": "fanout", "copies": 2}, "K": {"op": "map", "mul": 1, "add": 0}},
    "sources": {"A": [{"key": 1, "value": 5}, {"key": 2, "value": 6}]},
    "parallelism": {"K": 2}}


def _record(suite: str, case_data: Any, scheduler: str) -> dict[str, Any]:
    return {"format": FORMAT, "suite": suite, "engine": "reference", "scheduler": scheduler, "faults": [],
            "seed": 0, "case": 0, "oracles": [], "explanation": "", "case_data": case_data}


def records() -> dict[str, dict[str, Any]]:
    """One valid reference-engine record per catalogue suite."""
    return {"fries": _record("fries", FRIES_CASE, "fries"),
            "dgs": _record("dgs", case_to_json(draw_dgs_cases(1, 0)[0]), "plan"),
            "oplus": _record("oplus", draw_cases(oplus_cases(), 1, 0)[0][0], "vsn")}


RECORDS = records()


def _first_event_stream(record: dict[str, Any]) -> list[Any]:
    streams = record["case_data"]["input"]["streams"]
    return streams[sorted(streams)[0]]  # type: ignore[no-any-return]


def _unsort(record: dict[str, Any]) -> None:
    items = [item for item in record["case_data"]["inputs"][0] if "ts" in item]
    items[0]["ts"] = 10**6


DAMAGED: dict[str, tuple[str, Callable[[dict[str, Any]], None], str]] = {
    "fault_as_a_list": ("fries", lambda r: r.update(faults=[["naive"]]), "faults[0]"),
    "unknown_scheduler": ("fries", lambda r: r.update(scheduler="bogus"), "scheduler"),
    "unknown_path": ("fries", lambda r: r.update(scheduler="fries:bogus"), "scheduler"),
    "fries_seed_as_a_list": ("fries", lambda r: r.update(seed=[1]), "seed"),
    "fries_unknown_engine": ("fries", lambda r: r.update(engine="bogus"), "engine"),
    "fries_parallelism_1e9": ("fries", lambda r: r["case_data"]["parallelism"].update(K=10**9), "parallelism.K"),
    "fries_parallelism_1e5": ("fries", lambda r: r["case_data"]["parallelism"].update(K=10**5), "parallelism.K"),
    "fries_copies_1e9": ("fries", lambda r: r["case_data"]["functions"]["F"].update(copies=10**9), "copies"),
    "fries_copies_1e5": ("fries", lambda r: r["case_data"]["functions"]["F"].update(copies=10**5), "copies"),
    "oplus_seed_as_a_list": ("oplus", lambda r: r.update(seed=[1]), "seed"),
    "oplus_wa_0": ("oplus", lambda r: r["case_data"].update(WA=0), "WA"),
    "oplus_unknown_field": ("oplus", lambda r: r["case_data"].update(bogus=1), "bogus"),
    "oplus_unsorted_input": ("oplus", _unsort, "inputs[0]"),
    "oplus_unknown_mode": ("oplus", lambda r: r.update(scheduler="bogus"), "scheduler"),
    "dgs_invalid_plan": ("dgs", lambda r: r["case_data"]["plan"]["root"].update(state_type="Nope"), "plan"),
    "dgs_unsorted_input": ("dgs", lambda r: _first_event_stream(r).reverse(), "input"),
    "dgs_foreign_event": ("dgs", lambda r: _first_event_stream(r)[0].update(event=["zz", 99]), "input"),
    "dgs_missing_stream": ("dgs", lambda r: r["case_data"]["input"]["streams"].pop("s0"), "plan"),
    "dgs_unknown_engine": ("dgs", lambda r: r.update(engine="bogus"), "engine"),
}


def _write(directory: Path, name: str, record: Any) -> str:
    path = directory / f"{name}.json"
    path.write_text(json.dumps(record), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("suite", sorted(RECORDS))
def test_a_valid_reference_record_replays_and_passes(tmp_path: Path, suite: str) -> None:
    """docs/conformance.md: --replay of a valid case file runs it (the damaged ones below are
    refused by validation, not by accident)."""
    outcome = run(["conformance", "--replay", _write(tmp_path, suite, RECORDS[suite]), "--json"], 60)
    assert outcome.code == 0, outcome.describe()
    assert json.loads(outcome.out)["passed"] is True


@pytest.mark.parametrize("name", sorted(DAMAGED))
def test_a_damaged_replay_file_is_one_line_of_bad_input(tmp_path: Path, name: str) -> None:
    """docs/conformance.md: a damaged case file is exit 2, one line naming the file and the field."""
    suite, damage, field = DAMAGED[name]
    record = copy.deepcopy(RECORDS[suite])
    damage(record)
    path = _write(tmp_path, name, record)
    began = time.monotonic()
    outcome = run(["conformance", "--replay", path, "--json"], 20)
    assert outcome.code == 2, outcome.describe()
    assert len(outcome.err.splitlines()) == 1 and path in outcome.err and field in outcome.err, outcome.describe()
    assert outcome.out == ""
    assert time.monotonic() - began < 10


@pytest.mark.parametrize("edit, where", [
    (lambda c: c["parallelism"].update(K=MAX_PARALLELISM + 1), "parallelism.K"),
    (lambda c: c["functions"]["F"].update(copies=MAX_COPIES + 1), "functions.F.copies"),
    (lambda c: (c["functions"]["F"].update(copies=MAX_COPIES),
                c["sources"]["A"].extend({"key": i, "value": i} for i in range(MAX_RECORDS // MAX_COPIES))),
     "more than 1,000,000 records"),
    (lambda c: c.update(reconfigurations=[{"at": 0, "updates": {"F": {"function": {"op": "fanout",
                                                                                     "copies": 10**9}}}}]),
     "reconfigurations[0].updates.F.function.copies"),
])
def test_every_fries_size_is_bounded_before_work_starts(edit: Callable[[dict[str, Any]], None], where: str) -> None:
    """docs/fries.md "Size bounds": parallelism <= 1024, copies <= 1000, records <= 10^6."""
    case = copy.deepcopy(FRIES_CASE)
    edit(case)
    with pytest.raises(InputError) as raised:
        scenario_from_json(case)
    assert where in str(raised.value)


def test_the_largest_fries_sizes_are_accepted() -> None:
    """docs/fries.md "Size bounds": the bounds themselves are valid."""
    case = copy.deepcopy(FRIES_CASE)
    case["parallelism"]["K"] = MAX_PARALLELISM
    case["functions"]["F"]["copies"] = MAX_COPIES
    assert scenario_from_json(case).parallelism["K"] == MAX_PARALLELISM


@settings(max_examples=EXAMPLES or 40, deadline=None, derandomize=not EXAMPLES,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(st.sampled_from(sorted(RECORDS)).flatmap(lambda suite: mutated(json.dumps(RECORDS[suite]))), st.booleans())
def test_mutated_replay_files_keep_the_contract(tmp_path: Path, text: str, as_json: bool) -> None:
    """docs/cli.md: --replay of a randomly damaged case file: exit 0/1/2, one stderr line on 2,
    valid --json, an answer within the limit."""
    path = tmp_path / "case.json"
    path.write_bytes(text.encode("utf-8", "surrogateescape"))
    assert_contract(run(["conformance", "--replay", str(path)] + (["--json"] if as_json else []), 20))
