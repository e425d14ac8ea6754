"""The O+ scenario format and operator catalogue: the contract of ``streamproof oplus`` and of
any engine (reference, Spark) that runs O+ scenarios (docs/oplus.md).

A scenario (JSON)::

    {"operator": "sliding-sum", "WA": 5, "WS": 10, "WT": "multi", "parallelism": 2,
     "inputs": [[{"ts": 1, "key": "a", "value": 3}, {"watermark": 4}, ...], ...],
     "reconfigurations": [{"watermark": 20, "parallelism": 3}],
     "params": {}}

* windows are ``[l*WA, l*WA + WS)`` (``WA > 0``, ``WS >= WA``); an instance is expired when
  ``l*WA + WS <= watermark``; outputs carry the instance's right boundary ``l*WA + WS``;
* each input list is one upstream stream (a TB source): tuple objects sorted by ``ts``,
  optionally with explicit watermarks ``{"watermark": w}`` (later tuples of the list must have
  ``ts >= w``); after its last item every list ends with the watermark +infinity, so every
  window instance is emitted;
* ``WT`` defaults to the operator's; ``parallelism`` (>= 1) is the initial number of
  instances; ``reconfigurations`` (optional, strictly increasing watermarks) change it
  in modes ``sn`` (state transfer) and ``vsn`` (elastic); ``params`` holds operator
  parameters (below).

Output (``--json``): a list of ``{"ts", "key", "value"}`` sorted by ``(ts, key)`` then by the
canonical JSON of ``value``. Key -> instance mapping used by every engine:
``instance_of(key, n) = crc32(utf-8 key) % n`` (:func:`instance_of`; a lone surrogate, valid
in a JSON string, is encoded as its three UTF-8-style bytes, Python's ``surrogatepass``).

Event times, watermarks, WA and WS are within ``-2**62..2**62`` (:data:`MAX_TIME`).
Resource limits (:mod:`spec.oplus.budget`): a scenario asking for more than ``MAX_PARALLELISM``
instances, ``MAX_KEYS`` keys or ``MAX_WORK`` window steps is refused before it runs.

The catalogue (:data:`CATALOGUE`) says, per operator, in words an engine can implement
without importing ``reference/``: inputs and their fields, keys (f_MK), WT, what ``value`` is.
"""

from __future__ import annotations

import json
import zlib
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

from spec.errors import InputError, cut
from spec.jsonio import expect_int, expect_list, expect_object, expect_str, reject_unknown_keys
from spec.oplus.budget import check_budget
from spec.oplus.windows import WindowSpec

MODES = ("sequential", "sn", "vsn")
"""Execution modes: one instance; shared-nothing (Alg. 1-2); virtual shared-nothing with
elastic reconfiguration (Alg. 3-6)."""

PAIR_DISTANCE = {"low": 3, "medium": 10, "high": None}
"""paircount duplication levels: the largest distance between paired words (§8.1: 3, 10,
+infinity; None = unbounded)."""


@dataclass(frozen=True)
class OperatorDescription:
    """One catalogue entry: what an engine must implement (language-neutral)."""

    name: str
    inputs: int | None  # number of input lists; None = any (>= 1), all one logical input
    fields: tuple[tuple[tuple[str, str], ...], ...]  # per input list (one entry if any)
    default_wt: str
    allowed_wt: tuple[str, ...]
    params: Mapping[str, str]
    semantics: str
    fixed_windows: tuple[int, int] | None = None  # (WA, WS) if forced
    require_wa: int | None = None


_TEXT = ((("text", "string"),),)

CATALOGUE: Mapping[str, OperatorDescription] = {
    d.name: d
    for d in (
        OperatorDescription(
            "sliding-sum", None, ((("key", "string"), ("value", "int")),), "multi",
            ("single", "multi"), {},
            "A (aggregate, I=1): keys = {key}; for each key and window instance with at least "
            "one tuple, value = the sum of the tuples' values."),
        OperatorDescription(
            "wordcount", None, _TEXT, "multi", ("single", "multi"), {},
            "A+ (Operator 14): keys = the distinct whitespace-separated words of text; value = "
            "the number of tuples in the window instance whose text contains the word."),
        OperatorDescription(
            "paircount", None, _TEXT, "multi", ("single", "multi"),
            {"duplication": "low | medium | high (default low): pair words at distance at "
                            "most 3, 10 or any"},
            "A+ (Operator 14, paircount): words = text split on whitespace; keys = the distinct "
            "strings 'W[i] W[j]' for i < j, j - i <= B; value = number of tuples in the "
            "window instance carrying the pair."),
        OperatorDescription(
            "longest-tweet", None, _TEXT, "multi", ("single", "multi"), {},
            "A+ (Operator 9): keys = the distinct words of text starting with '#' (longer than "
            "'#'); value = the largest character count of text among the window's tuples "
            "carrying the hashtag."),
        OperatorDescription(
            "scalejoin", 2, ((("x", "int"), ("y", "int")), (("a", "int"), ("b", "int"))),
            "single", ("single",),
            {"keys": "int >= 1 (default 8): number of ScaleJoin keys (Operator 10 uses 1000)",
             "band": "int >= 0 (default 10): the band of the §8.3 predicate"},
            "J+ (Operator 10, ScaleJoin band join, §8.3): inputs[0] = L (x, y), inputs[1] = R "
            "(a, b); every pair with |L.ts - R.ts| < WS and |x - a| <= band and |y - b| <= band "
            "is output once, ts = (the later ts) + 1, key = 'match', value = {'left': {ts, x, "
            "y}, 'right': {ts, a, b}}.",
            require_wa=1),
        OperatorDescription(
            "forward", 2, ((("value", "int"),), (("value", "int"),)), "single", ("single",),
            {"keys": "int >= 1 (default 1): Operator 15's n keys"},
            "O+ Operator 15 (WA = WS = 1, I = 2): every input tuple is output once per key "
            "k in 0..keys-1 with ts = tuple ts + 1, key = str(k), value = the tuple's value.",
            fixed_windows=(1, 1)),
    )
}


def instance_of(key: str, parallelism: int) -> int:
    """f_mu of every engine: ``crc32(utf-8 key) % parallelism`` (stable across processes,
    unlike Python's salted ``hash``; lone surrogates encoded with ``surrogatepass``, so
    every valid JSON string has a mapping)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % parallelism


@dataclass(frozen=True)
class ScenarioTuple:
    """One input tuple: its timestamp and its operator-specific fields."""

    ts: int
    fields: Mapping[str, Any]


@dataclass(frozen=True)
class ScenarioMark:
    """An explicit watermark ``{"watermark": w}`` in an input list."""

    value: int


@dataclass(frozen=True)
class Reconfiguration:
    """Change the parallelism to ``parallelism`` once the inputs pass event time
    ``watermark`` (applied elastically by mode vsn, Alg. 4-6)."""

    watermark: int
    parallelism: int


@dataclass(frozen=True)
class Scenario:
    """A validated scenario (module docstring)."""

    operator: str
    windows: WindowSpec
    window_type: str
    parallelism: int
    inputs: tuple[tuple[ScenarioTuple | ScenarioMark, ...], ...]
    reconfigurations: tuple[Reconfiguration, ...] = ()
    params: Mapping[str, Any] = field(default_factory=dict)

    @property
    def description(self) -> OperatorDescription:
        """The catalogue entry of the operator."""
        return CATALOGUE[self.operator]

    @property
    def tuple_streams(self) -> tuple[tuple[ScenarioTuple, ...], ...]:
        """Each input list's tuples, its explicit watermarks left out."""
        return tuple(tuple(item for item in stream if isinstance(item, ScenarioTuple))
                     for stream in self.inputs)

    @property
    def pair_distance(self) -> int | None:
        """paircount's largest distance between paired words (:data:`PAIR_DISTANCE` of
        ``params.duplication``; None: unbounded). Only paircount has one: KeyError otherwise."""
        return PAIR_DISTANCE[self.params["duplication"]]


_TOP = {"operator", "WA", "WS", "WT", "parallelism", "inputs", "reconfigurations", "params"}


def parse_scenario(value: Any, where: str = "scenario") -> Scenario:
    """Validate a parsed JSON scenario; raise :class:`InputError` naming the problem and its
    JSON path (prefixed by ``where``, typically the file name)."""
    try:
        return _parse(value)
    except InputError as error:
        raise error.located(where) from None


def _require(obj: Mapping[str, Any], name: str) -> Any:
    if name not in obj:
        raise InputError(f"missing field {name!r}", "top level")
    return obj[name]


def _parse(value: Any) -> Scenario:
    obj = expect_object(value, "top level")
    reject_unknown_keys(obj, _TOP, "top level")
    name = expect_str(_require(obj, "operator"), "operator")
    if name not in CATALOGUE:
        raise InputError(f"unknown operator {cut(repr(name))} (expected one of {sorted(CATALOGUE)})",
                         "operator")
    desc = CATALOGUE[name]
    wa = _time(_require(obj, "WA"), "WA")
    ws = _time(_require(obj, "WS"), "WS")
    windows = WindowSpec(wa, ws)
    if desc.fixed_windows is not None and (wa, ws) != desc.fixed_windows:
        raise InputError(f"operator {name!r} needs WA, WS = {desc.fixed_windows}", "WA")
    if desc.require_wa is not None and wa != desc.require_wa:
        raise InputError(f"operator {name!r} needs WA = {desc.require_wa}", "WA")
    wt = expect_str(obj.get("WT", desc.default_wt), "WT")
    if wt not in ("single", "multi"):
        raise InputError(f"WT must be 'single' or 'multi', got {cut(repr(wt))}", "WT")
    if wt not in desc.allowed_wt:
        raise InputError(f"operator {name!r} supports WT {list(desc.allowed_wt)}", "WT")
    parallelism = _positive(_require(obj, "parallelism"), "parallelism")
    inputs = _parse_inputs(desc, _require(obj, "inputs"))
    reconfigurations = _parse_reconfigurations(obj.get("reconfigurations", []))
    params = _parse_params(desc, obj.get("params", {}))
    scenario = Scenario(name, windows, wt, parallelism, inputs, reconfigurations, params)
    check_budget(scenario)
    return scenario


MAX_TIME = 2**62
"""Largest magnitude of an event time, watermark, WA or WS: event time is a 64-bit integer in
every engine, and ``ts + WS`` must stay one."""


def _time(value: Any, where: str) -> int:
    number = expect_int(value, where)
    if abs(number) > MAX_TIME:
        raise InputError(f"must be within -2**62..2**62 (event time is a 64-bit integer), got "
                         f"{cut(str(number), 30)}", where)
    return number


def _positive(value: Any, where: str) -> int:
    number = expect_int(value, where)
    if number < 1:
        raise InputError(f"must be >= 1, got {number}", where)
    return number


def _parse_inputs(
    desc: OperatorDescription, value: Any
) -> tuple[tuple[ScenarioTuple | ScenarioMark, ...], ...]:
    lists = expect_list(value, "inputs")
    if desc.inputs is None and not lists:
        raise InputError("expected at least one input list", "inputs")
    if desc.inputs is not None and len(lists) != desc.inputs:
        raise InputError(f"operator {desc.name!r} takes exactly {desc.inputs} input lists, "
                         f"got {len(lists)}", "inputs")
    result = []
    for index, items in enumerate(lists):
        fields = desc.fields[index] if desc.inputs is not None else desc.fields[0]
        result.append(_parse_stream(expect_list(items, f"inputs[{index}]"), fields,
                                    f"inputs[{index}]"))
    return tuple(result)


def _parse_stream(items: Sequence[Any], fields: tuple[tuple[str, str], ...], where: str
                  ) -> tuple[ScenarioTuple | ScenarioMark, ...]:
    parsed: list[ScenarioTuple | ScenarioMark] = []
    bound: int | None = None
    for position, raw in enumerate(items):
        at = f"{where}[{position}]"
        obj = expect_object(raw, at)
        if "watermark" in obj:
            reject_unknown_keys(obj, {"watermark"}, at)
            mark = _time(obj["watermark"], f"{at}.watermark")
            parsed.append(ScenarioMark(mark))
            bound = mark if bound is None else max(bound, mark)
            continue
        names = {"ts"} | {n for n, _ in fields}
        reject_unknown_keys(obj, names, at)
        ts = _time(_field(obj, "ts", at), f"{at}.ts")
        if bound is not None and ts < bound:
            raise InputError(f"input not sorted: ts {ts} comes after ts or watermark {bound}", at)
        bound = ts if bound is None else max(bound, ts)
        values: dict[str, Any] = {}
        for fname, ftype in fields:
            raw_value = _field(obj, fname, at)
            values[fname] = (expect_int(raw_value, f"{at}.{fname}") if ftype == "int"
                             else _string(raw_value, f"{at}.{fname}"))
        parsed.append(ScenarioTuple(ts, values))
    return tuple(parsed)


def _string(value: Any, where: str) -> str:
    """A JSON string, possibly empty (an empty text)."""
    return expect_str(value, where, empty=True)


def _field(obj: Mapping[str, Any], name: str, where: str) -> Any:
    if name not in obj:
        raise InputError(f"missing field {name!r}", where)
    return obj[name]


def _parse_reconfigurations(value: Any) -> tuple[Reconfiguration, ...]:
    result: list[Reconfiguration] = []
    for index, raw in enumerate(expect_list(value, "reconfigurations")):
        at = f"reconfigurations[{index}]"
        obj = expect_object(raw, at)
        reject_unknown_keys(obj, {"watermark", "parallelism"}, at)
        mark = _time(_field(obj, "watermark", at), f"{at}.watermark")
        size = _positive(_field(obj, "parallelism", at), f"{at}.parallelism")
        if result and mark <= result[-1].watermark:
            raise InputError("reconfiguration watermarks must be strictly increasing", at)
        result.append(Reconfiguration(mark, size))
    return tuple(result)


def _parse_params(desc: OperatorDescription, value: Any) -> Mapping[str, Any]:
    obj = expect_object(value, "params")
    if obj and not desc.params:
        raise InputError(f"operator {desc.name!r} takes no params, got {cut(str(sorted(obj)))}",
                         "params")
    reject_unknown_keys(obj, set(desc.params), "params")
    params: dict[str, Any] = {}
    if desc.name == "paircount":
        level = expect_str(obj.get("duplication", "low"), "params.duplication")
        if level not in PAIR_DISTANCE:
            raise InputError(f"duplication must be one of {list(PAIR_DISTANCE)}, got "
                             f"{cut(repr(level))}",
                             "params.duplication")
        params["duplication"] = level
    if "keys" in desc.params:
        params["keys"] = _positive(obj.get("keys", 8 if desc.name == "scalejoin" else 1),
                                   "params.keys")
    if "band" in desc.params:
        band = expect_int(obj.get("band", 10), "params.band")
        if band < 0:
            raise InputError(f"must be >= 0, got {band}", "params.band")
        params["band"] = band
    return params


def sort_output(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The canonical order of ``--json`` output rows: (ts, key, canonical JSON of value)."""
    return sorted(rows, key=lambda r: (r["ts"], r["key"], json.dumps(r["value"], sort_keys=True)))
