"""The score table of tools/mutation.py (``summary``): outcomes, the suite's kills and
the kills of checks written for survivors apart, Wilson intervals, the score per part of the
scope (:func:`stratum`) and weighted by part size."""

from __future__ import annotations

import json
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

#: The outcome of a mutant that does not compile (e.g. the ``*`` of a keyword-only signature
#: replaced by ``/``): not a program, so no check judges it; left out of the score like ``no
#: mutation`` (counted killed, it would inflate the score: any import kills it in a second).
INVALID = "invalid (does not compile)"


def stratum(module: str) -> str:
    """The stratum of a module: its part of :data:`SCOPE` (``reconfig``, ``dgs``, ``oplus``,
    ``keys``, ``lru``, ``sink``, ``faults``), with the live front ends of DGS and O+
    (``streaming*.py``: ``--engine spark-streaming``, not the default suites'
    engine) apart as ``dgs-live`` and ``oplus-live``."""
    part = module.split("/")[1] if module.count("/") >= 1 else module
    part = part[:-3] if part.endswith(".py") else part
    live = part in ("dgs", "oplus") and Path(module).name.startswith("streaming")
    return f"{part}-live" if live else part


def summary(run: Path) -> str:
    """Step 3: the Markdown score table."""
    catalogue = json.loads((run / "mutants.json").read_text(encoding="utf-8"))
    records = latest(run / "results.jsonl")
    equivalent = argued_equivalent(run)
    outcome = Counter(r["outcome"] for r in records)
    killed = sum(v for k, v in outcome.items() if k.startswith("killed"))
    eq = sum(1 for r in records if _is_equivalent(r, equivalent))
    judged = len(records) - outcome["no mutation"] - outcome[INVALID] - eq
    lines = [f"Snapshot {catalogue['commit'][:10]}; population {len(catalogue['mutants'])} mutants in scope; "
             f"sample {len(records)}.", "",
             "| outcome | mutants |", "| --- | ---: |"]
    lines += [f"| {k} | {v} |" for k, v in sorted(outcome.items())]
    by_suite = sum(v for k, v in outcome.items() if k.startswith("killed") and k != "killed by tests")
    tests_first = any(r.get("tests_first") for r in records)
    low, high = wilson(killed, judged)
    s_low, s_high = wilson(by_suite, judged)
    lines += [f"| equivalent (annotations, and survivors argued in equivalent.txt) | {eq} |", "",
              f"**Score: {killed}/{judged} non-equivalent mutants killed "
              f"({100.0 * killed / judged if judged else 0:.1f}%).**", "",
              (f"Tests first (the suites ran only on what the default tests let through, so there is no "
               f"suite-alone figure); suite + tests: {killed}/{judged}, 95% interval (Wilson) "
               f"{100 * low:.1f}-{100 * high:.1f}%." if tests_first else
               f"Suite alone: {by_suite}/{judged} ({100.0 * by_suite / judged if judged else 0:.1f}%), "
               f"95% interval (Wilson) {100 * s_low:.1f}-{100 * s_high:.1f}%; "
               f"suite + tests: {killed}/{judged}, 95% interval (Wilson) {100 * low:.1f}-{100 * high:.1f}%."),
              weighted_line(records, catalogue["mutants"], equivalent), "",
              *part_table(records, equivalent), "",
              "| module | sampled | killed | survived | not covered | equivalent |",
              "| --- | ---: | ---: | ---: | ---: | ---: |"]
    per: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        key = "equivalent" if _is_equivalent(r, equivalent) else \
            "killed" if r["outcome"].startswith("killed") else r["outcome"]
        per[r["module"]][key] += 1
        per[r["module"]]["sampled"] += 1
    for module, c in sorted(per.items()):
        lines.append(f"| {module} | {c['sampled']} | {c['killed']} | {c['survived']} | {c['not covered']} | "
                     f"{c['equivalent']} |")
    lines += ["", "Killed by the default tests (tests first)" if tests_first else
              "Killed by a check written for a survivor (not by the suite):", ""]
    lines += [f"* `{r['id']}` line {r['line']}: {r.get('killed_by', '')} `{r.get('diff', '')}`"
              for r in records if r["outcome"] == "killed by tests"]
    lines += ["", "Survivors:", ""]
    for r in records:
        if not r["outcome"].startswith(("killed", "equivalent")) and r["outcome"] not in ("no mutation", INVALID):
            tag = " (equivalent)" if r["id"] in equivalent else ""
            lines.append(f"* `{r['id']}` line {r['line']}: {r['outcome']}{tag} `{r.get('diff', '')}`")
    return "\n".join(lines)


def part_table(records: list[dict[str, Any]], argued: set[str]) -> list[str]:
    """Markdown rows per part of the scope (:func:`stratum`): judged (non-equivalent), killed
    by the suite, killed by a check written for a survivor, survived on an executed line, not
    covered, equivalent."""
    rows: dict[str, Counter[str]] = defaultdict(Counter)
    for r in records:
        outcome = str(r["outcome"])
        if outcome in ("no mutation", INVALID):
            continue
        c = rows[stratum(str(r["module"]))]
        key = "equivalent" if _is_equivalent(r, argued) else "tests" if outcome == "killed by tests" else \
            "suite" if outcome.startswith("killed") else outcome
        c[key] += 1
        c["judged"] += key != "equivalent"
    out = ["| part | judged | killed by the suite | + by tests | survived | not covered | equivalent |",
           "| --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for k in sorted(rows):
        c = rows[k]
        out.append(f"| {k} | {c['judged']} | {c['suite']} | {c['tests']} | {c['survived']} | {c['not covered']} | "
                   f"{c['equivalent']} |")
    return out


def latest(results: Path) -> list[dict[str, Any]]:
    """One record per mutant: its last suite run (a mutant run again: its last result counts),
    with the outcome ``killed by tests`` if its last ``tests_only`` run (checks written for
    survivors) killed a mutant the suite left alive. Suite verdicts stay in ``suite_outcome``."""
    suite: dict[str, dict[str, Any]] = {}
    tests: dict[str, dict[str, Any]] = {}
    for line in results.read_text().splitlines():
        if line.strip():
            record = json.loads(line)
            (tests if record.get("tests_only") else suite)[record["id"]] = record
    out = []
    for key in dict.fromkeys([*suite, *tests]):
        base = suite.get(key) or dict(tests[key], outcome="survived")  # never run by the suite: no suite kill
        record = dict(base, suite_outcome=base["outcome"])
        extra = tests.get(key)
        if extra is not None and extra["outcome"] == "killed by tests" and not base["outcome"].startswith(
                ("killed", "equivalent")):
            record.update(outcome="killed by tests", killed_by=extra.get("killed_by"))
        out.append(record)
    return out


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The Wilson score interval of a proportion ``k / n`` (95 % at ``z`` = 1.96)."""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * ((p * (1 - p) / n + z * z / (4 * n * n)) ** 0.5) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def weighted_line(records: list[dict[str, Any]], population: list[dict[str, Any]], argued: set[str]) -> str:
    """The score with each stratum (:func:`stratum`) weighted by its share of the population's
    non-annotation mutants: a stratified sample over-represents small strata (>= 2 draws)."""
    size = Counter(stratum(str(m.get("module", ""))) for m in population if not m.get("annotation"))
    judged: Counter[str] = Counter()
    killed: Counter[str] = Counter()
    for r in records:
        if r["outcome"] in ("no mutation", INVALID) or _is_equivalent(r, argued):
            continue
        judged[stratum(str(r["module"]))] += 1
        killed[stratum(str(r["module"]))] += r["outcome"].startswith("killed")
    weight = sum(size[k] for k in judged)
    if not weight or any(not size[k] for k in judged):
        return ""
    score = sum(size[k] * killed[k] / judged[k] for k in judged) / weight
    parts = ", ".join(f"{k} {killed[k]}/{judged[k]} of {size[k]}" for k in sorted(judged))
    return f"Weighted by stratum size ({parts}): {100 * score:.1f}%."


def _is_equivalent(record: dict[str, Any], argued: set[str]) -> bool:
    """Equivalent: in an annotation, or a survivor whose id is in ``equivalent.txt``."""
    outcome = str(record["outcome"])
    return outcome.startswith("equivalent") or (record["id"] in argued and not outcome.startswith("killed"))


def argued_equivalent(run: Path) -> set[str]:
    """Mutant ids argued equivalent (``RUN/equivalent.txt``, one id per line, ``#`` comments;
    each argued in a comment there)."""
    path = run / "equivalent.txt"
    if not path.exists():
        return set()
    return {line.split("#")[0].strip() for line in path.read_text().splitlines() if line.split("#")[0].strip()}
