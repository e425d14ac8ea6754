"""Targeted O+ boundary cases: every edge a one-line bug could move, hit on purpose.

The random builder (:mod:`conformance.oplus.cases`) reaches boundaries by drawing
timestamps from anchors; a bug that only shows on one exact edge was still caught in 4-5 of
100 cases. Here each *kind* builds a scenario around one family of edges, so a run of the
suite hits each of them several times whatever the seed (:func:`edge_case`; the suite makes
every :data:`EVERY`-th case a targeted one, kinds in turn):

* ``window-end``: an aggregate (any of the four, WT single or multi) with tuples at a window's
  left end ``L``, at ``L + WS - 1`` and exactly at ``L + WS``, and an explicit watermark exactly
  ``L + WS`` in a one-item-per-round list, so a round's watermark *equals* a window end (the
  expiry test ``L + WS <= W``, membership ``[L, L + WS)``, the instance range of a tuple);
* ``purge``: WT single with tuples at ``L``, ``L + WA - 1``, ``L + WA`` (the f_S purge keeps
  ``ts >= L + WA``), sliding windows, ties; half of them on two lists, so a later round can
  bring a tuple older than one already in a chain;
* ``join-band``: ScaleJoin where every right tuple is derived from a left one at time distance
  ``0``, ``WS - 1``, exactly ``WS`` (not joined) or ``-(WS - 1)``, and coordinates at exactly
  ``band`` and ``band + 1`` from it;
* ``pair-distance``: paircount (low or medium duplication) whose texts have ``d + 1`` or
  ``d + 2`` distinct words, so pairs at exactly the largest distance ``d`` and at ``d + 1``
  exist;
* ``rescale``: many keys, one item per round, 2-3 reconfigurations at watermarks that *are*
  round watermarks (a tuple's timestamp), up and down, so a rescale applied one boundary early
  or late, or keys routed by the wrong parallelism, move outputs to another instance;
* ``forward``: forward with several keys and tied timestamps across the two lists, one or two
  items per round.
"""

from __future__ import annotations

import random
from typing import Any

KINDS = ("window-end", "purge", "join-band", "pair-distance", "rescale", "forward")
EVERY = 3
"""Every third case of a suite run is a targeted one (indexes 2, 5, 8, ...)."""

_AGGREGATES = ("sliding-sum", "wordcount", "paircount", "longest-tweet")
_WORDS = ("a", "b", "#x", "#y", "cc")


def _fields(rng: random.Random, operator: str) -> dict[str, Any]:
    if operator == "sliding-sum":
        return {"key": rng.choice("abc"), "value": rng.randint(-3, 9)}
    return {"text": " ".join(rng.choice(_WORDS) for _ in range(rng.randint(1, 4)))}


def _aggregate(rng: random.Random, operator: str, wt: str, wa: int, ws: int, stamps: list[int],
               marks: bool) -> dict[str, Any]:
    items: list[dict[str, Any]] = []
    for ts in sorted(stamps):
        if marks and ts % wa == ws % wa and rng.random() < 0.7:  # a window end: W = L + WS exactly
            items.append({"watermark": ts})
        items.append({"ts": ts, **_fields(rng, operator)})
    inputs = [items]
    if not marks and rng.random() < 0.5:  # two lists: a later round can carry smaller timestamps
        inputs = [[x for i, x in enumerate(items) if i % 2 == 0], [x for i, x in enumerate(items) if i % 2 == 1]]
    case: dict[str, Any] = {"operator": operator, "WA": wa, "WS": ws, "WT": wt, "parallelism": rng.randint(1, 3),
                            "inputs": inputs, "reconfigurations": []}
    if operator == "paircount":
        case["params"] = {"duplication": "low"}
    return case


def _around(rng: random.Random, wa: int, edge: int) -> list[int]:
    """Two window left ends ``L`` and, for each, ``L``, ``L + edge - 1`` and ``L + edge`` twice."""
    return [t for m in rng.sample(range(0, 6), 2) for t in (m * wa, m * wa + edge - 1, m * wa + edge, m * wa + edge)]


def _window_end(rng: random.Random) -> tuple[dict[str, Any], int]:
    wa = rng.randint(1, 4)
    ws = wa * rng.randint(1, 3)
    case = _aggregate(rng, rng.choice(_AGGREGATES), rng.choice(("single", "multi")), wa, ws, _around(rng, wa, ws), True)
    return case, 1


def _purge(rng: random.Random) -> tuple[dict[str, Any], int]:
    wa = rng.randint(2, 4)
    ws = wa * rng.randint(2, 3)
    case = _aggregate(rng, rng.choice(_AGGREGATES), "single", wa, ws, _around(rng, wa, wa), rng.random() < 0.5)
    return case, rng.choice((1, 2))


def _join_band(rng: random.Random) -> tuple[dict[str, Any], int]:
    ws, band = rng.randint(2, 5), rng.randint(0, 3)
    left = [{"ts": ts, "x": rng.randint(0, 5), "y": rng.randint(0, 5)}
            for ts in sorted(rng.randint(ws, 4 * ws) for _ in range(rng.randint(3, 6)))]
    right = []
    for t in left:
        for _ in range(rng.randint(1, 2)):
            dx = rng.choice((band, band + 1, -band, -band - 1, 0))
            dy = rng.choice((band, -band, rng.randint(-band, band), band + 1))
            right.append({"ts": t["ts"] + rng.choice((0, ws - 1, ws, 1 - ws, -ws)), "a": t["x"] + dx, "b": t["y"] + dy})
    right.sort(key=lambda item: item["ts"])
    case = {"operator": "scalejoin", "WA": 1, "WS": ws, "parallelism": rng.randint(1, 4),
            "params": {"keys": rng.randint(1, 4), "band": band}, "inputs": [left, right], "reconfigurations": []}
    return case, rng.choice((1, 2, 3))


def _pair_distance(rng: random.Random) -> tuple[dict[str, Any], int]:
    level, distance = rng.choice((("low", 3), ("medium", 10)))
    words = [f"w{i}" for i in range(distance + 3)]
    items = []
    for ts in sorted(rng.randint(0, 12) for _ in range(rng.randint(2, 5))):
        n = distance + rng.choice((1, 2))
        text = rng.sample(words, n) if rng.random() < 0.8 else words[:n]
        items.append({"ts": ts, "text": " ".join(text)})
    wa = rng.randint(1, 4)
    case = {"operator": "paircount", "WA": wa, "WS": wa * rng.randint(1, 2), "WT": rng.choice(("single", "multi")),
            "parallelism": rng.randint(1, 3), "params": {"duplication": level}, "inputs": [items],
            "reconfigurations": []}
    return case, rng.choice((1, 2))


def _rescale(rng: random.Random) -> tuple[dict[str, Any], int]:
    operator = rng.choice(("sliding-sum", "wordcount", "forward"))
    stamps = sorted(rng.sample(range(0, 30), rng.randint(8, 12)))
    items: list[dict[str, Any]] = []
    for ts in stamps:
        if operator == "sliding-sum":
            items.append({"ts": ts, "key": rng.choice("abcdefgh"), "value": rng.randint(0, 9)})
        elif operator == "wordcount":
            items.append({"ts": ts, "text": " ".join(rng.sample("abcdefgh", rng.randint(2, 4)))})
        else:
            items.append({"ts": ts, "value": rng.randint(0, 9)})
    sizes = [rng.randint(1, 5) for _ in range(4)]
    marks = sorted(rng.sample(stamps[1:-1], rng.randint(2, 3)))
    case: dict[str, Any] = {"operator": operator, "parallelism": sizes[0], "inputs": [items],
                            "reconfigurations": [{"watermark": w, "parallelism": p} for w, p in zip(marks, sizes[1:])]}
    if operator == "forward":
        case.update({"WA": 1, "WS": 1, "params": {"keys": rng.randint(3, 5)}, "inputs": [items, []]})
    else:
        wa = rng.randint(1, 3)
        case.update({"WA": wa, "WS": wa * rng.randint(1, 2), "WT": rng.choice(("single", "multi"))})
    return case, 1


def _forward(rng: random.Random) -> tuple[dict[str, Any], int]:
    stamps = sorted(rng.randint(0, 10) for _ in range(rng.randint(3, 8)))
    lists = [[{"ts": ts, "value": rng.randint(0, 9)} for ts in stamps if rng.random() < 0.7] for _ in range(2)]
    case = {"operator": "forward", "WA": 1, "WS": 1, "parallelism": rng.randint(1, 3),
            "params": {"keys": rng.randint(1, 3)}, "inputs": lists, "reconfigurations": []}
    return case, rng.choice((1, 2))


_BUILDERS = {"window-end": _window_end, "purge": _purge, "join-band": _join_band,
             "pair-distance": _pair_distance, "rescale": _rescale, "forward": _forward}


def edge_case(kind: str, rng: random.Random) -> tuple[dict[str, Any], int]:
    """A targeted case of ``kind`` (module docstring) and its items per round."""
    return _BUILDERS[kind](rng)


def shifted(case: dict[str, Any], by: int) -> dict[str, Any]:
    """``case`` with every timestamp, explicit watermark and reconfiguration watermark moved by
    ``by`` (a multiple of WA keeps every window edge an edge)."""
    def move(item: dict[str, Any]) -> dict[str, Any]:
        return {**item, "ts": item["ts"] + by} if "ts" in item else {"watermark": item["watermark"] + by}

    return {**case, "inputs": [[move(i) for i in items] for items in case["inputs"]],
            "reconfigurations": [{**r, "watermark": r["watermark"] + by} for r in case["reconfigurations"]]}


def with_edges(drawn: list[tuple[dict[str, Any], int]], seed: int) -> list[tuple[dict[str, Any], int]]:
    """``drawn`` with every :data:`EVERY`-th case replaced by a targeted one (kinds in turn,
    each from its own ``Random(seed, index)``: reproducible); every other one of them moved to
    negative event times (``-WA * WS * 8``: floor division and "no bound yet" = -inf must hold
    below 0 too)."""
    result = list(drawn)
    for number, index in enumerate(range(EVERY - 1, len(result), EVERY)):
        case, per_round = edge_case(KINDS[number % len(KINDS)], random.Random(f"{seed}:{index}"))
        if (number // len(KINDS)) % 2 == 1:
            case = shifted(case, -case["WA"] * case["WS"] * 8)
        result[index] = (case, per_round)
    return result
