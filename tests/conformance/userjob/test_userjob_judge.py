"""The user-job oracles, loader, cases and robustness without Spark (fast, default run).

Runs are made by the reference itself (a serial run is a correct run) and then broken the way
an engine bug breaks them: every oracle must accept the correct run and name the broken one.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conformance.userjob.cases import candidates, case_from_json, case_job, case_strategy, case_to_json
from conformance.userjob.engine import UserJobEngine
from conformance.userjob.judge import UserRun, judge_run
from conformance.userjob.load import load_job
from reference.fries.userjob import request_order, serial_run
from spec.errors import InputError
from spec.fries.schedule import Schedule
from spark_impl.keys import route
from support.paths import ROOT
from conformance.userjob.suite import check_faults
from streamproof.main import main

FRAUD = f"{ROOT / 'examples' / 'fraud_job.py'}:job"


def _correct_run(job: Any) -> UserRun:
    serial = serial_run(job, request_order(job), route)
    return UserRun(serial.outputs, serial.schedule, serial.states, (), serial.senders)


def _fraud_case(n: int = 10, at: int = 4) -> tuple[Any, Any]:
    under = load_job(FRAUD)
    case = case_from_json(under, {"tuples": list(range(n)), "requests": [[0, at]], "batch_size": 2})
    return under, case_job(under, case)


def test_a_correct_run_passes_every_oracle() -> None:
    under, job = _fraud_case()
    judgement = judge_run(job, _correct_run(job), under.classify)
    assert judgement.ok, judgement.failures


def test_a_doubled_transformation_fails_states() -> None:
    under, job = _fraud_case()
    run = _correct_run(job)
    transform = job.planned[0].request.updates["FD2"].transform
    states = dict(run.states or {})
    fd2 = [k for k in states if k[0] == "FD2"]
    assert fd2
    states[fd2[0]] = transform(states[fd2[0]])
    judgement = judge_run(job, replace(run, states=states), under.classify)
    assert "states" in judgement.failed_oracles


def test_lost_and_duplicated_outputs_fail_exactly_once() -> None:
    under, job = _fraud_case()
    run = _correct_run(job)
    lost = judge_run(job, replace(run, outputs=run.outputs[1:]), under.classify)
    assert {"outputs", "exactly-once"} <= set(lost.failed_oracles)
    twice = judge_run(job, replace(run, outputs=[*run.outputs, run.outputs[0]]), under.classify)
    assert "exactly-once" in twice.failed_oracles


def test_per_key_output_order_is_judged_with_the_declared_dependence() -> None:
    under, job = _fraud_case(n=24)
    run = _correct_run(job)
    outputs = list(run.outputs)
    key = outputs[0][2]
    same = [i for i, r in enumerate(outputs) if r[2] == key]
    assert len(same) >= 2
    outputs[same[0]], outputs[same[1]] = outputs[same[1]], outputs[same[0]]
    swapped = replace(run, outputs=outputs)
    assert "outputs" in judge_run(job, swapped, under.classify).failed_oracles
    assert judge_run(job, swapped, None).ok  # dependence "none": a multiset


def test_an_update_out_of_place_is_not_serializable() -> None:
    under, job = _fraud_case()
    run = _correct_run(job)
    logs = {obj: list(log) for obj, log in run.schedule.logs.items()}
    senders = {obj: list(s) for obj, s in (run.senders or {}).items()}
    # one FD2 object switches at the very start, the other one in place: a transaction
    # sees the new FD2 at the first and the old Combiner
    obj = next(o for o, log in logs.items() if o.startswith("FD2") and log[0].txn != "R1"
               and any(op.update for op in log))
    at = next(i for i, op in enumerate(logs[obj]) if op.update)
    logs[obj].insert(0, logs[obj].pop(at))
    senders[obj].insert(0, senders[obj].pop(at))
    broken = replace(run, schedule=Schedule({o: tuple(v) for o, v in logs.items()}),
                     senders={o: tuple(v) for o, v in senders.items()})
    assert "serializable" in judge_run(job, broken, under.classify).failed_oracles


def test_a_missing_update_fails_schedule() -> None:
    under, job = _fraud_case()
    run = _correct_run(job)
    logs = {obj: tuple(op for op in log if not (op.update and obj.startswith("Combiner")))
            for obj, log in run.schedule.logs.items()}
    judgement = judge_run(job, replace(run, schedule=Schedule(logs)), under.classify)
    assert "schedule" in judgement.failed_oracles


def test_spark_errors_naming_user_code_are_the_users() -> None:
    under, job = _fraud_case()
    text = "Py4JJavaError: ... conformance.userjob.guard.UserCodeError: FD1.process(...) raised KeyError: 'x'\n at"
    judgement = judge_run(job, UserRun(error=text), under.classify)
    assert judgement.failed_oracles == ("user-code",)
    assert "KeyError" in judgement.failures[0].detail
    other = judge_run(job, UserRun(error="the engine crashed: OSError"), under.classify)
    assert other.failed_oracles == ("engine",)


@settings(max_examples=30)
@given(st.data())
def test_drawn_cases_and_their_shrink_candidates_are_valid(data: Any) -> None:
    under = load_job(FRAUD)
    value = data.draw(case_strategy(under, race=data.draw(st.booleans())))
    case = case_from_json(under, value)
    assert case_to_json(case_from_json(under, case_to_json(case))) == case_to_json(case)
    job = case_job(under, case)
    assert sorted(t[1] for t in (job.source.get(i) for i in range(job.source.count()))) == \
        sorted(f"payments:{i}" for i in case.tuples)
    for candidate in list(candidates(under, value))[:40]:
        case_from_json(under, candidate)


def _write(tmp: Path, body: str) -> str:
    path = tmp / "userjob.py"
    path.write_text(body)
    return str(path)


JOB_HEADER = '''
from spark_impl.reconfig import ListSource, Request, UserOperator, user_job, user_update
from spark_impl.workloads.fraud import fraud_flow
from spec.fries.dataflow import dataflow

FLOW = dataflow([("S", "source"), ("A", "one-to-one")], [("S", "A")])
SOURCE = ListSource(tuple(("S", f"S:{i}", f"k{i % 3}", i) for i in range(12)))

def ok(state, key, value):
    return (state or 0) + value, [(key, value)]
'''


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    """``streamproof conformance ARGS`` in a separate process (the real entry point)."""
    return subprocess.run([sys.executable, "-m", "streamproof.main", "conformance", *args],
                          capture_output=True, text=True, timeout=120, cwd=ROOT)


def _main(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The same in this process (fast): exit code, stdout, stderr."""
    code = main(["conformance", *args])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize("body, ref, message", [
    ("x = 1\n", "NOPE", "expected FILE.py:NAME"),
    ("raise RuntimeError('boom at import')\n", "job", "importing"),
    ("print('hello'); job = 3\n", "job", "must return (job, requests)"),
    (JOB_HEADER + "def job():\n    return user_job(FLOW, {'A': UserOperator(FLOW.kind('A'), ok)}, SOURCE), []\n",
     "job", "non-empty list"),
    (JOB_HEADER + "def job():\n    raise ValueError('no job today')\n", "job", "no job today"),
    ("x = 1\n", "missing", "defines no 'missing'"),
])
def test_a_job_file_that_cannot_be_loaded_is_bad_input(tmp_path: Path, capsys: pytest.CaptureFixture[str], body: str,
                                                       ref: str, message: str) -> None:
    path = _write(tmp_path, body)
    code, out, err = _main(capsys, "--job", path if ref == "NOPE" else f"{path}:{ref}", "--cases", "1")
    assert code == 2, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1 and message in lines[0], err
    assert "Traceback" not in err and out == ""


def test_bad_input_through_the_installed_entry_point(tmp_path: Path) -> None:
    done = _cli("--job", _write(tmp_path, "raise SystemExit(3)\n") + ":job", "--cases", "1")
    assert done.returncode == 2 and done.stdout == ""
    assert "importing" in done.stderr and "SystemExit" in done.stderr and len(done.stderr.splitlines()) == 1


def test_a_user_exception_and_a_hang_are_the_users_with_the_case(tmp_path: Path) -> None:
    """Found by the reference run (no Spark needed): oracle user-code, naming the call."""
    path = _write(tmp_path, JOB_HEADER + '''
import time

def bad(state, key, value):
    print("processing", key)
    if value == 7:
        raise ZeroDivisionError("seven")
    return state, [(key, value)]

def slow(state, key, value):
    while value == 5:
        time.sleep(0.05)
    return state, [(key, value)]

def raising():
    job = user_job(FLOW, {"A": UserOperator(FLOW.kind("A"), bad)}, SOURCE)
    return job, [Request({"A": user_update(FLOW, "A", ok, lambda s: s)})]

def hanging():
    job = user_job(FLOW, {"A": UserOperator(FLOW.kind("A"), slow)}, SOURCE)
    return job, [Request({"A": user_update(FLOW, "A", ok, lambda s: s)})]
''')
    for name, expected in (("raising", "raised ZeroDivisionError: seven"), ("hanging", "did not return within")):
        under = load_job(f"{path}:{name}")
        engine = UserJobEngine(under, call_limit_s=1.0)
        case = case_from_json(under, {"tuples": list(range(12)), "requests": [[0, 10]], "batch_size": 4})
        (run,) = engine.run([case])
        judgement = judge_run(run.job or under.job, run.run, under.classify)
        assert judgement.failed_oracles == ("user-code",), judgement.failures
        assert expected in judgement.failures[0].detail and "A.process(" in judgement.failures[0].detail
        if name == "raising":
            assert "processing k" in run.printed  # captured, not on our stdout


def test_fault_names_are_checked(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = _main(capsys, "--job", FRAUD, "--inject-fault", "window-off-by-one", "--cases", "1")
    assert code == 2 and "unknown fault" in err
    with pytest.raises(InputError):
        check_faults(frozenset({"nope"}))


def test_the_cli_documents_the_job_flag(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        _main(capsys, "--help")
    assert "--job FILE.py:NAME" in capsys.readouterr().out
