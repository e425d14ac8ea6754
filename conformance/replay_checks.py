"""What a replay file must hold before it is replayed (``--replay FILE``; docs/conformance.md).

A saved case is input like any other: a damaged or hand-edited file must be *bad input* (exit 2,
one line naming the file and the field), never a crash (exit 3) and never a replay that
"still fails" because the engine refused invalid data (exit 1). :func:`check_record` checks the
record's fields and the suite's case data with the same validation the suites' inputs get:

* every suite: ``faults`` a list of names, ``seed`` an integer, ``scheduler`` and ``engine``
  strings;
* ``fries``: the scenario (:func:`spec.fries.scenario.scenario_from_json`, with its size
  bounds), an engine of :data:`conformance.fries.engines.catalogue.ENGINES`, a scheduler
  ``NAME[:PATH]`` with NAME one of the reference's schedulers and PATH an executor path;
* ``dgs``: the case (:func:`conformance.dgs.cases.case_from_json`), its input a valid instance
  (:func:`spec.dgs.streams.check_valid_input`), its plan P-valid for the program
  (:func:`reference.dgs.validity.check_plan`), every stream its plan names in the input, every event one of the
  program's (its tag one of the program's tags);
* ``oplus``: the scenario (:func:`spec.oplus.scenario.parse_scenario`: windows, sorted inputs,
  known fields), ``items_per_round`` a positive integer, a known mode;
* ``userjob``: ``case_data.job`` a string (the job itself is loaded and validated when replayed).
"""

from __future__ import annotations

from typing import Any

from spec.errors import InputError, cut
from spec.dgs.program import Program
from spec.dgs.streams import StreamEvent, check_valid_input
from spec.fries.scenario import scenario_from_json
from spec.jsonio import expect_int, expect_list, expect_object, expect_str
from spec.oplus.scenario import parse_scenario

from reference.dgs.validity import check_plan
from reference.fries.schedulers import SCHEDULERS

from conformance.dgs.cases import case_from_json, program_of
from conformance.fries.engines.catalogue import ENGINES
from conformance.fries.engines.live import MODES as LIVE_MODES
from conformance.fries.engines.paths import PATHS

DGS_ENGINES = ("reference", "spark", "spark-streaming", "driver-plan")
OPLUS_MODES = ("sn", "vsn", "spark", "spark-streaming", "spark-streaming-disorder")
USER_OPERATOR = "user-operator"
"""The scheduler prefix of a saved case of a user's O+ operator (:mod:`conformance.oplus.user_suite`)."""
USER_OPERATOR_MODES = ("sequential", "sn", "vsn", "spark-streaming")


def check_record(record: dict[str, Any], where: str) -> None:
    """InputError (located at ``where``, the file) unless the record can be replayed (module
    docstring)."""
    try:
        _check(record)
    except InputError as error:
        raise error.located(where) from None


def _check(record: dict[str, Any]) -> None:
    for i, fault in enumerate(expect_list(record.get("faults", []), "faults")):
        expect_str(fault, f"faults[{i}]")
    if "seed" in record:
        expect_int(record["seed"], "seed")
    scheduler = expect_str(record.get("scheduler", ""), "scheduler")
    engine = expect_str(record.get("engine"), "engine")
    data = record["case_data"]
    suite = record["suite"]
    if suite == "fries":
        _one_of(engine, ENGINES, "engine")
        name, _, path = (scheduler or "fries").partition(":")
        _one_of(name, SCHEDULERS, "scheduler")
        if path:
            _one_of(path, PATHS + LIVE_MODES, "scheduler")
        scenario_from_json(data, "case_data")
    elif suite == "dgs":
        _one_of(engine, DGS_ENGINES, "engine")
        case = case_from_json(data, "case_data")
        program = program_of(case.name)
        check_valid_input(case.streams, "case_data.input")
        named = {stream for worker in case.plan.workers() for _, stream in worker.impl_tags}
        if named - set(case.streams):
            raise InputError(f"the plan names stream(s) {sorted(named - set(case.streams))} the input lacks",
                             "case_data.plan")
        for stream, items in case.streams.items():
            for i, item in enumerate(items):
                if isinstance(item, StreamEvent) and not _is_event(program, item.payload):
                    raise InputError(f"event {cut(repr(item.payload))} is not one of {program.name}'s events",
                                     f"case_data.input.streams.{stream}[{i}]")
        try:
            check_plan(program, case.plan)
        except InputError as error:
            raise error.located("case_data.plan") from None
    elif suite == "oplus" and scheduler.startswith(USER_OPERATOR + ":"):
        _one_of(scheduler.partition(":")[2], USER_OPERATOR_MODES, "scheduler")
        obj = expect_object(data, "case_data")
        for name in ("operator", "fields"):
            expect_str(obj.get(name), f"case_data.{name}")
        expect_object(obj.get("case"), "case_data.case")
    elif suite == "oplus":
        _one_of(scheduler or "vsn", OPLUS_MODES, "scheduler")
        obj = expect_object(data, "case_data")
        if "allowed_lateness" in obj and expect_int(obj["allowed_lateness"], "case_data.allowed_lateness") < 0:
            raise InputError(f"must be >= 0, got {obj['allowed_lateness']}", "case_data.allowed_lateness")
        if "scenario" in obj:
            per_round = expect_int(obj.get("items_per_round", 2), "case_data.items_per_round")
            if per_round < 1:
                raise InputError(f"must be >= 1, got {per_round}", "case_data.items_per_round")
            parse_scenario(obj["scenario"], "case_data.scenario")
        else:
            parse_scenario(obj, "case_data")
    elif suite == "userjob":
        expect_str(expect_object(data, "case_data").get("job"), "case_data.job")


def _is_event(program: Program, event: Any) -> bool:
    try:
        return program.tag_fn(event) in program.tags
    except Exception:  # noqa: BLE001 - a shipped program's tag function on a foreign value: not its event
        return False


def _one_of(value: str, known: tuple[str, ...], where: str) -> None:
    if value not in known:
        raise InputError(f"unknown {where} {value!r} (expected one of {list(known)})", where)
