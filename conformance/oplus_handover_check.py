"""The O+ batch executor's handovers and its one-scenario API against their definitions
(issue 12, session 6; one small batch of Spark jobs).

The ``spark vs sequential`` check judges outputs, emission rounds and owning instances; what a
rescale *reports* (``spark_impl.oplus.BatchResult.handovers``: the round, the rescaled
scenarios, the partitions before and after, the key states moved - the figures
``benchmarks/spark_dgs_oplus.py`` prints) and :func:`spark_impl.oplus.run_scenario` (what
``streamproof oplus --engine spark`` calls) were never looked at. Here two scenarios built so
that every figure is known exactly run as one batch (:func:`handover_cases`):

* ``H``: sliding-sum (WT drawn) with ``k`` keys, one tuple of each per round and a window far
  longer than the stream, so every key has a state at every boundary; two reconfigurations at
  the watermarks of rounds 0 and 1 (``p0 -> p1 -> p2``). Each handover moves exactly the keys
  whose instance ``crc32(key) mod p`` changes;
* ``E``: a window of one time unit whose tuples all expire before its reconfiguration (round 2,
  when ``H`` has ended), so its handover moves nothing (0 key states, not -1).

A handover's partitions are the largest parallelism among the scenarios still running after
its round (the state RDD's width). Both scenarios' rows must equal the sequential reference,
with the reconfigurations counted; then ``run_scenario`` runs a short third scenario and its
rows must equal the reference too.
"""

from __future__ import annotations

import random
import time
from typing import Any

from spec.oplus.scenario import instance_of

from conformance.suite import CheckResult, FailureReport, SuiteResult

#: Name of the check in the O+ suite.
CHECK = "spark_impl O+ handovers and run_scenario vs their definitions"

Expected = tuple[int, tuple[int, ...], int, int, int]
"""A handover as ``(round, rescaled scenarios, partitions before, after, keys moved)``."""


def handover_cases(seed: int) -> tuple[list[dict[str, Any]], int, list[Expected], dict[str, Any]]:
    """``[H, E]``, items per round, the handovers they must report, and ``run_scenario``'s case."""
    rng = random.Random(f"oplus-handover-{seed}")
    k = rng.randint(5, 8)
    keys = [f"k{rng.randrange(1000)}-{i}" for i in range(k)]
    sizes = rng.sample(range(1, 5), 3)  # p0, p1, p2: every handover changes the parallelism
    wt = rng.choice(("single", "multi"))
    hot = {"operator": "sliding-sum", "WA": 500, "WS": 1000, "WT": wt, "parallelism": sizes[0],
           "inputs": [[{"ts": r * k + j, "key": key, "value": rng.randint(-5, 9)}
                       for r in range(3) for j, key in enumerate(keys)]],
           "reconfigurations": [{"watermark": k - 1, "parallelism": sizes[1]},
                                {"watermark": 2 * k - 1, "parallelism": sizes[2]}],
           "params": {}}
    p_empty, p_after = rng.sample(range(1, 5), 2)
    empty = {"operator": "sliding-sum", "WA": 1, "WS": 1, "WT": wt, "parallelism": p_empty,
             "inputs": [[{"ts": j, "key": key, "value": 1} for j, key in enumerate(keys)]
                        + [{"watermark": 100}] * k + [{"watermark": 200}] * k
                        + [{"ts": 300, "key": keys[0], "value": 2}]],
             "reconfigurations": [{"watermark": 200, "parallelism": p_after}], "params": {}}

    def moved(before: int, after: int) -> int:
        return sum(instance_of(key, before) != instance_of(key, after) for key in keys)

    expected: list[Expected] = [
        (0, (0,), max(sizes[0], p_empty), max(sizes[1], p_empty), moved(sizes[0], sizes[1])),
        (1, (0,), max(sizes[1], p_empty), max(sizes[2], p_empty), moved(sizes[1], sizes[2])),
        (2, (1,), max(sizes[2], p_empty), p_after, 0),  # H has ended: only E is still running
    ]
    single = {"operator": "wordcount", "WA": 2, "WS": 4, "WT": wt, "parallelism": sizes[1],
              "inputs": [[{"ts": t, "text": rng.choice(("a b", "b #x", "a a c"))} for t in (1, 2, 5, 7, 9)]],
              "reconfigurations": [{"watermark": 5, "parallelism": sizes[2]}], "params": {}}
    return [hot, empty], k, expected, single


def handover_problem(spark: Any, seed: int) -> str | None:
    """None when the handovers and run_scenario agree with their definitions (module docstring)."""
    from spark_impl.oplus import run_batch, run_scenario

    from conformance.oplus_rounds import as_rows
    from conformance.oplus_suite import _versus_sequential

    scenarios, per_round, expected, single = handover_cases(seed)
    result = run_batch(spark, scenarios, items_per_round=per_round)
    got = [(h.after_round, tuple(h.scenarios), h.partitions_before, h.partitions_after, h.keys_moved)
           for h in result.handovers]
    if got != expected:
        return (f"the batch reported the handovers (round, scenarios, partitions before, after, key states "
                f"moved) {got}, expected {expected}")
    if any(not h.pause_s > 0 for h in result.handovers):
        return f"a handover reported a pause that is not a duration: {[h.pause_s for h in result.handovers]}"
    if result.applied != [2, 1]:
        return f"the batch applied {result.applied} reconfigurations, expected [2, 1]"
    for name, case, rows in (("H", scenarios[0], result.rows[0]), ("E", scenarios[1], result.rows[1]),
                             ("run_scenario", single, run_scenario(single, spark=spark))):
        problem = _versus_sequential(case, as_rows(rows), f"{name}: spark")
        if problem is not None:
            return problem
    return None


def run_check(result: SuiteResult, spark: Any, seed: int) -> bool:
    """Append the check (and its failure, if any) to ``result``; True on a failure."""
    start = time.monotonic()
    try:
        found = handover_problem(spark, seed)
    except Exception as error:  # noqa: BLE001 - a crash of the executor's code is a finding
        found = f"raised {type(error).__name__}: {error}"
    check = CheckResult(CHECK, cases=3, failed=int(found is not None), elapsed_s=time.monotonic() - start)
    result.checks.append(check)
    if found is not None:
        check.oracle_failures["engine"] += 1
        scenarios, _, _, single = handover_cases(seed)
        result.failures.append(FailureReport(CHECK, 0, ("engine",), f"[engine] {found}", 1, 1, 0,
                                             {"problem": found, "scenarios": scenarios, "run_scenario": single}))
    return found is not None
