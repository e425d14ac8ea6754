"""``streamproof dgs-plan``: a plan built, optimized or given, checked (V1, V2), run in the
sandbox and compared with the sequential program; exit 0 / 1 / 2, ``--json``; the load and
synchronization counts against an instrumented run; ``cap_leaves`` keeps plans P-valid."""

from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest

from streamproof.main import main
from streamproof.sandbox.plan_task import worker_load
from support.dgs_helpers import EXAMPLES, example, target, write_program
from reference.dgs.executor import execute_plan
from reference.dgs.leaves import cap_leaves, leaf_count
from reference.dgs.optimizer import optimize
from spec.dgs.plan import plan_from_json
from spec.dgs.program import Program
from spec.dgs.semantics import multiset_equal
from spec.dgs.streams import StreamEvent, expected_output, streams_from_json
from spec.dgs.validity import is_valid

WINDOW_STREAMS = str(EXAMPLES / "streams" / "windowing.json")
COUNTER_STREAMS = str(EXAMPLES / "streams" / "key_counter.json")


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(["dgs-plan", *argv])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def one_line_error(capsys: pytest.CaptureFixture[str], argv: list[str]) -> str:
    code, out, err = run(argv, capsys)
    assert code == 2, out + err
    assert out == "" and len(err.strip().splitlines()) == 1, err
    return err


def window_events() -> int:
    document = json.loads(Path(WINDOW_STREAMS).read_text())
    return sum("event" in item for items in document["streams"].values() for item in items)


def test_built_plan_on_shipped_example_is_valid_and_equal(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run([target("windowing.py:EventWindow"), "--streams", WINDOW_STREAMS], capsys)
    assert code == 0, out + err
    assert "built plan, 3 leaf workers" in out and "'barrier'@b" in out and "plan valid" in out
    assert "outputs equal the sequential program's (5 outputs" in out
    # the root handles the 5 barriers; each joins and forks at the root and at the inner worker
    assert "synchronizations: 10 joins, 10 forks" in out


def test_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([target("windowing.py:EventWindow"), "--streams", WINDOW_STREAMS, "--json"], capsys)
    assert code == 0
    document = json.loads(out)
    assert document["ok"] is True and document["valid"] is True and document["outputs_equal"] is True
    assert document["counterexample"] is None and document["plan_source"] == "built"
    plan = plan_from_json(document["plan"])
    assert leaf_count(plan) == document["leaves"] == 3
    assert sum(w["events"] for w in document["workers"]) == window_events()
    assert {w["id"] for w in document["workers"]} == {w.id for w in plan.workers()}
    assert document["synchronizations"] == {"joins": 10, "forks": 10}
    assert document["spark_model"]["inline_below"] == 0 and document["output"]["stdout"] == ""


def test_optimize_chooses_inline_below_and_leaves(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([target("windowing.py:EventWindow"), "--streams", WINDOW_STREAMS, "--optimize", "--json"],
                       capsys)
    assert code == 0
    model = json.loads(out)["spark_model"]
    assert json.loads(out)["plan_source"] == "optimized"
    assert model["cost"] == min(c["cost"] for c in model["tried"])
    # barriers at ts 20 and 21 leave a 3-event segment between two root synchronizations:
    # inlining it saves a round (10) for 2 more critical events
    assert model["inline_below"] > 3 and model["rounds"] == 4
    code, out, _ = run([target("windowing.py:EventWindow"), "--streams", WINDOW_STREAMS, "--optimize",
                        "--workers", "2", "--json"], capsys)
    document = json.loads(out)
    assert code == 0 and document["leaves"] == 1 and document["synchronizations"] == {"joins": 0, "forks": 0}
    assert document["spark_model"]["cost"] == window_events()  # one worker: every event on the path


def test_invalid_given_plan_exits_1_with_the_v2_counterexample(tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    document = json.loads(Path(WINDOW_STREAMS).read_text())
    document["plan"] = {"root": {"id": "w0", "impl_tags": [{"tag": "value", "stream": "v1"}],
                                 "children": [
                                     {"id": "w1", "impl_tags": [{"tag": "value", "stream": "v0"},
                                                                {"tag": "barrier", "stream": "b"}]},
                                     {"id": "w2", "impl_tags": [{"tag": "value", "stream": "v2"}]}]}}
    path = tmp_path / "bad_plan.json"
    path.write_text(json.dumps(document))
    code, out, _ = run([target("windowing.py:EventWindow"), "--streams", str(path)], capsys)
    assert code == 1
    assert "plan INVALID: plan: V2: workers 'w1' and 'w2' are not ancestor-related" in out
    assert "'barrier'@b (w1) depends on 'value'@v2 (w2)" in out
    code, out, _ = run([target("windowing.py:EventWindow"), "--streams", str(path), "--json"], capsys)
    assert code == 1 and json.loads(out)["valid"] is False and "V2" in json.loads(out)["counterexample"]


def test_inconsistent_program_outputs_differ(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run([target("windowing.py:MaxWindow"), "--streams", WINDOW_STREAMS], capsys)
    assert code == 1
    assert "plan valid" in out and "outputs DIFFER from the sequential program's: 5 outputs against 5;" in out


def test_bad_streams_files(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    prog = target("key_counter.py:KeyCounter")
    cases = {
        '{"streams": {"s0": [{"event": ["i", 0]}]}}': "$.streams.s0[0]: missing field 'ts'",
        '{"streams": {"s0": [{"ts": 2, "event": ["i", 0]}, {"ts": 1, "heartbeat": true}]}}': "not strictly increasing",
        '{"streams": {}, "plans": 1}': "$: unknown field 'plans'",
        '{"streams": {"s0": [{"ts": 1, "event": ["i", 0]}]}, "rates": [{"tag": "x", "stream": "s0", "rate": -1}]}':
            "$.rates[0].rate: expected a finite number >= 0",
        '{"streams": {"s0": [{"ts": 1, "event": ["i", 0]}]}, "nodes": {"s9": "n"}}': "unknown stream 's9'",
        '{"streams": {"s0": [{"ts": 1, "event": ["i", 0]}]}, "plan": {"root": {}}}': "$.plan.root: missing field 'id'",
        '[1': "",
    }
    for index, (text, expected) in enumerate(cases.items()):
        path = tmp_path / f"s{index}.json"
        path.write_text(text)
        err = one_line_error(capsys, [prog, "--streams", str(path)])
        assert str(path) in err and expected in err, err
    err = one_line_error(capsys, [prog, "--streams", str(tmp_path / "missing.json")])
    assert "missing.json" in err
    bad_rate = tmp_path / "bad_rate.json"
    bad_rate.write_text(json.dumps({**json.loads(Path(COUNTER_STREAMS).read_text()),
                                    "rates": [{"tag": ["x", 9], "stream": "s0", "rate": 1}]}))
    err = one_line_error(capsys, [prog, "--streams", str(bad_rate)])
    assert f"{bad_rate}: $.rates: ('x', 9) is not a tag of KeyCounter" in err, err
    assert "--sync-cost must be" in one_line_error(capsys, [prog, "--streams", COUNTER_STREAMS, "--sync-cost", "nan"])
    given = tmp_path / "given.json"
    given.write_text(json.dumps({**json.loads(Path(COUNTER_STREAMS).read_text()), "plan": {"root": {"id": "w0"}}}))
    assert "--optimize and --workers apply only" in one_line_error(capsys, [prog, "--streams", str(given), "--optimize"])
    assert "--workers must be between" in one_line_error(capsys, [prog, "--streams", COUNTER_STREAMS, "--workers", "0"])


HOSTILE = '''
import sys
from key_counter import KeyCounter

class Exits(KeyCounter):
    @staticmethod
    def tag(event):
        sys.exit(3)

class Hangs(KeyCounter):
    @staticmethod
    def update(state, event):
        while True:
            pass

class Prints(KeyCounter):
    @staticmethod
    def update(state, event):
        print("hello from update")
        return KeyCounter.update(state, event)
'''


def test_hostile_programs_are_sandboxed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "key_counter.py").write_text((EXAMPLES / "key_counter.py").read_text())
    path = write_program(tmp_path, HOSTILE, "hostile.py")
    err = one_line_error(capsys, [f"{path}:Exits", "--streams", COUNTER_STREAMS])
    assert "SystemExit" in err and "Exits.tag" in err, err
    err = one_line_error(capsys, [f"{path}:Hangs", "--streams", COUNTER_STREAMS, "--call-timeout", "1"])
    assert "within 1 s" in err and "update" in err, err
    code, out, _ = run([f"{path}:Prints", "--streams", COUNTER_STREAMS, "--json"], capsys)
    document = json.loads(out)
    assert code == 0 and "hello from update" in document["output"]["stdout"]


class _Counting(Program):
    """A program counting its joins and forks."""

    calls: dict[str, int]

    def join(self, name: str, left: Any, right: Any) -> Any:
        self.calls["join"] += 1
        return super().join(name, left, right)

    def fork(self, name: str, state: Any, pred1: Any, pred2: Any) -> tuple[Any, Any]:
        self.calls["fork"] += 1
        return super().fork(name, state, pred1, pred2)


def test_counted_synchronizations_match_the_executor() -> None:
    """worker_load's joins/forks equal the executor's calls, minus the initial fork of init
    and the final join (one per worker with children) - on every leaf count of the plan."""
    program = example("windowing.py:EventWindow")
    streams = streams_from_json({"streams": json.loads(Path(WINDOW_STREAMS).read_text())["streams"]})
    rates = {(program.tag(i.payload), s): 1.0 for s, items in streams.items() for i in items
             if isinstance(i, StreamEvent)}
    full = optimize(program, rates)
    for leaves in range(1, leaf_count(full) + 1):
        plan = cap_leaves(program, full, leaves, rates)
        counting = _Counting(**{f.name: getattr(program, f.name) for f in fields(program) if f.init})
        object.__setattr__(counting, "calls", {"join": 0, "fork": 0})
        result = execute_plan(counting, plan, streams)
        inner = sum(bool(w.children) for w in plan.workers())
        load = worker_load(plan, result.processed)
        assert sum(w["joins"] for w in load) == counting.calls["join"] - inner
        assert sum(w["forks"] for w in load) == counting.calls["fork"] - inner


@pytest.mark.parametrize("name", ["key_counter.py:KeyCounter", "page_view.py:PageViewJoin",
                                  "fraud_detection.py:FraudDetection", "windowing_typed.py:TypedWindow"])
def test_cap_leaves_keeps_plans_valid_and_correct(name: str) -> None:
    program = example(name)
    document = json.loads(Path(COUNTER_STREAMS).read_text()) if name.startswith("key") else None
    rates = {(t, f"s{i}"): float(i + 1) for i, t in enumerate(sorted(program.tags, key=repr))}
    full = optimize(program, rates)
    for n in range(1, leaf_count(full) + 1):
        plan = cap_leaves(program, full, n, rates)
        assert leaf_count(plan) <= n and is_valid(program, plan)
        assert plan.root.subtree_impl_tags() == full.root.subtree_impl_tags()
    if document is not None:
        streams = streams_from_json({"streams": document["streams"]})
        counter_rates = {(program.tag(i.payload), s): 1.0 for s, items in streams.items() for i in items
                         if isinstance(i, StreamEvent)}
        counter_full = optimize(program, counter_rates)
        for n in range(1, leaf_count(counter_full) + 1):
            plan = cap_leaves(program, counter_full, n, counter_rates)
            assert multiset_equal(execute_plan(program, plan, streams).outputs, expected_output(program, streams))


@pytest.mark.slow
def test_engine_spark_runs_the_optimized_plan(capsys: pytest.CaptureFixture[str]) -> None:
    """--engine spark: a Spark session in the sandbox's process; its rounds and events per
    worker are what the cost model predicted for the chosen inline_below."""
    code, out, err = run([target("windowing.py:EventWindow"), "--streams", WINDOW_STREAMS, "--optimize",
                          "--engine", "spark", "--json"], capsys)
    assert code == 0, out + err
    document = json.loads(out)
    spark, model = document["spark"], document["spark_model"]
    assert spark["outputs_equal"] is True and spark["inline_below"] == model["inline_below"] == 4
    assert spark["rounds"] == model["rounds"] == 4
    assert sum(spark["events"].values()) == window_events() and spark["events"]["w0"] == 5 + 3
    assert "log4j" not in document["output"]["stderr"]


@pytest.mark.parametrize("command", ["dgs-plan", "check-dgs"])
def test_total_limit_hit_while_starting_is_one_line_bad_input(
        command: str, capsys: pytest.CaptureFixture[str]) -> None:
    """A limit hit before the child set up its stack dump used to be exit 3 (the dump file did
    not exist); dgs-plan's message said 'check' and 'lower --examples', options it lacks."""
    # 1 ms: the parent's first look comes after one 50 ms poll, and no child Python is ready
    # by then (0.2 s was not enough to be sure on a quiet machine: dgs-plan finished first)
    argv = [command, target("windowing.py:EventWindow"), "--timeout", "0.001"]
    if command == "dgs-plan":
        argv += ["--streams", WINDOW_STREAMS]
    code = main(argv)
    err = capsys.readouterr().err
    assert code == 2 and len(err.strip().splitlines()) == 1, err
    assert "did not finish within 0.001 s" in err and "while checking" not in err
    assert ("--examples" in err) == (command == "check-dgs")
