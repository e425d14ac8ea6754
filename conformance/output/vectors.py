"""Language-neutral test vectors: scenario + expected outputs from the reference (docs/vectors.md).

``export(directory, ...)`` writes ``index.json`` and one JSON file per vector under
``fries/`` and ``oplus/``; ``check(directory, engine)`` replays every vector on an engine and
says which match. Formats (``streamproof-vector/1``):

* **fries**: ``{"format", "suite": "fries", "name", "scenario": {...}, "expected": {"order":
  [...], "outputs": [[sink, txn, key, value], ...], "states": [[operator, key, state], ...]},
  "reference_run": {"scheduler": "fries", "witness": [...], "outputs": [...], "schedule":
  {...}, "senders": {...}}}``. A Fries run is correct when it is equivalent to *some* serial
  order (and, with the order-sensitive functions ``fold`` / ``digest``, processes every channel
  in send order: :mod:`spec.fries.consistency`), so one list of outputs cannot be the whole
  truth: ``expected`` is the serial execution in request order (what an engine that quiesces at
  every request and keeps its channels FIFO must output exactly), ``reference_run`` is the
  reference simulator's run (a correct schedule, the sender of each data operation, its witness
  and outputs). An engine that reports its schedule conforms when the Fries oracles hold on its
  own schedule (:mod:`conformance.fries.oracles`; the rule is spelled out in docs/vectors.md).
* **oplus**: ``{"format", "suite": "oplus", "name", "scenario": {...}, "expected": [{"ts",
  "key", "value"}, ...]}``, the sequential reference's rows sorted by (ts, key): any correct
  engine outputs exactly this multiset.
"""

from __future__ import annotations

import importlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from spec.errors import InputError
from spec.fries.scenario import scenario_from_json, serial_execution
from spec.jsonio import expect_list, expect_object, load_json, write_json_atomic
from spec.oplus.scenario import parse_scenario, sort_output

from reference.oplus.run import run_scenario

from conformance.core.cases import draw_cases
from conformance.core.crashes import Crash
from conformance.core.matcher import compare
from conformance.fries.cases.codec import scenario_to_json
from conformance.fries.cases.sections import honest_claims, scenario_strategy
from conformance.fries.engines.catalogue import engine_status, make_engine
from conformance.fries.oracles import judge
from conformance.oplus.cases import oplus_scenarios
from conformance.oplus.engines.batch import spark_engine, spark_status
from conformance.testing.helper import request_order

FORMAT = "streamproof-vector/1"


@dataclass
class CheckReport:
    """The outcome of checking a vector directory on one engine."""

    engine: str
    matched: list[str] = field(default_factory=list)
    mismatched: list[tuple[str, str]] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """``{"engine", "matched", "mismatched": [{"name", "why"}], "skipped": [...]}``."""
        return {"engine": self.engine, "checked": len(self.matched) + len(self.mismatched),
                "matched": len(self.matched),
                "mismatched": [{"name": n, "why": w} for n, w in self.mismatched],
                "skipped": [{"name": n, "why": w} for n, w in self.skipped]}


def export(directory: str | Path, *, fries_cases: int, oplus_cases: int, seed: int) -> list[str]:
    """Write vectors into ``directory``; return their relative paths (also in index.json)."""
    root = Path(directory)
    written: list[str] = []
    strategy = scenario_strategy()
    if isinstance(strategy, str):
        raise InputError(strategy, "vectors export")
    simulate = importlib.import_module("reference.fries.simulator").simulate
    checker = importlib.import_module("reference.fries.serializability").check_serializability
    for i, scenario in enumerate(draw_cases(strategy, fries_cases, seed)):
        scenario = honest_claims(scenario)
        order = request_order(scenario)
        expected = serial_execution(scenario, order)
        try:
            run = simulate(scenario, "fries")
            verdict = checker(run.schedule)
            reference_run: dict[str, Any] = {
                "scheduler": "fries", "witness": list(verdict.serial_order or []),
                "outputs": [list(r) for r in sorted(run.outputs.elements())], "schedule": run.schedule.to_json(),
                "senders": {obj: list(log) for obj, log in (run.senders or {}).items()}}
        except Exception as error:  # noqa: BLE001 - a simulator failure is recorded, not hidden
            reference_run = {"scheduler": "fries", "error": f"{type(error).__name__}: {error}"}
        name = f"fries/{i:04d}.json"
        write_json_atomic(root / name, {
            "format": FORMAT, "suite": "fries", "name": f"fries-{i:04d}", "scenario": scenario_to_json(scenario),
            "expected": {"order": order, "outputs": [list(r) for r in sorted(expected.outputs.elements())],
                         "states": [[op, key, v] for (op, key), v in sorted(expected.states.items())]},
            "reference_run": reference_run,
        }, indent=None)
        written.append(name)

    for i, case in enumerate(draw_cases(oplus_scenarios(), oplus_cases, seed)):
        name = f"oplus/{i:04d}.json"
        write_json_atomic(root / name, {
            "format": FORMAT, "suite": "oplus", "name": f"oplus-{i:04d}", "scenario": case,
            "expected": run_scenario(parse_scenario(case), "sequential")}, indent=None)
        written.append(name)
    write_json_atomic(root / "index.json", {"format": FORMAT, "seed": seed, "vectors": written})
    return written


def check(directory: str | Path, engine: str) -> CheckReport:
    """Replay every vector of ``directory`` on ``engine`` (``spark`` or ``reference``)."""
    root = Path(directory)
    index = expect_object(load_json(root / "index.json"), str(root / "index.json"))
    names = [str(n) for n in expect_list(index.get("vectors"), f"{root / 'index.json'}: vectors")]
    report = CheckReport(engine)
    fries: list[tuple[str, dict[str, Any]]] = []
    oplus: list[tuple[str, dict[str, Any]]] = []
    for name in names:
        vector = expect_object(load_json(root / name), str(root / name))
        if vector.get("format") != FORMAT:
            raise InputError(f"not a vector (expected format {FORMAT!r})", str(root / name))
        if vector.get("suite") == "fries":
            fries.append((name, dict(vector)))
        elif vector.get("suite") == "oplus":
            oplus.append((name, dict(vector)))
        else:
            raise InputError(f"unknown suite {vector.get('suite')!r}", str(root / name))
    if oplus:
        _check_oplus(oplus, engine, report)
    if fries:
        reason = engine_status(engine)
        if reason is not None:
            report.skipped.extend((name, reason) for name, _ in fries)
            return report
        scenarios = [scenario_from_json(v["scenario"], f"{root / n}: scenario") for n, v in fries]
        outcomes = make_engine(engine).run(scenarios)
        for (name, vector), scenario, outcome in zip(fries, scenarios, outcomes):
            judgement = judge(scenario, outcome)
            why = "; ".join(f"[{f.oracle}] {f.summary}" for f in judgement.failures)
            if not why and engine == "reference" and "outputs" in vector["reference_run"]:
                recorded = [tuple(r) for r in vector["reference_run"]["outputs"]]
                mismatch = compare(recorded, outcome.outputs)
                if mismatch is not None:
                    why = "the reference's outputs changed since export: " + mismatch.explain().replace("\n", "; ")
            if why:
                report.mismatched.append((name, why))
            else:
                report.matched.append(name)
    return report


def _check_oplus(vectors: list[tuple[str, dict[str, Any]]], engine: str, report: CheckReport) -> None:
    """O+ vectors: the engine's rows must equal the expected rows as a multiset (Spark: every
    vector in one batch of Spark jobs; reference: elastic VSN)."""
    cases = [v["scenario"] for _, v in vectors]
    if engine == "spark":
        reason = spark_status()
        if reason is not None:
            report.skipped.extend((name, reason) for name, _ in vectors)
            return
        results = spark_engine(frozenset())([(case, 2) for case in cases])
        crashed = {k for k, r in enumerate(results) if isinstance(r, Crash)}
        for k in sorted(crashed):
            result = results[k]
            assert isinstance(result, Crash)
            report.mismatched.append((vectors[k][0], result.explain()))
        vectors = [v for k, v in enumerate(vectors) if k not in crashed]
        produced = [r[0] for r in results if not isinstance(r, Crash)]  # (rows, emitted)
    else:
        produced = [[_row(r) for r in run_scenario(parse_scenario(case), "vsn")] for case in cases]
    for (name, vector), actual in zip(vectors, produced):
        expected = [_row(r) for r in sort_output(list(vector["expected"]))]
        mismatch = compare(expected, actual)
        if mismatch is None:
            report.matched.append(name)
        else:
            report.mismatched.append((name, mismatch.explain().replace("\n", "; ")))


def _row(row: dict[str, Any]) -> tuple[int, str, str]:
    """A row in the comparable form of :func:`conformance.oplus.suite.spark_rows`: (ts, key,
    canonical JSON of the value)."""
    return int(row["ts"]), str(row["key"]), json.dumps(row["value"], sort_keys=True)
