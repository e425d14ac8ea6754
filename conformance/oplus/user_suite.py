"""The O+ suite for a user-defined operator (``streamproof conformance --operator FILE.py:NAME``).

Checks, on the same random cases (:mod:`conformance.oplus.user_cases`), each judged against
the sequential reference running the user's functions (the operator's meaning, STRETCH):

* ``reference SN vs sequential`` and ``reference elastic VSN vs sequential`` (the case's
  reconfigurations applied elastically): an operator whose outputs depend on how its keys are
  spread over instances, or on anything but its keys' tuples in event-time order, fails here;
* ``spark-streaming vs sequential`` (``--engine spark``, the default when Spark is available):
  every case one job of ONE live query on spark_impl's O+ front end
  (:func:`conformance.oplus.engines.user.live_engine`: files landed out of order within the
  allowed lateness, explicit watermarks, driver crashes and restarts; with ``faults``,
  spark_impl's seeded O+ faults switched on). spark_impl's batch O+ executor runs only the
  catalogue, so there is no batch check (reported NOT RUN, never as a pass).

Oracles: ``outputs`` (the multiset of ``(ts, payload)`` differs: the first missing and
unexpected outputs), ``user-code`` (one of the operator's functions raised: named with its
file and line; on Spark the query stops and the finding comes at once, never a hang),
``engine`` (anything else raised, or a call outlived the watchdog).

**A raising operator stops the run.** The sequential reference runs every case first; when
the operator's own code raises there, the first reference check reports that case (``user-code``,
shrunk on the reference alone) and the run stops: the other checks, the live one included, are
NOT RUN (their note says why), so no Spark query starts and the finding comes in seconds.
Every other check would only fail on the same cases.

The first failure of each
check is shrunk (the reference's with up to ``--shrink-budget`` candidates; the live one with
at most 60 candidates, each batch one live query, and 90 s) and saved for ``--replay`` with
``scheduler`` ``user-operator:<mode>`` and the operator's target and fields in the case.
"""

from __future__ import annotations

import time
from typing import Any, Callable, Sequence

from spec.errors import InputError

from conformance.core.cases import draw_cases
from conformance.core.crashes import Crash
from conformance.core.matcher import compare
from conformance.core.results import CheckResult, FailureReport, Progress, SuiteResult
from conformance.core.saved_case import save_case
from conformance.core.shrink import shrink
from conformance.oplus.engines.user import (
    Outputs,
    UserCodeError,
    UserOperatorUnderTest,
    live_engine,
    reference_outputs,
    user_fault,
)
from conformance.core.verdict import OracleName, Verdict, from_text, holds
from conformance.oplus.oracles import crash_verdict, problem_text
from conformance.oplus.user_cases import Field, candidates, operator_cases, parse_fields, size
from spark_impl.oplus.user_operator import load_operator

CHECKS = {"reference SN vs sequential": "sn", "reference elastic VSN vs sequential": "vsn"}
LIVE = "spark-streaming vs sequential"
SCHEDULER = "user-operator"
LIVE_SHRINK = 60
STOPPED = "the operator's own code raised in the sequential reference (the user-code failure): fix it first"
"""The note of the checks a run stops before (module docstring)."""

Judge = Callable[[Sequence[dict[str, Any]]], list[Verdict]]
"""Per case, the verdict of the first oracle that failed (``user-code``, ``engine``,
``outputs``), else the held ``outputs`` verdict."""


def _show(row: tuple[int, str]) -> str:
    return f"(ts {row[0]}, payload {row[1]})"


def versus(expected: Outputs, got: Outputs, who: str) -> Verdict:
    """The ``outputs`` oracle: ``got`` equals ``expected`` as a multiset, else the first
    differences."""
    mismatch = compare(sorted(expected.elements()), sorted(got.elements()))
    if mismatch is None:
        return holds(OracleName.OUTPUTS, f"{who} outputs equal the sequential reference")
    return from_text(OracleName.OUTPUTS, f"{who} outputs differ from the sequential reference:\n"
                     f"{mismatch.explain(_show)}", mismatch.witness(_show))


def user_code(text: str) -> Verdict:
    """The ``user-code`` oracle's failure: the operator raised (``text``: :func:`user_fault`)."""
    return from_text(OracleName.USER_CODE, text, {"error": text})


def sequential_or_problem(under: UserOperatorUnderTest, case: dict[str, Any]) -> Outputs | Verdict:
    """The operator's meaning on ``case``, or the ``user-code`` finding of its raising."""
    try:
        return reference_outputs(under, case, "sequential")
    except Exception as error:  # noqa: BLE001 - the user's functions may raise anything
        return user_code(user_fault(under, error, "the sequential reference"))


def reference_judge(under: UserOperatorUnderTest, mode: str, seed: int) -> Judge:
    """Per case: None when the reference in ``mode`` equals the sequential reference."""
    def judge(cases: Sequence[dict[str, Any]]) -> list[Verdict]:
        found: list[Verdict] = []
        for case in cases:
            expected = sequential_or_problem(under, case)
            if isinstance(expected, Verdict):
                found.append(expected)
                continue
            try:
                got = reference_outputs(under, case, mode, seed)
            except Exception as error:  # noqa: BLE001 - the user's functions may raise anything
                found.append(user_code(user_fault(under, error, f"the reference {mode} execution")))
                continue
            found.append(versus(expected, got, f"reference {mode}"))
        return found
    return judge


def live_judge(under: UserOperatorUnderTest, spark: Any, faults: frozenset[str] = frozenset()) -> Judge:
    """Per case: None when the live front end's outputs (with the seeded ``faults``) equal the
    sequential reference's."""
    engine = live_engine(under, spark, faults=faults)

    def judge(cases: Sequence[dict[str, Any]]) -> list[Verdict]:
        found: list[Verdict] = []
        for case, got in zip(cases, engine(cases)):
            if isinstance(got, Crash):
                user = UserCodeError.__name__ in got.message
                found.append(user_code(got.explain()) if user else crash_verdict(got))
                continue
            expected = sequential_or_problem(under, case)
            found.append(expected if isinstance(expected, Verdict) else versus(expected, got, "spark-streaming"))
        return found
    return judge


def first_raising(under: UserOperatorUnderTest, cases: Sequence[dict[str, Any]]) -> int | None:
    """The index of the first case on which the operator's own code raises in the sequential
    reference (its meaning), None when it raises on none."""
    return next((i for i, case in enumerate(cases) if isinstance(sequential_or_problem(under, case), Verdict)), None)


def run_check(name: str, judge: Judge, cases: list[dict[str, Any]], result: SuiteResult, record: dict[str, Any],
              budget: int, deadline_s: float | None, save_dir: str | None, first: int | None = None) -> None:
    """Run one check, shrink its first failure (case ``first`` when given: a failing case)
    and save it (``record``: what the saved case carries besides the case: engine,
    scheduler, operator, fields, seed)."""
    check = CheckResult(name)
    start = time.monotonic()
    found = judge(cases)
    check.cases, check.failed = len(found), sum(not v.held for v in found)
    check.oracle_failures.update(v.name for v in found if not v.held)
    check.elapsed_s = time.monotonic() - start
    result.checks.append(check)
    index = first if first is not None and not found[first].held else next(
        (i for i, v in enumerate(found) if not v.held), None)
    if index is None:
        return
    wanted = found[index].oracle

    def still_fails(batch: Sequence[dict[str, Any]]) -> list[bool]:
        return [not v.held and v.oracle == wanted for v in judge(batch)]

    shrunk, stats = shrink(cases[index], candidates, still_fails, batch=32, max_evaluations=max(0, budget),
                           deadline_s=deadline_s)
    final = judge([shrunk])[0]
    final = found[index] if final.held else final
    explanation = problem_text(final) or ""
    data = {"operator": record["operator"], "fields": record["fields"], "case": shrunk}
    report = FailureReport(name, index, (final.name,), explanation, size(cases[index]), size(shrunk),
                           stats.steps, data)
    if save_dir is not None:
        json_path, test_path = save_case(save_dir, suite="oplus", engine=record["engine"],
                                         scheduler=f"{SCHEDULER}:{record['mode']}",
                                         faults=tuple(record.get("faults", ())),
                                         seed=record["seed"] + index, case=index, oracles=report.oracles,
                                         explanation=explanation, case_data=data)
        report.replay_file, report.pytest_file = str(json_path), str(test_path)
    result.failures.append(report)


def fields_text(fields: Sequence[Field]) -> str:
    """The ``--fields`` text of ``fields``."""
    return ",".join(f"{f.name}:{f.kind}" for f in fields)


def run_operator_suite(under: UserOperatorUnderTest, *, cases: int, seed: int, spark_check: bool,
                       save_dir: str | None, shrink_budget: int, spark: Any = None,
                       progress: Progress | None = None, faults: frozenset[str] = frozenset()) -> SuiteResult:
    """Every check of the module docstring on ``cases`` random cases (``spark_check``: also
    the live front end, with spark_impl's seeded O+ ``faults`` switched on: the reference
    checks have none)."""
    result = SuiteResult("oplus", "spark-streaming" if spark_check else "reference", seed,
                         faults=tuple(sorted(faults)), delay_unit="")
    drawn = draw_cases(operator_cases(under.op, under.fields), cases, seed)
    base = {"operator": under.target, "fields": fields_text(under.fields), "seed": seed}
    raising = first_raising(under, drawn)
    for name, mode in CHECKS.items():
        if raising is not None and result.checks:
            result.checks.append(CheckResult(name, status="unavailable", note=STOPPED))
            continue
        run_check(name, reference_judge(under, mode, seed), drawn, result, {**base, "engine": f"reference-{mode}",
                  "mode": mode}, shrink_budget, None, save_dir, first=raising)
    if raising is not None:
        result.checks.append(CheckResult(LIVE, status="unavailable", note=STOPPED))
    elif spark_check:
        run_check(LIVE, live_judge(under, spark, faults), drawn, result, {**base, "engine": "spark-streaming",
                  "mode": "spark-streaming", "faults": sorted(faults)}, min(LIVE_SHRINK, shrink_budget), 90.0,
                  save_dir)
        result.checks.append(CheckResult("spark vs sequential", status="unavailable",
                                         note="spark_impl's batch O+ executor runs catalogue operators only"))
    else:
        result.checks.append(CheckResult(LIVE, status="unavailable", note="--engine reference"))
    result.features[f"operator {under.op.name} ({under.op.inputs} input(s), WT "
                    f"{under.op.window_type.value})"] += len(drawn)
    result.features["cases with reconfigurations"] += sum(bool(c["reconfigurations"]) for c in drawn)
    if progress is not None:
        progress(len(drawn), len(drawn))
    return result


def load_under(target: str, fields: str) -> UserOperatorUnderTest:
    """The operator named ``FILE.py:NAME`` with ``fields`` (InputError naming the problem)."""
    parsed = parse_fields(fields)
    return UserOperatorUnderTest(load_operator(target), target, parsed)


def replay(record: dict[str, Any], faults: frozenset[str] | None = None) -> tuple[bool, str]:
    """Replay a saved user-operator case (``scheduler`` ``user-operator:<mode>``; the live one
    with ``faults``, by default the seeded faults the case was saved with)."""
    data = record["case_data"]
    if not isinstance(data, dict) or not {"operator", "fields", "case"} <= set(data):
        raise InputError("a user-operator case needs operator, fields and case", "case_data")
    under = load_under(str(data["operator"]), str(data["fields"]))
    mode = str(record["scheduler"]).partition(":")[2]
    injected = frozenset(record.get("faults", ())) if faults is None else faults
    judge = (live_judge(under, None, injected) if mode == "spark-streaming"
             else reference_judge(under, mode, int(record.get("seed", 0))))
    problem = problem_text(judge([data["case"]])[0])
    return problem is None, problem or "every oracle holds"

