"""Saving a shrunk failing case as a replayable JSON file and a ready pytest regression test.

The JSON file (format ``streamproof-conformance-case/1``, see docs/conformance.md)::

    {"format": "streamproof-conformance-case/1", "suite": "fries", "engine": "spark",
     "scheduler": "fries", "faults": ["naive"], "seed": 7, "case": 12,
     "oracles": ["serializable"], "explanation": "...", "case_data": {<the scenario JSON>}}

``streamproof conformance --replay FILE`` runs it again (exit 1 while it still fails). The
pytest file next to it replays the case on the same engine and scheduler *without* injected
faults: a seeded fault is a test of the suite, not a bug to fix, so the regression test is
green on a correct engine and red on an engine that has the bug for real.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any, Mapping

from spec.errors import InputError
from spec.jsonio import expect_list, expect_object, expect_str, load_json, write_json_atomic, write_text_atomic

FORMAT = "streamproof-conformance-case/1"

_TEST_TEMPLATE = '''"""Regression test written by `streamproof conformance` ({suite} suite, seed {seed}, case {case}).

Failed oracles: {oracles}. The case is in {json_name}; it is replayed on the {engine}
engine{faults_note}. Replay by hand: streamproof conformance --replay {json_name}
"""

from pathlib import Path

import pytest

from conformance.replay import replay_file

CASE = Path(__file__).with_name("{json_name}")


{marks}def test_{name}() -> None:
    outcome = replay_file(CASE, faults=frozenset())
    assert outcome.ok, outcome.explanation
'''


def save_case(directory: str | Path, *, suite: str, engine: str, scheduler: str, faults: tuple[str, ...],
              seed: int, case: int, oracles: tuple[str, ...], explanation: str,
              case_data: Mapping[str, Any]) -> tuple[Path, Path]:
    """Write the replay JSON and the pytest file into ``directory``; return both paths."""
    folder = Path(directory)
    stem = _slug(f"{suite}_{engine}_{'_'.join(faults) or 'nofault'}_seed{seed}_case{case}")
    json_path = folder / f"{stem}.json"
    test_path = folder / f"test_regression_{stem}.py"
    write_json_atomic(json_path, {
        "format": FORMAT, "suite": suite, "engine": engine, "scheduler": scheduler,
        "faults": list(faults), "seed": seed, "case": case, "oracles": list(oracles),
        "explanation": explanation, "case_data": dict(case_data),
    })
    marks = "@pytest.mark.spark\n" if engine == "spark" else ""
    write_text_atomic(test_path, _TEST_TEMPLATE.format(
        suite=suite, seed=seed, case=case, oracles=", ".join(oracles) or "none", json_name=json_path.name,
        engine=engine, faults_note=f" (recorded with faults {list(faults)}, replayed without)" if faults else "",
        marks=marks, name=stem))
    return json_path, test_path


def load_case(path: str | Path) -> dict[str, Any]:
    """Read and validate a replay file (InputError naming the problem)."""
    where = str(path)
    raw = expect_object(load_json(path), where)
    if raw.get("format") != FORMAT:
        raise InputError(f"not a conformance case file (expected format {FORMAT!r})", where)
    expect_str(raw.get("suite"), f"{where}: suite")
    expect_str(raw.get("engine"), f"{where}: engine")
    expect_list(raw.get("faults", []), f"{where}: faults")
    expect_object(raw.get("case_data"), f"{where}: case_data")
    return dict(raw)


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_]+", "_", text).strip("_").lower()
