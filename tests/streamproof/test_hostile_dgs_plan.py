"""``streamproof dgs-plan`` under hostile input (docs/cli.md "streamproof dgs-plan": exit 0 / 1
/ 2 with one stderr line naming the streams file and its JSON path; ``--json`` always valid
JSON; docs/dgs.md: rates at most 10^12 events per time unit, ``--sync-cost`` at most 10^9,
outputs compared with NaN equal to NaN)."""

from __future__ import annotations

import json
import math
import time
from pathlib import Path
from typing import Any

import pytest

from support.dgs_helpers import EXAMPLES, simple_program, target, write_program
from support.hostile_cli import assert_contract, run
from spec.dgs.semantics import multiset_equal

WINDOW = target("windowing.py:EventWindow")
STREAMS: dict[str, Any] = json.loads((EXAMPLES / "streams" / "windowing.json").read_text())


def _streams(tmp_path: Path, document: Any) -> str:
    path = tmp_path / "streams.json"
    path.write_text(json.dumps(document))
    return str(path)


def _refused(argv: list[str], *needles: str) -> str:
    outcome = run(["dgs-plan", *argv, "--json"], 60)
    assert_contract(outcome)
    assert outcome.code == 2 and outcome.out == "", outcome.describe()
    for needle in needles:
        assert needle in outcome.err, outcome.describe()
    return outcome.err


@pytest.mark.parametrize("rate", [10**400, 10**13, 1e300], ids=["400 digits", "1e13", "1e300"])
def test_a_rate_beyond_the_bound_is_bad_input(tmp_path: Path, rate: Any) -> None:
    """A 400-digit ``rates[].rate`` was exit 3 (OverflowError)."""
    document = {**STREAMS, "rates": [{"tag": "value", "stream": "v0", "rate": rate}]}
    _refused([WINDOW, "--streams", _streams(tmp_path, document)], "$.rates[0].rate", "10^12")


def test_a_rate_on_an_unknown_stream_is_bad_input(tmp_path: Path) -> None:
    """A ``rates`` entry on a stream not in ``streams`` was exit 3 "worker 'w0' is stuck"."""
    document = {**STREAMS, "rates": [{"tag": "value", "stream": "nowhere", "rate": 1}]}
    _refused([WINDOW, "--streams", _streams(tmp_path, document)], "$.rates[0].stream", "nowhere")


def test_a_plan_tag_on_an_unknown_stream_is_bad_input(tmp_path: Path) -> None:
    """A plan worker responsible for a stream not in ``streams`` was exit 3 "stuck"."""
    plan = {"root": {"id": "w0", "state_type": "State",
                     "impl_tags": [{"tag": "value", "stream": s} for s in ("v0", "v1", "v2", "ghost")]
                     + [{"tag": "barrier", "stream": "b"}]}}
    document = {**STREAMS, "plan": plan}
    _refused([WINDOW, "--streams", _streams(tmp_path, document)], "$.plan", "ghost")


@pytest.mark.parametrize("cost", ["1e308", "1e10", "inf", "nan", "-1"])
def test_sync_cost_beyond_the_bound_is_bad_input(cost: str) -> None:
    """``--sync-cost 1e308`` printed ``"cost": Infinity`` in ``--json``."""
    _refused([WINDOW, "--streams", str(EXAMPLES / "streams" / "windowing.json"), "--sync-cost", cost],
             "--sync-cost")


def test_the_largest_bounds_give_finite_costs(tmp_path: Path) -> None:
    """At the bounds (every rate 10^12, sync cost 10^9) the ``--json`` document is valid JSON
    (no Infinity)."""
    rates = [{"tag": "value", "stream": s, "rate": 10**12} for s in ("v0", "v1", "v2")]
    document = {**STREAMS, "rates": rates + [{"tag": "barrier", "stream": "b", "rate": 10**12}]}
    outcome = run(["dgs-plan", WINDOW, "--streams", _streams(tmp_path, document), "--sync-cost", "1e9",
                   "--optimize", "--json"], 60)
    assert_contract(outcome)
    assert outcome.code == 0, outcome.describe()
    assert math.isfinite(json.loads(outcome.out)["spark_model"]["cost"])


NAN_PROGRAM = simple_program().replace("def out(s, e): return []",
                                      'def out(s, e): return [float("nan"), ("avg", float("nan"))]')


def test_nan_outputs_are_equal_outputs(tmp_path: Path) -> None:
    """docs/dgs.md: outputs compare as multisets with NaN equal to NaN (``out()`` returning
    ``float('nan')`` was "outputs DIFFER" although both sides computed the same)."""
    program = write_program(tmp_path, NAN_PROGRAM) + ":P"
    streams = {"streams": {"s0": [{"ts": 1, "event": "a"}, {"ts": 2, "event": "b"}, {"ts": 3, "heartbeat": True}],
                           "s1": [{"ts": 1, "event": "b"}, {"ts": 3, "heartbeat": True}]}}
    outcome = run(["dgs-plan", program, "--streams", _streams(tmp_path, streams), "--json"], 60)
    assert_contract(outcome)
    assert outcome.code == 0, outcome.describe()
    assert json.loads(outcome.out)["outputs_equal"] is True


def test_a_different_nan_free_output_still_differs() -> None:
    """NaN equality does not make different outputs equal."""
    assert multiset_equal([float("nan"), ("x", float("nan"))], [("x", float("nan")), float("nan")])
    assert not multiset_equal([float("nan")], [1.0])
    assert not multiset_equal([("x", float("nan"))], [("y", float("nan"))])
    assert not multiset_equal([[float("nan")]], [[0.0]])


@pytest.mark.parametrize("count, optimize", [(300, False), (100, True)])
def test_many_single_event_streams_get_an_answer(tmp_path: Path, count: int, optimize: bool) -> None:
    """k = 300 single-event streams took 112 s, k = 100 with ``--optimize`` 83 s (the P-validity
    check was quadratic, ``--optimize`` cubic); now seconds (benchmarks/cli_scaling.py)."""
    streams = {"streams": {f"s{i}": [{"ts": 1, "event": ["value", i]}, {"ts": 2, "heartbeat": True}]
                           for i in range(count)}}
    started = time.monotonic()
    outcome = run(["dgs-plan", WINDOW, "--streams", _streams(tmp_path, streams), "--json"]
                  + (["--optimize"] if optimize else []), 100)
    assert_contract(outcome)
    assert outcome.code == 0, outcome.describe()
    assert time.monotonic() - started < 60
