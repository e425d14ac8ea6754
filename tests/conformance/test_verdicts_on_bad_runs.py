"""Every oracle on hand-built bad runs, in the style of Elle: each broken run fails with a
:class:`~conformance.core.verdict.Verdict` that names the definition it breaks and carries its
witness as data, and the unbroken run passes every oracle.

The promises checked: ``conformance/core/verdict.py`` (one verdict type; its oracle named after
the definition it checks; a one-line message; a JSON witness) and the oracle tables of
docs/conformance.md ("Fries: cases and oracles": ``serializable`` (C1), ``fifo`` (C2),
``outputs`` (C3), ``exactly-once``; "Why these cases and oracles", *Emission rounds*: ``round``
and ``instance``; the DGS oracles ``engine``, ``outputs``, ``processed``, ``state``). The runs are
made by hand and judged by the suites' own oracle functions: no engine, no Spark.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import replace
from typing import Any

import pytest

from spec.fries.scenario import Scenario, scenario_from_json
from spec.fries.schedule import Operation, Schedule
from spec.oplus.emission import emission_rounds, parallelism_in_round
from spec.oplus.scenario import instance_of, parse_scenario

from conformance.core.crashes import Crash
from conformance.core.verdict import OracleName, Verdict, failed
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.engines.reference import reference_engine
from conformance.dgs.oracles import verdicts as dgs_verdicts
from conformance.fries.oracles import verdicts as fries_verdicts
from conformance.fries.outcome import RunOutcome

from support.fries_serial_run import serial_run
from conformance.oplus.oracles import problem_text, sequential, spark_verdicts


def _only_failure(verdicts: tuple[Verdict, ...]) -> Verdict:
    """The one failed verdict of a run broken in one way; its JSON form must be JSON."""
    failures = failed(verdicts)
    assert len(failures) == 1, [v.to_json() for v in failures]
    json.dumps(failures[0].to_json())
    assert "\n" not in failures[0].message
    return failures[0]


def _passes(verdicts: tuple[Verdict, ...]) -> None:
    assert verdicts and all(v.held for v in verdicts), [v.to_json() for v in failed(verdicts)]


# --- Fries ----------------------------------------------------------------------------------

def _pipeline(requests: int = 1, *, restarts: tuple[int, ...] = ()) -> Scenario:
    """S -> A -> B (B the sink): R1 reconfigures A and B at once."""
    raw: dict[str, Any] = {
        "dataflow": {"operators": [{"name": "S", "kind": "source"}, {"name": "A", "kind": "one-to-one"},
                                   {"name": "B", "kind": "one-to-one"}], "edges": [["S", "A"], ["A", "B"]]},
        "functions": {"A": {"op": "map", "mul": 1, "add": 0}, "B": {"op": "map", "mul": 1, "add": 1}},
        "sources": {"S": [{"key": 1, "value": 2}, {"key": 1, "value": 3}, {"key": 1, "value": 4}]},
        "reconfigurations": [{"at": 1, "updates": {"A": {"function": {"op": "map", "mul": 10, "add": 0}},
                                                   "B": {"function": {"op": "map", "mul": 1, "add": 5}}}}][:requests],
        "timing": {"restarts": list(restarts)},
    }
    return scenario_from_json(raw)


def test_a_serial_fries_run_passes_every_oracle() -> None:
    scenario = _pipeline()
    verdicts = fries_verdicts(scenario, serial_run(scenario, ["S:0", "R1", "S:1", "S:2"]))
    _passes(verdicts)
    assert [v.oracle for v in verdicts] == [
        OracleName.ENGINE, OracleName.SCHEDULE, OracleName.PLACEMENT, OracleName.SERIALIZABLE,
        OracleName.CHANNEL_FIFO, OracleName.OUTPUTS, OracleName.EXACTLY_ONCE, OracleName.STATES]


def test_a_duplicated_output_fails_exactly_once() -> None:
    scenario = _pipeline(requests=0, restarts=(1,))
    run = serial_run(scenario, ["S:0", "S:1", "S:2"])
    # the sink appended the batch of S:1 again after the restart; the multiset of outputs also
    # differs, so outputs fails as well: exactly-once is the one that names the duplicate
    twice = replace(run, outputs=run.outputs + run.outputs[1:2])
    found = failed(fries_verdicts(scenario, twice))
    assert [v.oracle for v in found] == [OracleName.OUTPUTS, OracleName.EXACTLY_ONCE]
    duplicate = found[1]
    assert duplicate.name == "exactly-once" and "duplicated" in duplicate.message
    assert isinstance(duplicate.witness, dict) and duplicate.witness["restarts"] == [1]
    assert duplicate.witness["duplicated"] == [["B <- (key 1, value 4) of S:1", 2, 1]]
    assert duplicate.witness["lost"] == []


def test_a_reordered_channel_fails_channel_fifo() -> None:
    scenario = _pipeline(requests=0)
    run = serial_run(scenario, ["S:0", "S:1", "S:2"])
    logs = dict(run.schedule.logs)
    # A sent S:0 then S:1 to B over one channel; B processed them the other way round. The
    # maps are per tuple, so outputs and states cannot see it: only (C2)
    logs["B"] = (Operation("S:1"), Operation("S:0"), Operation("S:2"))
    verdict = _only_failure(fries_verdicts(scenario, replace(run, schedule=Schedule(logs))))
    assert verdict.oracle is OracleName.CHANNEL_FIFO and verdict.name == "fifo"
    assert verdict.oracle.definition.startswith("(C2)")
    assert isinstance(verdict.witness, dict) and verdict.witness["violations"]
    assert "S:0" in verdict.message and "S:1" in verdict.message


def test_a_wrong_value_fails_outputs() -> None:
    scenario = _pipeline()
    run = serial_run(scenario, ["S:0", "R1", "S:1", "S:2"])
    outputs = list(run.outputs)
    sink, txn, key, value = outputs[0]
    outputs[0] = (sink, txn, key, value + 1)
    verdict = _only_failure(fries_verdicts(scenario, replace(run, outputs=tuple(outputs))))
    assert verdict.oracle is OracleName.OUTPUTS and verdict.oracle.definition.startswith("(C3)")
    assert isinstance(verdict.witness, dict)
    assert verdict.witness["witness_order"] == ["S:0", "R1", "S:1", "S:2"]
    mismatch = verdict.witness["mismatch"]
    assert isinstance(mismatch, dict)
    assert mismatch["missing"] == [[f"{sink} <- (key {key}, value {value}) of {txn}", 1]]
    assert mismatch["unexpected"] == [[f"{sink} <- (key {key}, value {value + 1}) of {txn}", 1]]


def test_a_non_serializable_schedule_fails_conflict_serializability() -> None:
    scenario = _pipeline()
    run = serial_run(scenario, ["S:0", "R1", "S:1", "S:2"])
    logs = dict(run.schedule.logs)
    # S:1 met A before R1 updated it, but B after: no serial order has both
    logs["A"] = (Operation("S:0"), Operation("S:1"), Operation("R1", True), Operation("S:2"))
    verdicts = fries_verdicts(scenario, replace(run, schedule=Schedule(logs)))
    verdict = _only_failure(verdicts)
    assert verdict.oracle is OracleName.SERIALIZABLE and verdict.oracle.definition.startswith("(C1)")
    assert isinstance(verdict.witness, dict) and {"S:1", "R1"} <= set(verdict.witness["cycle"] or [])
    assert verdicts[-1] is verdict  # nothing is judged against a serial order that does not exist


def test_an_engine_failure_is_the_only_fries_verdict() -> None:
    verdict = _only_failure(fries_verdicts(_pipeline(), RunOutcome.failed("ValueError: boom")))
    assert verdict.oracle is OracleName.ENGINE and verdict.witness == {"error": "ValueError: boom"}


# --- O+ -------------------------------------------------------------------------------------

def _sum_case() -> tuple[dict[str, Any], int]:
    """A keyed sliding sum rescaled from 2 to 3 instances, one item per round."""
    return ({"operator": "sliding-sum", "WA": 5, "WS": 5, "WT": "multi", "parallelism": 2,
             "inputs": [[{"ts": 1, "key": "a", "value": 1}, {"ts": 5, "key": "b", "value": 2},
                         {"ts": 9, "key": "c", "value": 4}, {"ts": 14, "key": "a", "value": 1}]],
             "reconfigurations": [{"watermark": 5, "parallelism": 3}]}, 1)


def _oplus_run(case: dict[str, Any], per_round: int) -> tuple[list[Any], list[tuple[int, int]], int]:
    """A correct run: every row in its due round, from the instance owning its key then."""
    scenario = parse_scenario(case)
    due = emission_rounds(scenario, per_round, sequential)
    rows = [row for row, _ in due.elements()]
    emitted = [(r, instance_of(row[1], parallelism_in_round(scenario, per_round, r))) for row, r in due.elements()]
    return rows, emitted, 1


def test_a_correct_oplus_run_passes_every_oracle() -> None:
    case = _sum_case()
    verdicts = spark_verdicts(case, _oplus_run(*case))
    _passes(verdicts)
    assert [v.oracle for v in verdicts] == [OracleName.ENGINE, OracleName.OUTPUTS, OracleName.EMISSION_ROUND,
                                            OracleName.EMITTING_INSTANCE]


def test_a_late_emission_round_fails_emission_round() -> None:
    case = _sum_case()
    rows, emitted, applied = _oplus_run(*case)
    late = [(r + 1, i) if row[0] == 5 else (r, i) for row, (r, i) in zip(rows, emitted)]
    verdict = _only_failure(spark_verdicts(case, (rows, late, applied)))
    assert verdict.oracle is OracleName.EMISSION_ROUND and verdict.name == "round"
    assert isinstance(verdict.witness, dict)
    assert (verdict.witness["emitted_in"], verdict.witness["due_in"]) == (2, 1)
    assert verdict.witness["row"] == [5, "a", "1"]
    assert (problem_text(verdict) or "").startswith("[round] spark emitted (ts 5")


def test_a_row_from_the_wrong_instance_fails_emitting_instance() -> None:
    case = _sum_case()
    rows, emitted, applied = _oplus_run(*case)
    moved = [(r, (i + 1) % 3) if row[0] == 10 else (r, i) for row, (r, i) in zip(rows, emitted)]
    verdict = _only_failure(spark_verdicts(case, (rows, moved, applied)))
    assert verdict.oracle is OracleName.EMITTING_INSTANCE and verdict.name == "instance"
    assert isinstance(verdict.witness, dict) and verdict.witness["parallelism"] == 3


def test_a_wrong_oplus_value_fails_outputs_before_any_timing_oracle() -> None:
    case = _sum_case()
    rows, emitted, applied = _oplus_run(*case)
    ts, key, value = rows[0]
    wrong = [(ts, key, str(int(value) + 1))] + rows[1:]
    verdicts = spark_verdicts(case, (wrong, emitted, applied))
    verdict = _only_failure(verdicts)
    assert verdict.oracle is OracleName.OUTPUTS and verdicts[-1] is verdict
    assert isinstance(verdict.witness, dict) and verdict.witness["unexpected"]


def test_an_oplus_crash_fails_engine() -> None:
    verdict = _only_failure(spark_verdicts(_sum_case(), Crash("RuntimeError: lost executor")))
    assert verdict.oracle is OracleName.ENGINE
    assert verdict.witness == {"error": "RuntimeError: lost executor", "alone": True}


# --- DGS ------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dgs_run() -> tuple[Any, Any]:
    """A DGS case whose root processes events, and the reference plan executor's run of it."""
    cases = draw_dgs_cases(12, 0)
    runs = reference_engine()(cases)
    return next((c, r) for c, r in zip(cases, runs)
                if not isinstance(r, Crash) and any(w == c.plan.root.id for w, _, _ in r[2]))


def test_the_reference_dgs_run_passes_every_oracle(dgs_run: tuple[Any, Any]) -> None:
    verdicts = dgs_verdicts(*dgs_run)
    _passes(verdicts)
    assert [v.oracle for v in verdicts] == [OracleName.ENGINE, OracleName.OUTPUTS, OracleName.PROCESSED,
                                            OracleName.JOINED_STATE]


def test_an_event_processed_twice_fails_processed(dgs_run: tuple[Any, Any]) -> None:
    case, (outputs, state, processed) = dgs_run
    verdict = _only_failure(dgs_verdicts(case, (outputs, state, processed + processed[:1])))
    assert verdict.oracle is OracleName.PROCESSED and "twice" in verdict.message


def test_a_wrong_joined_state_fails_state(dgs_run: tuple[Any, Any]) -> None:
    case, (outputs, _, processed) = dgs_run
    verdict = _only_failure(dgs_verdicts(case, (outputs, {"no": "such state"}, processed)))
    assert verdict.oracle is OracleName.JOINED_STATE and verdict.name == "state"


# --- the verdict itself ---------------------------------------------------------------------

def test_a_verdict_message_is_one_line_and_its_witness_json_data() -> None:
    with pytest.raises(ValueError):
        Verdict(OracleName.OUTPUTS, False, "two\nlines")
    verdict = Verdict(OracleName.STATES, False, "1 final state differs",
                      {("B", 1): Counter({"x": 1}), "keys": {3, 1, 2}, "pair": (None, float("nan"))})
    assert verdict.witness == {"('B', 1)": {"x": 1}, "keys": [1, 2, 3], "pair": [None, "nan"]}
    assert json.loads(json.dumps(verdict.to_json()))["oracle"] == "states"


def test_every_oracle_name_has_its_definition_and_keeps_its_short_name() -> None:
    assert {o.value for o in OracleName} >= {"engine", "schedule", "placement", "serializable", "fifo", "outputs",
                                             "exactly-once", "states", "processed", "state", "round", "instance",
                                             "late", "user-code"}
    assert all(o.definition for o in OracleName)
