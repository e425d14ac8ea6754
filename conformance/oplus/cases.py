"""Random O+ scenarios in the JSON form of :mod:`spec.oplus.scenario` ("O+ for real").

Drawn, every choice independent and uniform:

* the operator: all six of the catalogue (sliding-sum, wordcount, paircount, longest-tweet,
  ScaleJoin, forward) with their parameters (paircount's duplication level, ScaleJoin's keys
  and band, forward's keys);
* windows: WA and WS sliding, tumbling or not a multiple of WA (WA = 1 for ScaleJoin, WA =
  WS = 1 for forward); WT single or multi where the operator allows both;
* inputs (1-3 lists; exactly 2 for ScaleJoin and forward) whose timestamps sit on the
  *boundaries*: drawn from anchors ``a`` and ``a + WS``, ``a + WS - 1``, ``a + WA``, ``a - WS``,
  so tuples tie (equal timestamps, in one list and across lists), lie exactly at the right end
  ``L + WS`` of a window that holds an earlier tuple, and pairs of ScaleJoin are at distance
  exactly WS (not joined) and WS - 1 (joined); explicit watermarks equal to the next tuple's
  timestamp (the tightest legal watermark) or to a window end;
* 0-3 elastic reconfigurations at strictly increasing watermarks inside the stream's time
  range, to parallelisms 1-5 above and below the current one, so a batch mixes rescales up
  and down with scenarios that keep their parallelism;
* ``items_per_round``: how many items of each list the Spark executor takes per round (1-5),
  returned next to the scenario (it is not part of the scenario format).

The strategy draws a seeded ``random.Random`` from hypothesis and builds the scenario with it
(:func:`build`): drawn field by field, hypothesis's generation phase reuses sub-structures
between examples (a run of 100 cases once had one sliding-sum WT=multi case and a quarter of
empty inputs).
"""

from __future__ import annotations

import copy
import random
from typing import Any, Iterator, Sequence

from hypothesis import strategies as st

from spec.errors import InputError
from spec.oplus.scenario import parse_scenario

from conformance.core.results import SuiteResult

SparkCase = tuple[dict[str, Any], int]
"""A scenario and its items per round on Spark."""

OPERATORS = ("sliding-sum", "wordcount", "paircount", "longest-tweet", "scalejoin", "forward")
_KEYS = ("a", "b", "c", "d")
_WORDS = ("a", "b", "c", "#x", "#y", "dd")


def _windows(rng: random.Random, operator: str) -> tuple[int, int]:
    if operator == "forward":
        return 1, 1
    wa = 1 if operator == "scalejoin" else rng.randint(1, 5)
    shape = rng.choice(("tumbling", "sliding", "odd"))
    if shape == "tumbling":
        return wa, wa
    ws = wa * rng.randint(2, 3)
    return wa, ws + (rng.randint(1, wa - 1) if shape == "odd" and wa > 1 else 0)


def _fields(rng: random.Random, operator: str, source: int) -> dict[str, Any]:
    if operator == "sliding-sum":
        return {"key": rng.choice(_KEYS), "value": rng.randint(-5, 9)}
    if operator in ("wordcount", "paircount", "longest-tweet"):
        return {"text": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(0 if rng.random() < 0.1 else 1, 5)))}
    if operator == "scalejoin":
        names = ("x", "y") if source == 0 else ("a", "b")
        return {name: rng.randint(0, 5) for name in names}
    return {"value": rng.randint(0, 9)}


def _stream(rng: random.Random, operator: str, source: int, stamps: list[int], wa: int, ws: int
            ) -> list[dict[str, Any]]:
    times = sorted(rng.choice(stamps) for _ in range(rng.randint(1, 10)))
    items: list[dict[str, Any]] = []
    for position, ts in enumerate(times):
        if rng.random() < 0.2:  # the tightest legal watermark, or a window's right end below ts
            end = (ts // wa) * wa
            previous = times[position - 1] if position else 0
            items.append({"watermark": ts if rng.random() < 0.6 or end < previous else end})
        items.append({"ts": ts, **_fields(rng, operator, source)})
    return items


def _stamps(rng: random.Random, wa: int, ws: int, horizon: int) -> list[int]:
    """Timestamps on window and band boundaries (module docstring)."""
    anchors = [rng.randint(0, horizon) for _ in range(rng.randint(2, 5))]
    stamps = set(anchors)
    for a in anchors:
        stamps.update({a + ws, a + ws - 1, a + wa, a - ws, (a // wa) * wa + ws})
    return sorted(s for s in stamps if s >= 0)


def build(rng: random.Random, horizon: int = 30) -> dict[str, Any]:
    """One O+ scenario as JSON, every choice taken from ``rng`` (module docstring)."""
    operator = rng.choice(OPERATORS)
    wa, ws = _windows(rng, operator)
    stamps = _stamps(rng, wa, ws, horizon)
    lists = 2 if operator in ("scalejoin", "forward") else rng.randint(1, 3)
    inputs = [_stream(rng, operator, i, stamps, wa, ws) for i in range(lists)]
    case: dict[str, Any] = {"operator": operator, "WA": wa, "WS": ws, "parallelism": rng.randint(1, 4),
                            "inputs": inputs}
    if operator not in ("scalejoin", "forward"):
        case["WT"] = rng.choice(["single", "multi"])
    if operator == "paircount":
        case["params"] = {"duplication": rng.choice(["low", "medium", "high"])}
    elif operator == "scalejoin":
        case["params"] = {"keys": rng.randint(1, 5), "band": rng.randint(0, 3)}
    elif operator == "forward":
        case["params"] = {"keys": rng.randint(1, 3)}
    top = max(item.get("ts", 0) for items in inputs for item in items)
    marks = sorted(rng.sample(range(1, top + 2), min(top + 1, rng.choice((0, 1, 1, 2, 3)))))
    case["reconfigurations"] = [{"watermark": w, "parallelism": rng.randint(1, 5)} for w in marks]
    return case


def oplus_scenarios(horizon: int = 30) -> st.SearchStrategy[dict[str, Any]]:
    """O+ scenarios as JSON (module docstring)."""
    return st.randoms(use_true_random=True).map(lambda rng: build(rng, horizon))


def oplus_cases(horizon: int = 30) -> st.SearchStrategy[tuple[dict[str, Any], int]]:
    """``(scenario, items_per_round)`` pairs: the scenario as :func:`oplus_scenarios` and how
    many items per list the Spark executor takes per round (1-5)."""
    return st.randoms(use_true_random=True).map(lambda rng: (build(rng, horizon), rng.randint(1, 5)))


def count_features(result: SuiteResult, drawn: Sequence[SparkCase]) -> None:
    """Count what the drawn cases exercise in the result's features."""
    features = result.features
    for case, per_round in drawn:
        features[f"{case['operator']} WT={case.get('WT', 'single')}"] += 1
        features[f"{per_round} items per round"] += 1
        sizes = [case["parallelism"]] + [r["parallelism"] for r in case["reconfigurations"]]
        if any(b > a for a, b in zip(sizes, sizes[1:])):
            features["rescale up"] += 1
        if any(b < a for a, b in zip(sizes, sizes[1:])):
            features["rescale down"] += 1
        stamps = [item["ts"] for items in case["inputs"] for item in items if "ts" in item]
        if len(stamps) != len(set(stamps)):
            features["equal timestamps"] += 1


def candidates(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Valid simplifications of an O+ scenario JSON, most aggressive first."""
    moves: list[dict[str, Any]] = []
    if case.get("reconfigurations"):
        moves.append({**case, "reconfigurations": []})
        for i in range(len(case["reconfigurations"])):
            moves.append({**case, "reconfigurations": case["reconfigurations"][:i] + case["reconfigurations"][i + 1:]})
    inputs = case["inputs"]
    for i in range(len(inputs)):
        if len(inputs) > 1:
            moves.append({**case, "inputs": inputs[:i] + inputs[i + 1:]})
        n = len(inputs[i])
        halves = [inputs[i][: n // 2], inputs[i][n // 2:]] if n >= 2 else []
        singles = [inputs[i][:j] + inputs[i][j + 1:] for j in range(n)]
        for smaller in halves + singles:
            moves.append({**case, "inputs": inputs[:i] + [smaller] + inputs[i + 1:]})
    if case["parallelism"] > 1:
        moves.append({**case, "parallelism": 1})
    for move in moves:
        try:
            parse_scenario(move)
        except InputError:
            continue
        yield copy.deepcopy(move)


def size(case: dict[str, Any]) -> int:
    """Input items and reconfigurations of ``case`` (what shrinking makes smaller)."""
    return sum(len(items) for items in case["inputs"]) + len(case.get("reconfigurations", []))
