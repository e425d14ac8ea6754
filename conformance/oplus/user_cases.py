"""Random inputs for a user-defined O+ operator (``streamproof conformance --operator``).

A case is JSON: ``{"parallelism": p, "items_per_round": k, "inputs": [[{"ts": t, <field>: v,
...}, ...] per input of the operator], "reconfigurations": [{"watermark": w, "parallelism": q}]}``.
Every list is sorted by event time (a scenario's input list; the live run lands ``k`` items of
each list per file, in order). Timestamps sit on the operator's window edges (anchors ``a``,
``a + WA``, ``a + WS - 1``, ``a + WS``, ties), so windows open, expire and slide at their
boundaries. Field values come from the declared fields (:class:`Field`, ``--fields
NAME[:TYPE[?]]``), each type the Python form the live front end gives a column of its Spark
type (``spark_impl.values``, docs/production/types.md):

* ``str`` (StringType): four short strings (keys collide);
* ``int`` (LongType): -5..9;
* ``float`` (DoubleType): finite binary fractions, negative ones, and ones Python and JSON
  write with an exponent (``9.5367431640625e-07``), so the live path's JSON -> double ->
  ``float`` reading is exercised and sums of them are exact in any order; never ``NaN`` (not
  equal to itself, it cannot be a key or a compared output), infinities or ``-0.0`` (``== 0.0``
  but written differently);
* ``bool`` (BooleanType): ``True`` or ``False``;
* a ``?`` after the type (``int?``): the field may be null, ``None`` in about one tuple of
  four (the live front end gives ``None`` for a null field).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from hypothesis import strategies as st

from spec.errors import InputError
from spec.oplus.model import OPlus

FIELD_TYPES = ("str", "int", "float", "bool")
"""The field types ``--fields`` takes (each may be followed by ``?``: nullable)."""

SPARK_TYPES = {"str": "string", "int": "long", "float": "double", "bool": "boolean"}
"""Each field type's Spark column type on the live path (DDL names)."""

_STRINGS = ("a", "b", "c", "dd")
_FLOATS = (0.0, 0.5, -1.25, 2.75, 1024.125, -0.0625, 6.103515625e-05, -9.5367431640625e-07)


@dataclass(frozen=True)
class Field:
    """A stream column of the operator's payload and the kind of value generated for it:
    ``kind`` one of :data:`FIELD_TYPES`, with ``?`` at its end when the field may be null."""

    name: str
    kind: str

    @property
    def base(self) -> str:
        """The type without the ``?``."""
        return self.kind.rstrip("?")

    @property
    def nullable(self) -> bool:
        """May the field be null (``None``)?"""
        return self.kind.endswith("?")

    @property
    def spark_type(self) -> str:
        """The field's Spark column type on the live path (:data:`SPARK_TYPES`)."""
        return SPARK_TYPES[self.base]


def parse_fields(text: str) -> tuple[Field, ...]:
    """``"key,value"`` or ``"key:str,value:int,price:float?,ok:bool"`` (default kind: ``str``
    for ``key``, else ``int``; ``?``: nullable); InputError naming the problem and the field."""
    fields: list[Field] = []
    for part in text.split(","):
        name, colon, kind = part.strip().partition(":")
        kind = kind.strip() if colon else ("str" if name == "key" else "int")
        if not name.isidentifier():
            raise InputError(f"expected NAME[:TYPE] separated by commas, got {part.strip()!r} (a field's NAME is a "
                             "Python identifier)", "--fields")
        if kind.removesuffix("?") not in FIELD_TYPES:
            raise InputError(f"field {name!r}: unknown type {kind!r} (expected one of {', '.join(FIELD_TYPES)}, "
                             "each optionally followed by ? for a nullable field)", "--fields")
        if name in ("job", "source", "ts", "watermark", "end", "seq") or name in {f.name for f in fields}:
            raise InputError(f"field {name!r} is reserved or repeated", "--fields")
        fields.append(Field(name, kind))
    return tuple(fields)


def _value(rng: random.Random, field: Field) -> Any:
    if field.nullable and rng.random() < 0.25:
        return None
    if field.base == "str":
        return rng.choice(_STRINGS)
    if field.base == "float":
        return rng.choice(_FLOATS)
    if field.base == "bool":
        return rng.random() < 0.5
    return rng.randint(-5, 9)


def documented(field: Field, value: Any) -> Any:
    """``value`` of ``field`` as the live front end hands it to the operator: a ``float``
    field's integer (a hand-written saved case's ``3``, which Spark's JSON reader reads into a
    double column as ``3.0``) becomes a ``float``; ``None`` stays ``None``; other values are
    their own documented form."""
    if field.base == "float" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    return value


def build(rng: random.Random, op: OPlus, fields: Sequence[Field], horizon: int = 30) -> dict[str, Any]:
    """One case for ``op`` (module docstring), every choice from ``rng``."""
    wa, ws = op.windows.WA, op.windows.WS
    anchors = [rng.randint(0, horizon) for _ in range(rng.randint(2, 4))]
    stamps = sorted({s for a in anchors for s in (a, a + wa, a + ws - 1, a + ws, (a // wa) * wa + ws) if s >= 0})
    inputs = []
    for _ in range(op.inputs):
        times = sorted(rng.choice(stamps) for _ in range(rng.randint(0 if op.inputs > 1 else 1, 10)))
        inputs.append([{"ts": t, **{f.name: _value(rng, f) for f in fields}} for t in times])
    top = max((item["ts"] for items in inputs for item in items), default=0)
    marks = sorted(rng.sample(range(1, top + 2), min(top + 1, rng.choice((0, 1, 2)))))
    return {"parallelism": rng.randint(1, 4), "items_per_round": rng.randint(1, 4), "inputs": inputs,
            "reconfigurations": [{"watermark": w, "parallelism": rng.randint(1, 4)} for w in marks]}


def operator_cases(op: OPlus, fields: Sequence[Field]) -> st.SearchStrategy[dict[str, Any]]:
    """Cases for ``op`` (a seeded ``Random`` drawn by hypothesis builds each)."""
    return st.randoms(use_true_random=True).map(lambda rng: build(rng, op, fields))


def candidates(case: dict[str, Any]) -> Iterator[dict[str, Any]]:
    """Smaller cases, most aggressive first: no reconfiguration, half or one item less of a
    list, parallelism 1, one item per round."""
    moves: list[dict[str, Any]] = []
    if case["reconfigurations"]:
        moves.append({**case, "reconfigurations": []})
    inputs = case["inputs"]
    for i, items in enumerate(inputs):
        n = len(items)
        smaller = ([items[: n // 2], items[n // 2:]] if n >= 2 else []) + [items[:j] + items[j + 1:] for j in range(n)]
        moves.extend({**case, "inputs": inputs[:i] + [s] + inputs[i + 1:]} for s in smaller)
    if case["parallelism"] > 1:
        moves.append({**case, "parallelism": 1})
    if case["items_per_round"] > 1:
        moves.append({**case, "items_per_round": 1})
    for move in moves:
        yield copy.deepcopy(move)


def size(case: dict[str, Any]) -> int:
    """Tuples and reconfigurations of ``case``."""
    return sum(len(items) for items in case["inputs"]) + len(case["reconfigurations"])
