"""``streamproof conformance --job`` judges a job whose keys have mixed types.

docs/conformance.md ("Your own job"): exit 0 when every case passes, 1 when a case fails -
"never exit 3" for anything but a streamproof bug. A correct operator may key its output by
``None`` for one kind of record and by tuples for another (organic clicks and promotion clicks):
the ``states`` oracle must order such keys (``spark_impl.keys.key_order``) rather than crash,
and a seeded fault on such a job must still be caught as a violation. A blocking operator
flushes such keys in the deployment's order, which the reference follows.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from collections import Counter

import pytest

from streamproof.main import main
from conformance.fries.oracles import exactly_once_verdict, states_verdict
from spec.fries.dataflow import dataflow
from spec.fries.scenario import Scenario, Timing

JOB = '''
from typing import Any

from spark_impl.reconfig import ListSource, Request, UserOperator, user_job, user_update
from spec.fries.dataflow import dataflow


def attribute(state: Any, key: Any, value: Any) -> Any:
    user, promotion = value
    return (state or 0) + 1, [(None if promotion is None else (promotion, user % 2), value)]


def count(state: Any, key: Any, value: Any) -> Any:
    return (state or 0) + 1, [(key, (state or 0) + 1)]


def count_by_ten(state: Any, key: Any, value: Any) -> Any:
    return (state or 0) + 10, [(key, (state or 0) + 10)]


def job() -> Any:
    flow = dataflow([("S", "source"), ("A", "one-to-one"), ("B", "one-to-one")], [("S", "A"), ("A", "B")])
    clicks = tuple(("S", f"S:{i}", f"u{i % 3}", (i, None if i % 3 == 0 else f"camp{i % 2}")) for i in range(20))
    pipeline = user_job(flow, {"A": UserOperator(flow.kind("A"), attribute),
                               "B": UserOperator(flow.kind("B"), count)},
                        ListSource(clicks), parallelism={"A": 2, "B": 2})
    return pipeline, [Request({"B": user_update(flow, "B", count_by_ten, lambda s: s * 2)})], {"max_tuples": 8}


def total(state: Any, key: Any, value: Any) -> Any:
    return (state or 0) + value[0], []


def total_twice(state: Any, key: Any, value: Any) -> Any:
    return (state or 0) + 2 * value[0], []


def report(state: Any, key: Any) -> Any:
    return [(f"promotion {key!r}", state)]


def seen(state: Any, key: Any, value: Any) -> Any:
    return (state or ()) + (value,), [(key, (state or ()) + (value,))]


def blocking_job() -> Any:
    flow = dataflow([("S", "source"), ("A", "one-to-one"), ("T", "blocking"), ("C", "one-to-one")],
                    [("S", "A"), ("A", "T"), ("T", "C")])
    clicks = tuple(("S", f"S:{i}", f"u{i % 3}", (i, None if i % 3 == 0 else f"camp{i % 2}")) for i in range(20))
    pipeline = user_job(flow, {"A": UserOperator(flow.kind("A"), attribute),
                               "T": UserOperator(flow.kind("T"), total, report),
                               "C": UserOperator(flow.kind("C"), seen)},
                        ListSource(clicks), parallelism={"A": 2, "T": 1, "C": 1})
    return pipeline, [Request({"T": user_update(flow, "T", total_twice, lambda s: s)})], {"max_tuples": 8,
                                                                                          "dependence": "sink"}
'''


def _conformance(tmp_path: Path, capsys: pytest.CaptureFixture[str], *args: str,
                 name: str = "job") -> tuple[int, dict[str, Any]]:
    (tmp_path / "mixed_keys_job.py").write_text(JOB)
    code = main(["conformance", "--job", f"{tmp_path / 'mixed_keys_job.py'}:{name}", "--seed", "0", "--json",
                 "--save-dir", str(tmp_path / "failures"), *args])
    out = capsys.readouterr()
    assert code in (0, 1), out.err[-2000:]
    return code, json.loads(out.out)


@pytest.mark.spark
def test_a_correct_job_with_none_and_tuple_keys_passes(spark: Any, tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    code, summary = _conformance(tmp_path, capsys, "--cases", "3")
    assert code == 0 and summary["passed"] and summary["cases"] == 3


@pytest.mark.spark
def test_a_double_transform_on_mixed_keys_is_caught_as_a_violation(spark: Any, tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    code, summary = _conformance(tmp_path, capsys, "--cases", "4", "--shrink-budget", "3",
                                 "--inject-fault", "double-transform")
    assert code == 1 and not summary["passed"]
    assert "states" in summary["suites"][0]["failures"][0]["oracles"]


@pytest.mark.spark
def test_a_blocking_operator_flushing_none_and_tuple_keys_passes(spark: Any, tmp_path: Path,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """The reference flushes a blocking operator's keys in the deployment's order
    (``spark_impl.keys.key_order``), as the executor does: keys of mixed types are no user error,
    and the flushed records reach the next operator in the same order (``dependence="sink"``)."""
    code, summary = _conformance(tmp_path, capsys, "--cases", "3", name="blocking_job")
    assert code == 0 and summary["passed"] and summary["cases"] == 3


def test_the_state_and_exactly_once_oracles_report_mixed_keys_in_a_total_order() -> None:
    """The oracles' reports list keys of mixed types (``None``, tuples, strings, numbers) in
    ``spark_impl.keys.key_order`` rather than raising on ``<``."""
    keys: list[Any] = [None, ("camp0", 1), "u1", 3, ("camp1", 0)]
    expected = {("B", k): 1 for k in keys}
    states = states_verdict(expected, {("B", k): 2 for k in keys})
    assert not states.held and "5 final state(s)" in states.message
    records = Counter(("B", "S:1", k, 1) for k in keys)
    flow = dataflow([("S", "source"), ("B", "one-to-one")], [("S", "B")])
    twice = exactly_once_verdict(records, records + records, Scenario(flow, {}, {}, (), {}, Timing()))
    assert not twice.held and twice.detail.count("emitted 2 times") == 5
