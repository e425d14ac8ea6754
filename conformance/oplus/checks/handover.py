"""The O+ batch executor's handovers and its one-scenario API against their definitions
(one small batch of Spark jobs).

The ``spark vs sequential`` check judges outputs, emission rounds and owning instances; what a
rescale *reports* (``spark_impl.oplus.BatchResult.handovers``: the round, the rescaled
scenarios, the partitions before and after, the key states moved - the figures
``benchmarks/spark_dgs_oplus.py`` prints) and :func:`spark_impl.oplus.run_scenario` (what
``streamproof oplus --engine spark`` calls) were never looked at. Here a scenario built so
that every figure is known exactly runs as a batch (:func:`handover_cases`):

* ``H``: sliding-sum (WT drawn) with ``k`` keys, one tuple of each per round and a window far
  longer than the stream, so every key has a state at every boundary; two reconfigurations at
  the watermarks of rounds 0 and 1 (``p0 -> p1 -> p2``). Each handover moves exactly the keys
  whose instance ``crc32(key) mod p`` changes: the keys are drawn so that at least two move at
  the first and none at the second (a count of 0, not -1 or 1).

The driver's clock is replaced, for ``H``'s run, by :class:`DoublingClock` (each reading twice
the last): every duration the batch reports (a handover's ``pause_s``, each of
``round_seconds``) must then be the difference of two consecutive readings. On the real clock a
duration computed as ``now % start`` instead of ``now - start`` is bit-identical unless the pause
outlasts the machine's uptime; here it is 0.

A handover's partitions are the largest parallelism among the scenarios still running after
its round (the state RDD's width). ``H``'s rows must equal the sequential reference, with the
reconfigurations counted; then ``run_scenario`` (its default cut: at least 2 items per round)
runs a short second scenario and its rows must equal the reference too.
"""

from __future__ import annotations

import random
import time
from typing import Any

from spec.oplus.scenario import instance_of

from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.oplus.oracles import as_rows, versus_sequential

#: Name of the check in the O+ suite.
CHECK = "spark_impl O+ handovers and run_scenario vs their definitions"

Expected = tuple[int, tuple[int, ...], int, int, int]
"""A handover as ``(round, rescaled scenarios, partitions before, after, keys moved)``."""


def handover_cases(seed: int) -> tuple[list[dict[str, Any]], int, list[Expected], dict[str, Any]]:
    """``[H]``, its items per round, the handovers it must report, and ``run_scenario``'s case."""
    rng = random.Random(f"oplus-handover-{seed}")
    sizes = rng.sample(range(1, 6), 3)  # p0, p1, p2: every handover changes the parallelism
    k = rng.randint(5, 8)
    candidates = [f"k{rng.randrange(10_000)}-{i}" for i in range(400)]
    same = [key for key in candidates if instance_of(key, sizes[1]) == instance_of(key, sizes[2])]
    movers = [key for key in same if instance_of(key, sizes[0]) != instance_of(key, sizes[1])]
    keys = movers[:2] + [key for key in same if key not in movers[:2]][: k - 2]
    rng.shuffle(keys)
    wt = rng.choice(("single", "multi"))
    hot = {"operator": "sliding-sum", "WA": 500, "WS": 1000, "WT": wt, "parallelism": sizes[0],
           "inputs": [[{"ts": r * k + j, "key": key, "value": rng.randint(-5, 9)}
                       for r in range(3) for j, key in enumerate(keys)]],
           "reconfigurations": [{"watermark": k - 1, "parallelism": sizes[1]},
                                {"watermark": 2 * k - 1, "parallelism": sizes[2]}],
           "params": {}}
    moved = sum(instance_of(key, sizes[0]) != instance_of(key, sizes[1]) for key in keys)
    expected: list[Expected] = [(0, (0,), sizes[0], sizes[1], moved),
                                (1, (0,), sizes[1], sizes[2], 0)]  # every key stays: 0 moved, not -1
    single = {"operator": "wordcount", "WA": 2, "WS": 4, "WT": wt, "parallelism": sizes[1],
              "inputs": [[{"ts": t, "text": rng.choice(("a b", "b #x", "a a c"))} for t in (1, 2, 5, 7)]],
              "reconfigurations": [{"watermark": 2, "parallelism": sizes[2]}], "params": {}}
    return [hot], k, expected, single


class DoublingClock:
    """A stand-in for the driver's ``time`` module whose ``perf_counter`` doubles at every
    reading (from 2.0): the difference of two consecutive readings is the earlier one, never 0,
    while ``now % start`` is 0 and ``now + start`` three times it - any other arithmetic on two
    readings is seen by :meth:`durations`."""

    def __init__(self) -> None:
        self.readings: list[float] = []

    def perf_counter(self) -> float:
        """The next reading."""
        self.readings.append(2.0 * self.readings[-1] if self.readings else 2.0)
        return self.readings[-1]

    def durations(self) -> set[float]:
        """Every difference of two consecutive readings."""
        return {b - a for a, b in zip(self.readings, self.readings[1:])}


def handover_problem(spark: Any, seed: int) -> str | None:
    """None when the handovers and run_scenario agree with their definitions (module docstring)."""
    import spark_impl.oplus.driver as driver
    from spark_impl.oplus import run_batch, run_scenario

    scenarios, per_round, expected, single = handover_cases(seed)
    clock, real = DoublingClock(), getattr(driver, "time")
    setattr(driver, "time", clock)  # the driver module reads only time.perf_counter
    try:
        result = run_batch(spark, scenarios, items_per_round=per_round)
    finally:
        setattr(driver, "time", real)
    got = [(h.after_round, tuple(h.scenarios), h.partitions_before, h.partitions_after, h.keys_moved)
           for h in result.handovers]
    if got != expected:
        return (f"the batch reported the handovers (round, scenarios, partitions before, after, key states "
                f"moved) {got}, expected {expected}")
    measured = [h.pause_s for h in result.handovers] + list(result.round_seconds)
    if not result.round_seconds or any(d not in clock.durations() for d in measured):
        return (f"the batch reported durations {measured} (pauses, then rounds) that are not the time between two "
                f"readings of its clock (a clock doubling from 2.0 at every reading)")
    if result.applied != [2]:
        return f"the batch applied {result.applied} reconfigurations, expected [2]"
    for name, case, rows in (("H", scenarios[0], result.rows[0]),
                             ("run_scenario", single, run_scenario(single, spark=spark))):
        problem = versus_sequential(case, as_rows(rows), f"{name}: spark")
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
