"""The O+ seeded faults against the bugs ``spark_impl.faults`` names (no Spark).

The O+ suite's teeth are measured with two seeded faults (docs/conformance.md), and the
default run never injects them, so a change that turns a fault into another bug - or into
none - changes no default run and quietly changes what those figures mean. This check runs
the pure functions of ``spark_impl.oplus`` that carry the faults, with and without them:

* ``window-off-by-one``: a tuple at ``ts`` is put in exactly the window instances (left
  boundaries ``L`` on the ``WA`` grid) with ``L <= ts <= L + WS`` - the right boundary
  included; without the fault ``L <= ts < L + WS`` (Def. 1);
* ``drop-near-watermark``: of the tuples at or above the previous round's watermark ``W``
  (all a watermark allows) exactly those at ``ts == W`` are dropped; without the fault none;
* and the batch driver hands every instance that previous watermark
  (:func:`spark_impl.oplus.driver.round_plans`): round ``r``'s plan of a scenario
  still running carries ``previous`` = the watermark of its round ``r - 1`` (-inf for round 0),
  the watermark after round ``r``, the parallelism in force and the fault flag; a scenario
  whose rounds are over gets no plan. ``previous`` matters only under the fault, so no default
  run looks at it (``driver.py`` ``watermark(r - 1)`` ->
  ``watermark(r + 1)``: the fault then drops every tuple up to the *next* round's watermark).
"""

from __future__ import annotations

import math
import time

from spec.oplus.scenario import parse_scenario

from conformance.core.results import CheckResult, FailureReport, SuiteResult
from conformance.core.watchdog import bounded

#: Name of the check in the O+ suite.
CHECK = "spark_impl O+ seeded faults vs their definitions (no Spark)"
#: (WA, WS) pairs tried: tumbling, sliding, WS not a multiple of WA.
WINDOWS = ((1, 4), (2, 4), (2, 5), (3, 3))


def fault_problem() -> str | None:
    """None when the O+ seeded faults are exactly the bugs they name (module docstring)."""
    from spark_impl.oplus.instance import ScenarioRound, process
    from spark_impl.oplus.operators import OperatorConfig, lefts_of

    for wa, ws in WINDOWS:
        for faulty in (False, True):
            op = OperatorConfig("sliding-sum", wa, ws, False, off_by_one=faulty)
            for ts in range(0, 3 * ws):
                want = [left for left in range(ts - ws - wa, ts + 1) if left % wa == 0 and left <= ts and
                        (ts <= left + ws if faulty else ts < left + ws)]
                got = list(lefts_of(op, ts))
                if got != want:
                    return (f"WA={wa} WS={ws}{' with window-off-by-one' if faulty else ''}: the tuple at ts {ts} "
                            f"is put in the instances {got}, expected {want}")
    op = OperatorConfig("sliding-sum", 2, 4, False)
    for faulty in (False, True):
        for ts in (10, 11):  # a watermark promises ts >= W: nothing below it
            plan = ScenarioRound(op, 1, previous=10, watermark=12, drop_near_watermark=faulty)
            state, outputs = process(0, {}, [(0, (ts, 0, 0, {"key": "k", "value": 1}))], {0: plan})
            dropped = not state and not outputs
            if dropped != (faulty and ts == 10):
                return (f"drop-near-watermark {'on' if faulty else 'off'}: the tuple at ts {ts} with the previous "
                        f"watermark 10 was {'dropped' if dropped else 'kept'}")
    return plan_problem()


def plan_problem() -> str | None:
    """None when the batch driver's round plans carry the watermarks the module docstring says."""
    from spark_impl.oplus.driver import round_plans
    from spark_impl.oplus.feed import Feed
    from spark_impl.oplus.operators import OperatorConfig

    def scenario(lists: int, length: int) -> dict[str, object]:
        return {"operator": "sliding-sum", "WA": 2, "WS": 4, "WT": "multi", "parallelism": 1,
                "inputs": [[{"ts": 3 * t + s, "key": "k", "value": 1} for t in range(length)] for s in range(lists)]}

    parsed = [parse_scenario(scenario(1, 9)), parse_scenario(scenario(2, 4))]
    feeds, sizes = [Feed(parsed[0], 2), Feed(parsed[1], 1)], [3, 2]
    configs = [OperatorConfig.of(s) for s in parsed]
    for drop in (False, True):
        before: dict[int, float] = {}
        for r in range(max(f.rounds for f in feeds) + 1):
            plans = round_plans(feeds, configs, sizes, r, drop)
            running = [i for i, f in enumerate(feeds) if r < f.rounds]
            if sorted(plans) != running:
                return f"round {r}: plans for the scenarios {sorted(plans)}, expected the ones still running {running}"
            for i, plan in plans.items():
                want = (configs[i], sizes[i], before.get(i, -math.inf), feeds[i].watermark(r), drop)
                got = (plan.op, plan.parallelism, plan.previous, plan.watermark, plan.drop_near_watermark)
                if got != want:
                    return (f"round {r} of scenario {i}: plan (operator, parallelism, previous watermark, watermark, "
                            f"drop-near-watermark) {got[1:]}, expected {want[1:]}")
            before = {i: plan.watermark for i, plan in plans.items()}
    return None


def run_check(result: SuiteResult) -> bool:
    """Append the check (and its failure, if any) to ``result``; True on a failure."""
    start = time.monotonic()

    try:
        found = bounded(fault_problem, CHECK)
    except Exception as error:  # noqa: BLE001 - a crash (or a hang) of the executor's code is a finding
        found = f"raised {type(error).__name__}: {error}"
    check = CheckResult(CHECK, cases=2 * len(WINDOWS) + 3, failed=int(found is not None),
                        elapsed_s=time.monotonic() - start)
    result.checks.append(check)
    if found is not None:
        check.oracle_failures["engine"] += 1
        result.failures.append(FailureReport(CHECK, 0, ("engine",), f"[engine] {found}", 1, 1, 0, {"problem": found}))
    return found is not None
