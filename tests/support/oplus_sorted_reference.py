"""The reference's O+ outputs on the event-time-sorted input, for the live front end's
lateness and user-operator tests (a helper module, not a test module)."""

from __future__ import annotations

from collections import Counter
from typing import Any

from reference.oplus.executors import run_sequential
from reference.oplus.run import run_scenario
from spec.oplus.model import OPlus, StreamTuple
from spec.oplus.scenario import parse_scenario


def plain(value: Any) -> Any:
    """A value read back from JSON with its lists as tuples (payloads are tuples)."""
    return tuple(plain(v) for v in value) if isinstance(value, list) else value


def user_reference(op: OPlus, tuples: list[dict[str, Any]]) -> Counter[tuple[int, Any]]:
    """``(ts, payload)`` of the sequential reference running ``op`` on ``tuples`` (``ts``,
    ``seq``, ``key``, ``value``; payload ``(key, value)``) sorted by ``(ts, seq)``."""
    ordered = sorted(tuples, key=lambda t: (t["ts"], t["seq"]))
    source = [StreamTuple(t["ts"], 0, t["seq"], (t["key"], t["value"])) for t in ordered]
    return Counter((o.ts, plain(o.payload)) for o in run_sequential(op, [source]).outputs)


def sum_reference(wt: str, tuples: list[dict[str, Any]]) -> Counter[tuple[int, Any]]:
    """``(ts, (key, sum))`` of the reference's sliding-sum (WA 5, WS 10, ``WT = wt``) on the
    sorted input."""
    case = {"operator": "sliding-sum", "WA": 5, "WS": 10, "WT": wt, "parallelism": 1,
            "inputs": [[{"ts": t["ts"], "key": t["key"], "value": t["value"]}
                        for t in sorted(tuples, key=lambda t: (t["ts"], t["seq"]))]]}
    return Counter((r["ts"], (r["key"], r["value"])) for r in run_scenario(parse_scenario(case), "sequential"))
