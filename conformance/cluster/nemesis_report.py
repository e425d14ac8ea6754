"""The nemesis' verdict from what happened: round results (per-run oracle verdicts from
:mod:`conformance.cluster.nemesis_oracles`), the faults injected and the problems the
orchestrator saw itself (no recovery, a driver that died on its own, leftovers).

The ``--json`` contract: ``{"runs", "faults": {"NAME": count, ...}, "lost", "duplicated",
"serializable", "violations": [...], "recovery_ms": {"p50", "max"}}`` plus extra keys
(``rounds``, ``refused``, ``moments``, ``recovery_ms_by_fault``, ``injections``, ...).

A round that failed with an error is a violation, except a Fries round whose state file the
nemesis damaged, when the error is the executor's refusal naming that very file (that is the
required behaviour); a damaged round that finished *without* refusing is a violation (the
damaged file would have been used silently).
"""

from __future__ import annotations

import re
import statistics
from collections import Counter
from typing import Any, Sequence

from conformance.cluster.nemesis_faults import FAULTS, STATE_FAULTS

REFUSAL = re.compile(r"corrupt checkpoint state file (\S+):")


def _percentiles(values: Sequence[float]) -> dict[str, int | None]:
    if not values:
        return {"p50": None, "max": None}
    return {"p50": int(round(statistics.median(values))), "max": int(round(max(values)))}


def judge_rounds(results: Sequence[dict[str, Any]], injections: Sequence[dict[str, Any]]
                 ) -> tuple[list[str], int, int]:
    """Violations found in the round results, how many rounds were refused as required, and
    how many Fries rounds failed otherwise (their schedules were never judged)."""
    damaged: dict[int, list[str]] = {}
    for record in injections:
        if record["fault"] in STATE_FAULTS and record.get("counted"):
            damaged.setdefault(int(record["round"]), []).append(str(record["path"]))
    violations: list[str] = []
    refused = unjudged = 0
    for result in results:
        where = f"round {result['round']} ({result['job']})"
        paths = damaged.get(int(result["round"]), [])
        error = result.get("error")
        if error:
            named = set(REFUSAL.findall(error))
            if paths and named and named <= set(paths):
                refused += 1
                continue
            first = next((line for line in error.splitlines() if "Error" in line or "Exception" in line),
                         error.splitlines()[0] if error else "")
            violations.append(f"{where} failed: {first.strip()[:400]}")
            unjudged += result["job"] == "fries"
            continue
        if paths:
            violations.append(f"{where}: state file(s) {', '.join(paths)} damaged while the round ran, "
                              "but the round finished without refusing them")
        for index, run in enumerate(result["runs"]):
            violations.extend(f"{where} case {index}: {failure}" for failure in run["failures"])
    return violations, refused, unjudged


def build_report(results: Sequence[dict[str, Any]], injections: Sequence[dict[str, Any]],
                 problems: Sequence[str], **extra: Any) -> dict[str, Any]:
    """The report (module docstring); ``problems``: the orchestrator's own violations."""
    counted = [r for r in injections if r.get("counted")]
    violations, refused, unjudged = judge_rounds(results, injections)
    violations = list(problems) + violations
    runs = [run for result in results for run in result["runs"]]
    if not runs:
        violations.append("no run finished: nothing was judged")
    serializable = all(run["serializable"] is not False for run in runs) and not unjudged
    recoveries = [r["recovery_ms"] for r in counted if r.get("recovery_ms") is not None]
    by_fault = {name: {**_percentiles([r["recovery_ms"] for r in counted
                                      if r["fault"] == name and r.get("recovery_ms") is not None]),
                       "n": sum(1 for r in counted if r["fault"] == name)}
                for name in FAULTS if any(r["fault"] == name for r in counted)}
    faults = Counter(r["fault"] for r in counted)
    return {
        "runs": len(runs),
        "faults": {name: faults[name] for name in FAULTS if faults[name]},
        "lost": sum(run["lost"] or 0 for run in runs),
        "duplicated": sum(run["duplicated"] or 0 for run in runs),
        "serializable": serializable,
        "violations": violations,
        "recovery_ms": _percentiles(recoveries),
        "fault_count": len(counted),
        "fault_kinds": len(faults),
        "rounds": len(results),
        "refused": refused,
        "moments": dict(Counter(r["phase"] for r in counted)),
        "recovery_ms_by_fault": by_fault,
        "injections": list(injections),
        **extra,
    }


def exit_code(report: dict[str, Any]) -> int:
    """0 iff no oracle failed and nothing was lost or duplicated, else 1."""
    return 0 if not report["violations"] and report["lost"] == 0 and report["duplicated"] == 0 \
        and report["serializable"] else 1


def plain(report: dict[str, Any]) -> str:
    """The report in words."""
    lines = [f"{report['fault_count']} fault(s) of {report['fault_kinds']} kind(s) in {report['rounds']} round(s), "
             f"{report['runs']} run(s) judged:"]
    for name, count in report["faults"].items():
        timing = report["recovery_ms_by_fault"].get(name, {})
        lines.append(f"  {name:15} {count:3}  recovery p50 {timing.get('p50')} ms, max {timing.get('max')} ms")
    lines.append(f"moments: {report['moments']}; rounds refused on a damaged state file: {report['refused']}")
    lines.append(f"lost {report['lost']}, duplicated {report['duplicated']}, "
                 f"every run serializable: {'yes' if report['serializable'] else 'NO'}")
    for violation in report["violations"][:30]:
        lines.append(f"  VIOLATION {violation}")
    lines.append("verdict: " + ("nothing lost or duplicated, every oracle held" if exit_code(report) == 0
                                else "VIOLATION"))
    return "\n".join(lines)
