"""docs/production/dgs.md, "The recipe, step by step", as a reader runs it.

The page's program is its block ``# word_counter.py: ...``; its steps are the blocks
``# dgs: <step>``, run in page order in one namespace (one Python session) on the test
session's SparkSession (the page's ``get_or_create_session()`` returns it), from an empty
directory holding ``word_counter.py``, as the page says. After every step, what it printed is
exactly the ``text`` block the page shows under it, and the log lines that block shows
(``LEVEL logger message``) were logged, with no other WARNING. Then the run is checked against
the documented promises, independently of the page's own figures: the late sink holds exactly
the events the documented rule calls late (at or before the stream's watermark, ``highest -
allowed_lateness - 1``, as their micro-batch starts), in either order of the two files landed in
the same millisecond; the results are the sequential program's outputs on the event-time-sorted
input without the late events (``spec(sort(u))``), each once; the late counts survive the
restarts.
"""

from __future__ import annotations

import ast
import json
import logging
import os
import re
from collections import Counter
from typing import Any, Sequence

import pytest

from spec.dgs.loader import load_program
from spec.dgs.semantics import spec_run
from spec.dgs.streams import Heartbeat, StreamEvent, sort_streams, value_to_json
from support.doc_blocks import assert_compiles_and_imports_exist, doc_scripts, doc_steps

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "docs", "production", "dgs.md")
STEPS = ("setup", "start", "same-millisecond", "move-on", "late", "end", "restart-fail", "restart-drop")
LOG_LINE = re.compile(r"^(DEBUG|INFO|WARNING|ERROR) (streamproof(?:\.\w+)*) (.*)$")
LATENESS = 10
"""The page's ``allowed_lateness``."""


def test_the_pages_program_and_steps_are_there_compile_and_import_what_exists() -> None:
    scripts = doc_scripts(DOC)
    assert sorted(scripts) == ["word_counter.py"]
    steps = doc_steps(DOC, "dgs")
    assert tuple(s.name for s in steps) == STEPS
    for name, code in [*scripts.items(), *((s.name, s.code) for s in steps)]:
        assert_compiles_and_imports_exist(name, code)


def test_every_start_in_the_page_passes_allowed_lateness_and_late_policy() -> None:
    """The page's recipe sets both on every start (the default policy is not relied on)."""
    with open(DOC, encoding="utf-8") as handle:
        text = handle.read()
    calls = [node for block in re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
             if "start_dgs_query(" in block for node in ast.walk(ast.parse(block))
             if isinstance(node, ast.Call) and getattr(node.func, "id", "") == "start_dgs_query"]
    assert len(calls) == 3
    for call in calls:
        assert {"allowed_lateness", "late_policy"} <= {k.arg for k in call.keywords}


def _late_by_the_rule(files: Sequence[list[dict[str, Any]]], lateness: int) -> list[dict[str, Any]]:
    """The events the documented rule calls late, the files taken one micro-batch each."""
    highest: dict[str, int] = {}
    late = []
    for rows in files:
        marks = {s: top if lateness == 0 else top - lateness - 1 for s, top in highest.items()}
        taken = []
        for row in rows:
            if row["stream"] in marks and row["ts"] <= marks[row["stream"]]:
                if "event" in row:
                    late.append(row)
            else:
                taken.append(row)
        for row in taken:
            highest[row["stream"]] = max(highest.get(row["stream"], row["ts"]), row["ts"])
    return late


def _reference(target: str, rows: list[dict[str, Any]]) -> Counter[str]:
    """``spec(sort(u))`` of the event rows, as the sink's JSON texts."""
    program = load_program(target)
    streams: dict[str, list[Any]] = {}
    for row in sorted(rows, key=lambda r: r["ts"]):
        streams.setdefault(row["stream"], [])
        if "event" in row:
            streams[row["stream"]].append(StreamEvent(row["ts"], tuple(row["event"])))
    for items in streams.values():
        items.append(Heartbeat(10 ** 9))
    _, outputs = spec_run(program, sort_streams(streams))
    return Counter(json.dumps(value_to_json(x), sort_keys=True) for x in outputs)


def _landed(base: str, name: str) -> list[dict[str, Any]]:
    with open(os.path.join(base, "in", name), encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


@pytest.mark.spark
def test_the_recipe_run_top_to_bottom_prints_and_logs_what_the_page_shows_and_keeps_the_promises(
        spark: Any, tmp_path: Any, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str],
        caplog: pytest.LogCaptureFixture) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "word_counter.py").write_text(doc_scripts(DOC)["word_counter.py"], encoding="utf-8")
    caplog.set_level(logging.INFO, logger="streamproof")
    namespace: dict[str, Any] = {"__name__": "dgs_guide"}
    try:
        for step in doc_steps(DOC, "dgs"):
            capsys.readouterr()
            caplog.clear()
            exec(compile(step.code, f"{DOC}: {step.name}", "exec"), namespace)  # noqa: S102 - the page's own code
            printed = capsys.readouterr().out.splitlines()
            logged = [f"{r.levelname} {r.name} {r.getMessage()}" for r in caplog.records
                      if r.name.startswith("streamproof")]
            shown = step.shown.splitlines() if step.shown else []
            assert printed == [line for line in shown if not LOG_LINE.match(line)], step.name
            shown_logs = [line for line in shown if LOG_LINE.match(line)]
            assert [line for line in shown_logs if line not in logged] == [], (step.name, logged)
            assert [line for line in logged if line.startswith("WARNING") and line not in shown_logs] == [], step.name
    finally:
        run = namespace.get("run")
        if run is not None and run.query is not None and run.query.isActive:
            run.stop()

    base = namespace["base"]
    target = namespace["target"]
    files = {name: _landed(base, name) for name in ("a.json", "b.json", "c.json", "d.json", "e.json", "f.json")}
    rest = [files[n] for n in ("c.json", "d.json", "e.json", "f.json")]
    late_ab = _late_by_the_rule([files["a.json"], files["b.json"], *rest], LATENESS)
    late_ba = _late_by_the_rule([files["b.json"], files["a.json"], *rest], LATENESS)
    assert late_ab == late_ba  # the same-millisecond files in either order: the same late events
    *sunk, dropped = late_ab
    assert dropped in files["f.json"]  # the last is the one the "drop" restart dropped
    late_sink = spark.read.parquet(os.path.join(base, "late")).collect()
    assert sorted(json.loads(r["value"]) for r in late_sink) == sorted(sunk, key=lambda r: (r["ts"], r["stream"]))
    assert namespace["run"].late_count() == len(late_ab)  # every restart kept the count

    on_time = [row for rows in files.values() for row in rows if row not in late_ab]
    results = spark.read.parquet(os.path.join(base, "results")).collect()
    assert Counter(json.dumps(json.loads(r["value"]), sort_keys=True) for r in results) == _reference(target, on_time)
