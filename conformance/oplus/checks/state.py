"""An O+ instance keeps the key states its WT documents (no Spark).

``spark_impl.oplus.instance``'s docstring: "WT multi keeps one accumulator per window instance
``{L: acc}``; WT single keeps one chain per key ``[L, [(ts, lifted), ...]]`` shifted by f_S at
expiry". The two are STRETCH's two algorithms (WT multi: one instance per window; WT single:
Alg. 2 forwardAndShift) and for the executor's commutative aggregates they emit the same
outputs, so a scenario run by the other WT's algorithm passes every output oracle of the suite
(``single=scenario.window_type == "single"`` -> ``is not "single"`` runs
every scenario as WT single). The states are what the live front end checkpoints and hands over
at a rescale, so their layout is a durable format. This check parses a WT multi and a WT single
sliding-sum scenario (:meth:`~spark_impl.oplus.operators.OperatorConfig.of`), runs one round of
one instance (:func:`~spark_impl.oplus.instance.process`) over tuples at ``ts`` 0..5 with the
watermark 3, and compares the key state with the documented layout computed from Def. 1
(instances ``L`` on the ``WA`` grid with ``L <= ts < L + WS``, expired when ``L + WS <= W``).
"""

from __future__ import annotations

from typing import Any

from spec.oplus.scenario import parse_scenario

from conformance.core.results import SuiteResult
from conformance.oplus.checks.live_contracts import append_check

#: Name of the check in the O+ suite.
CHECK = "spark_impl O+ key states vs their documented layout (no Spark)"
WA, WS, WATERMARK = 2, 4, 3
TUPLES = [(ts, ts + 1) for ts in range(6)]  # (ts, value) of one key


def _scenario(wt: str) -> dict[str, Any]:
    return {"operator": "sliding-sum", "WA": WA, "WS": WS, "WT": wt, "parallelism": 1,
            "inputs": [[{"ts": ts, "key": "k", "value": value} for ts, value in TUPLES]]}


def _expected(wt: str) -> Any:
    """The documented key state of key ``"k"`` after the round (module docstring)."""
    lefts = {left for ts, _ in TUPLES for left in range(ts - WS + 1, ts + 1) if left % WA == 0}
    open_lefts = sorted(left for left in lefts if left + WS > WATERMARK)
    if wt == "multi":
        return {left: sum(v for ts, v in TUPLES if left <= ts < left + WS) for left in open_lefts}
    start = open_lefts[0]  # the chain shifted past the expired instances, entries before it purged
    return [start, [(ts, v) for ts, v in TUPLES if ts >= start]]


def state_problems() -> list[str]:
    """The WTs whose configuration or key state is not the documented one (module docstring)."""
    from spark_impl.oplus.instance import ScenarioRound, process
    from spark_impl.oplus.operators import Item, OperatorConfig

    found = []
    for wt in ("multi", "single"):
        op = OperatorConfig.of(parse_scenario(_scenario(wt)))
        if op.single != (wt == "single"):
            found.append(f"a WT {wt} scenario is configured as WT {'single' if op.single else 'multi'}")
            continue
        items: list[tuple[int, Item]] = [(0, (ts, 0, i, {"key": "k", "value": value}))
                                         for i, (ts, value) in enumerate(TUPLES)]
        try:
            state, _ = process(0, {}, items, {0: ScenarioRound(op, 1, previous=-float("inf"), watermark=WATERMARK)})
        except Exception as error:  # noqa: BLE001 - a crash of the instance's code is a finding
            found.append(f"WT {wt}: a round to watermark {WATERMARK} raised {type(error).__name__}: {error}")
            continue
        got = state.get(0, {}).get("k")
        if got != _expected(wt):
            found.append(f"WT {wt}: after a round to watermark {WATERMARK} the key state is {got!r}, "
                         f"documented {_expected(wt)!r}")
    return found


def run_check(result: SuiteResult) -> None:
    """Append the check to ``result`` (a failure is a ``contract`` failure)."""
    append_check(result, CHECK, 2, state_problems)
