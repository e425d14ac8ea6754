"""The catalogue operators of ``spec.oplus.scenario.CATALOGUE`` as plain data and functions
that Spark tasks run (no Spark, no ``reference/``).

Everything an instance needs about its operator travels in one small picklable
:class:`OperatorConfig` (name, WA, WS, WT, parameters). The functions here are the operator's
f_MK (:func:`keys_of`: the keys a tuple belongs to, SN style), the aggregates' lift and merge
(:func:`lift`, :func:`merge`), window membership (:func:`lefts_of`, :func:`earliest_left`,
with the seeded ``window-off-by-one`` fault) and the ScaleJoin storage key.

An input tuple inside Spark is the plain tuple :data:`Item` ``(ts, source, position,
fields)``: its TB order is the tuple order ``(ts, source, position)`` (spec.oplus.watermarks,
Def. 3 made total).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Mapping

from spec.oplus.scenario import PAIR_DISTANCE, Scenario

Item = tuple[int, int, int, Mapping[str, Any]]
"""One input tuple: ``(ts, source index, position in its source, fields)``."""

AGGREGATES = ("sliding-sum", "wordcount", "paircount", "longest-tweet")
"""Operators that are A / A+ (one accumulator per key and window instance)."""


@dataclass(frozen=True)
class OperatorConfig:
    """What a Spark task needs to run one scenario's operator (picklable)."""

    name: str
    wa: int
    ws: int
    single: bool  # WT = single (one chain of instances per key) vs multi
    keys: int = 1  # ScaleJoin's / forward's number of keys
    band: int = 0  # ScaleJoin's band
    distance: int | None = 3  # paircount's largest pair distance (None = any)
    off_by_one: bool = False  # seeded fault window-off-by-one
    typed_keys: bool = False  # sliding-sum: the key field as is (any type), not str() of it

    @staticmethod
    def of(scenario: Scenario, off_by_one: bool = False) -> "OperatorConfig":
        """The configuration of a parsed scenario's operator."""
        params = scenario.params
        return OperatorConfig(
            name=scenario.operator, wa=scenario.windows.WA, ws=scenario.windows.WS,
            single=scenario.window_type == "single", keys=int(params.get("keys", 1)),
            band=int(params.get("band", 0)),
            distance=PAIR_DISTANCE[params["duplication"]] if "duplication" in params else None,
            off_by_one=off_by_one)


def earliest_left(op: OperatorConfig, ts: int) -> int:
    """The smallest grid left boundary L with ts in [L, L + WS) (earliestWinL, Alg. 2).

    Fault ``window-off-by-one``: the right boundary is treated as inclusive, so a tuple at
    exactly L + WS also lands in instance L (a classic boundary bug)."""
    reach = op.ws + 1 if op.off_by_one else op.ws
    return ((ts - reach) // op.wa + 1) * op.wa


def lefts_of(op: OperatorConfig, ts: int) -> range:
    """Every window instance (by left boundary) that ``ts`` falls in."""
    return range(earliest_left(op, ts), (ts // op.wa) * op.wa + 1, op.wa)


def in_window(op: OperatorConfig, left: int, ts: int) -> bool:
    """``ts`` in instance ``[left, left + WS)`` (inclusive right end under the fault)."""
    return left <= ts < left + op.ws or (op.off_by_one and ts == left + op.ws)


def keys_of(op: OperatorConfig, fields: Mapping[str, Any]) -> list[Any]:
    """f_MK: the keys a tuple belongs to (strings; sliding-sum's key as is under
    ``typed_keys``); SN style, the tuple goes to each of them."""
    name = op.name
    if name == "sliding-sum":
        return [fields["key"] if op.typed_keys else str(fields["key"])]
    if name == "wordcount":
        return sorted(set(str(fields["text"]).split()))
    if name == "paircount":
        words = str(fields["text"]).split()
        return sorted({f"{words[i]} {words[j]}" for i in range(len(words))
                       for j in range(i + 1, len(words))
                       if op.distance is None or j - i <= op.distance})
    if name == "longest-tweet":
        return sorted({w for w in str(fields["text"]).split() if w.startswith("#") and len(w) > 1})
    return [str(k) for k in range(op.keys)]  # scalejoin, forward: every key


def lift(op: OperatorConfig, fields: Mapping[str, Any]) -> int:
    """An aggregate's contribution of one tuple to one key's accumulator."""
    if op.name == "sliding-sum":
        return int(fields["value"])
    if op.name == "longest-tweet":
        return len(str(fields["text"]))
    return 1  # wordcount, paircount: count tuples


def merge(op: OperatorConfig, acc: int, value: int) -> int:
    """Fold one contribution into an accumulator (commutative: order never matters)."""
    return max(acc, value) if op.name == "longest-tweet" else acc + value


def storage_key(source: int, ts: int, fields: Mapping[str, Any], keys: int) -> str:
    """The one ScaleJoin key that stores a tuple (every instance computes the same key, so
    each pair is compared exactly once; docs/oplus.md 'ScaleJoin storage key'). A ``None``
    field is left out: on a live stream it is the other source's column, null in this row."""
    payload = "|".join(f"{name}={fields[name]}" for name in sorted(fields) if fields[name] is not None)
    return str(zlib.crc32(f"{source}|{ts}|{payload}".encode()) % keys)


def band_match(op: OperatorConfig, left: Mapping[str, Any], right: Mapping[str, Any]) -> bool:
    """The §8.3 predicate on L = (x, y), R = (a, b)."""
    return (abs(int(left["x"]) - int(right["a"])) <= op.band
            and abs(int(left["y"]) - int(right["b"])) <= op.band)


def match_value(left: tuple[int, Mapping[str, Any]], right: tuple[int, Mapping[str, Any]]
                ) -> dict[str, Any]:
    """The scenario format's value of a ScaleJoin match."""
    (lts, lf), (rts, rf) = left, right
    return {"left": {"ts": lts, "x": lf["x"], "y": lf["y"]},
            "right": {"ts": rts, "a": rf["a"], "b": rf["b"]}}
