"""The nemesis without a cluster (fast, default run): bad input, which faults it draws and when,
how a damaged state file is chosen and damaged, and how round results become the verdict."""

from __future__ import annotations

import json
import os
from collections import Counter
from typing import Any

import pytest

from conformance.cluster.nemesis_events import EventLog
from conformance.cluster.nemesis_faults import FAULTS, STATE_FAULTS, FaultPlan, parse_faults
from conformance.cluster.nemesis_inject import committed_state_files, damage_state_file
from conformance.cluster.nemesis_oracles import lost_duplicated
from conformance.cluster.nemesis_report import build_report, exit_code
from spec.errors import InputError
from spark_impl.reconfig.progress import Progress, write_progress
from spark_impl.reconfig.storage import TaskFile, task_path, write_task_file, CorruptStateError, read_task_file
from streamproof.main import main


@pytest.mark.parametrize("argv, where", [
    (["nemesis", "--faults", "executor-kill,meteor"], "meteor"),
    (["nemesis", "--faults", ","], "no fault named"),
    (["nemesis", "--minutes", "0"], "--minutes"),
    (["nemesis", "--cases", "0"], "--cases"),
    (["nemesis", "--jobs", "fries,nope"], "--jobs"),
])
def test_bad_input_is_one_line_exit_2(argv: list[str], where: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert where in err and err.count("\n") == 1
    if "--faults" in argv:  # the one line lists every valid name
        assert all(name in err for name in FAULTS)


def test_parse_faults() -> None:
    assert parse_faults(None) == parse_faults("all") == tuple(FAULTS)
    assert parse_faults(" python-kill , executor-kill") == ("executor-kill", "python-kill")  # catalogue order
    with pytest.raises(InputError):
        parse_faults("executor-kill,kill-everything")


def test_every_selected_kind_comes_first_then_weighted_draws_only_of_applicable_ones() -> None:
    selected = tuple(FAULTS)
    plan = FaultPlan(selected, seed=7)
    always = [name for name in selected if name not in STATE_FAULTS]
    first = [plan.next_fault(always) for _ in always]
    assert sorted(first) == sorted(always)  # one of each applicable kind before any repeat
    assert plan.next_fault(selected) in STATE_FAULTS  # the pending kinds come when applicable
    drawn = Counter(plan.next_fault(always) for _ in range(600))
    assert set(drawn) == set(always)
    assert drawn["executor-kill"] > drawn["driver-kill"]  # weights 3 : 1
    assert plan.next_fault(["state-corrupt"]) in ("state-corrupt", None)
    assert FaultPlan(("python-kill",), 1).next_fault(["executor-kill"]) is None


def test_plans_are_reproducible_from_the_seed() -> None:
    def draws(seed: int) -> list[Any]:
        plan = FaultPlan(tuple(FAULTS), seed)
        return [(plan.next_fault(FAULTS), plan.moment(), round(plan.gap_s(), 6)) for _ in range(40)]

    assert draws(3) == draws(3) and draws(3) != draws(4)
    moments = Counter(m for _, m, _ in draws(5))
    assert set(moments) == {"any", "reconfiguration", "rescale"}


def _fries_checkpoint(tmp_path: Any) -> str:
    """A checkpoint where job 0 committed batch 2 and job 1 batch 3 (batch 4 is pending)."""
    directory = str(tmp_path)
    for g in (1, 2, 3, 4):
        for part in (0, 1):
            write_task_file(task_path(directory, g, 1, part), TaskFile())
    write_progress(directory, [Progress(history=[1, 2]), Progress(history=[1, 2, 3], pending=[4])], 4)
    return directory


@pytest.mark.parametrize("truncate", [True, False])
def test_a_committed_state_file_is_damaged_and_then_refused(tmp_path: Any, truncate: bool) -> None:
    directory = _fries_checkpoint(tmp_path)
    files = committed_state_files(directory)
    assert [os.path.basename(os.path.dirname(f)) for f in files] == ["g0000003", "g0000003"]
    hit = damage_state_file(directory, FaultPlan(("state-corrupt",), 2), truncate)
    assert hit is not None
    path = hit.split(" ")[0]
    with pytest.raises(CorruptStateError) as caught:
        read_task_file(path)
    assert path in str(caught.value)
    assert committed_state_files(str(tmp_path / "nothing")) == []


def test_lost_and_duplicated_are_multiset_differences() -> None:
    assert lost_duplicated("aabc", "abcc") == (1, 1)
    assert lost_duplicated("ab", "abx") == (0, 0)  # x is wrong, not a duplicate: the outputs oracle's
    assert lost_duplicated("aa", "aaaa") == (0, 2)


def test_event_log_tracks_the_phase(tmp_path: Any) -> None:
    path = tmp_path / "events.jsonl"
    log = EventLog(str(path))
    lines = [{"e": "driver", "t": 1, "pid": 5}, {"e": "round", "t": 2, "pid": 5, "round": 0, "job": "fries", "dir": "d"},
             {"e": "batch", "t": 3, "pid": 5, "round": 0, "g": 1, "reconfiguring": True},
             {"e": "beat", "t": 3.5, "pid": 5, "executors": 2, "work": 9}]
    path.write_text("".join(json.dumps(x) + "\n" for x in lines) + '{"e": "ro')  # a half-written line
    log.poll()
    assert log.phase() == "reconfiguring" and log.last_beat(5) is not None and log.last_beat(6) is None
    with open(path, "a", encoding="utf-8") as handle:
        handle.write('und", "t": 4, "pid": 5, "round": 1, "job": "oplus", "dir": "e"}\n'
                     '{"e": "rescale", "t": 5, "pid": 5, "round": 1, "phase": "start"}\n')
    log.poll()
    assert log.phase() == "rescaling"
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps({"e": "result", "t": 6, "pid": 5, "round": 1, "job": "oplus", "runs": []}) + "\n")
    log.poll()
    assert log.phase() == "between rounds" and log.next_round == 2 and log.result_of(1, 5.5) is not None


def _run(failures: list[str] | None = None, lost: int = 0, dup: int = 0, ser: bool | None = True) -> dict[str, Any]:
    return {"failures": failures or [], "lost": lost, "duplicated": dup, "serializable": ser}


def test_report_contract_and_exit_code() -> None:
    damaged = "/c/round-0/batches/g0000003/L1-p0.pkl"
    refusal = f"Py4JJavaError: ... CorruptStateError: corrupt checkpoint state file {damaged}: truncated; refusing"
    results = [
        {"round": 0, "job": "fries", "runs": [], "error": refusal},
        {"round": 1, "job": "oplus", "runs": [_run(ser=None), _run(ser=None)], "error": None},
        {"round": 2, "job": "dgs", "runs": [_run(ser=None)], "error": None},
        {"round": 3, "job": "fries", "runs": [_run(), _run()], "error": None},
    ]
    injections = [
        {"fault": "state-truncate", "round": 0, "path": damaged, "counted": True, "phase": "fries", "recovery_ms": 900},
        {"fault": "executor-kill", "round": 1, "counted": True, "phase": "rescaling", "recovery_ms": 20000},
        {"fault": "python-kill", "round": 3, "counted": True, "phase": "reconfiguring", "recovery_ms": 3000},
        {"fault": "python-kill", "round": 3, "counted": False, "phase": "fries", "recovery_ms": None},
    ]
    report = build_report(results, injections, [])
    for key in ("runs", "faults", "lost", "duplicated", "serializable", "violations", "recovery_ms"):
        assert key in report
    assert set(report["recovery_ms"]) == {"p50", "max"}
    assert report["runs"] == 5 and report["refused"] == 1 and report["violations"] == []
    assert report["faults"] == {"python-kill": 1, "executor-kill": 1, "state-truncate": 1}
    assert report["recovery_ms"] == {"p50": 3000, "max": 20000}
    assert report["serializable"] is True and exit_code(report) == 0
    json.dumps(report)

    # a refusal naming another file, a damaged round that did not refuse, a lost output, a
    # non-serializable run and an orchestrator problem each make the run fail
    other = refusal.replace("L1-p0", "L1-p1")
    assert exit_code(build_report([{**results[0], "error": other}], injections[:1], [])) == 1
    unrefused = build_report([{**results[3], "round": 0}], injections[:1], [])
    assert any("without refusing" in v for v in unrefused["violations"]) and exit_code(unrefused) == 1
    assert exit_code(build_report([{**results[2], "runs": [_run(lost=1)]}], [], [])) == 1
    bad = build_report([{**results[3], "runs": [_run(["serializable: cycle"], ser=False)]}], [], [])
    assert bad["serializable"] is False and exit_code(bad) == 1
    assert exit_code(build_report(results[1:2], [], ["no recovery within 300 s"])) == 1
    crashed = build_report([{"round": 0, "job": "fries", "runs": [], "error": "Py4JJavaError: lost"}], [], [])
    assert crashed["serializable"] is False and exit_code(crashed) == 1
    assert exit_code(build_report([], [], [])) == 1  # nothing judged is no evidence
