"""The ``live-typed`` mode of :mod:`conformance.fries.engines.live`: a Fries scenario whose keys
and values reach the live front end as nested Spark types, of mixed kinds, and reach every
operator in the documented Python forms (``spark_impl.values``, docs/production/types.md).

What bit users: a job whose input column was a nested struct got a ``list`` where the docs say
a tuple, used it as a key and died; the batch-suite cases never saw it because they feed Python
values in memory. Here the integers of a catalogue scenario are *encoded* into such values,
written as JSON into the query's input files and read with a nested schema (:data:`SCHEMA`), so
they go through the front end's decoding, its input log (``to_json`` / ``from_json``) and,
after the case's driver crash, the log's replay:

* **keys** (column ``key struct<promotion: string, k: bigint, i: bigint>``): the scenario's key
  ``k`` becomes ``None`` (a null struct) when ``k`` is 5 - the residue mod 60 of
  ``spark_impl.keys.stable_hash(None)``, so ``None`` routes like ``k`` - and a tuple
  ``(promotion, k, i)`` otherwise (``promotion`` ``None`` for odd ``k``: a null inside a key);
  ``i`` is the first index whose stable hash routes like ``k`` (``stable_hash mod 60 == k mod
  60``, every worker count 1-5), so objects, placement and the schedule are the scenario's.
  :func:`typed_case` renames the scenario's key 0 to 5, so one object holds ``None`` beside
  tuples (the organic and promotion clicks of a real job);
* **values** (column ``value struct<n, amount decimal(12,2), at timestamp, day date, tags
  array<string>, attrs map<string,bigint>, origin struct<site: string, rank: int>>``): the
  integer ``v`` becomes the tuple of a Decimal, a UTC-aware datetime, a date, a tuple, sorted
  ``(key, value)`` pairs and a nested tuple or ``None`` (:func:`encode_value`);
* every operator runs :class:`TypedLogic`: it checks that the key and value it is handed are
  *exactly* the documented forms of an integer (types included: a ``list`` for a tuple, a float
  for a Decimal, a naive datetime are each a ``TypeError`` naming what arrived - the run fails
  the ``engine`` oracle), runs the catalogue function on the integers and emits encoded keys and
  values, so downstream operators, the states and the outputs hold them too.

The outputs and states read back are decoded to the integers (:func:`decoded`) and judged
against the reference running the plain scenario, by every oracle of the suite.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, replace
from decimal import Decimal
from functools import lru_cache
from typing import Any

from spec.fries.scenario import Scenario, SourceTuple

import spark_impl.keys as spark_keys
from spark_impl.reconfig import ListSource, PlannedRequest, Request, Update

SCHEMA = ("key struct<promotion: string, k: bigint, i: bigint>, "
          "value struct<n: bigint, amount: decimal(12,2), at: timestamp, day: date, tags: array<string>, "
          "attrs: map<string,bigint>, origin: struct<site: string, rank: int>>")
"""The input files' schema (module docstring)."""

PERIOD = 60
"""Routing period the encoded keys honour (lcm of the worker counts 1..5)."""

NONE_RESIDUE = spark_keys.stable_hash(None) % PERIOD
"""The scenario key that becomes ``None`` (routed like it: ``stable_hash(None) mod 60``)."""

_EPOCH = dt.datetime(2026, 1, 1, tzinfo=dt.timezone.utc)
_DAY = dt.date(2026, 1, 1)


def typed_case(scenario: Scenario) -> Scenario:
    """``scenario`` with source key 0 renamed to :data:`NONE_RESIDUE` (the reference runs the
    renamed scenario too): the generators' keys are 0-4, so one key of the case is ``None``."""
    def renamed(t: SourceTuple) -> SourceTuple:
        return replace(t, key=NONE_RESIDUE) if t.key == 0 else t

    return replace(scenario, sources={name: tuple(renamed(t) for t in tuples)
                                      for name, tuples in scenario.sources.items()})


@lru_cache(maxsize=4096)
def encode_key(k: int) -> Any:
    """The documented form of the key standing for integer ``k`` (module docstring)."""
    if k == NONE_RESIDUE:
        return None
    promotion = None if k % 2 else f"c{k}"
    i = 0
    while spark_keys.stable_hash((promotion, k, i)) % PERIOD != k % PERIOD:
        i += 1
    return promotion, k, i


def encode_value(v: int) -> tuple[Any, ...]:
    """The documented form of the value standing for integer ``v`` (module docstring)."""
    return (v, Decimal(v) + Decimal("0.25"), _EPOCH + dt.timedelta(seconds=v), _DAY + dt.timedelta(days=v % 28),
            tuple(f"t{j}" for j in range(v % 3)), (("v", v), ("w", v % 2)), None if v % 2 else ("web", v % 5))


def key_json(k: int) -> Any:
    """The JSON of key ``k`` in an input file (read with :data:`SCHEMA`)."""
    key = encode_key(k)
    return None if key is None else {"promotion": key[0], "k": key[1], "i": key[2]}


def value_json(v: int) -> dict[str, Any]:
    """The JSON of value ``v`` in an input file (read with :data:`SCHEMA`)."""
    n, amount, at, day, tags, attrs, origin = encode_value(v)
    return {"n": n, "amount": float(amount), "at": at.strftime("%Y-%m-%dT%H:%M:%SZ"), "day": day.isoformat(),
            "tags": list(tags), "attrs": dict(attrs),
            "origin": None if origin is None else {"site": origin[0], "rank": origin[1]}}


def same(got: Any, expected: Any) -> bool:
    """``got`` equals ``expected`` with the same type at every level (``1 == 1.0 == True`` and
    ``Decimal("1.25") == 1.25`` in Python; a timestamp must be UTC-aware)."""
    if type(got) is not type(expected):
        return False
    if isinstance(expected, tuple):
        return len(got) == len(expected) and all(same(g, e) for g, e in zip(got, expected))
    if isinstance(expected, dt.datetime):
        return bool(got == expected and got.utcoffset() == dt.timedelta(0))
    return bool(got == expected)


def decode_key(key: Any) -> int:
    """The integer of a documented key form; TypeError when ``key`` is not exactly one."""
    k = NONE_RESIDUE if key is None else key[1] if isinstance(key, tuple) and len(key) == 3 else None
    if not isinstance(k, int) or not same(key, encode_key(k)):
        raise TypeError(f"key {key!r} ({type(key).__name__}) reached the operator, not a documented key form "
                        f"(None or a tuple (promotion, k, i))")
    return k


def decode_value(value: Any) -> int:
    """The integer of a documented value form; TypeError naming what arrived otherwise."""
    v = value[0] if isinstance(value, tuple) and value else None
    if not isinstance(v, int) or not same(value, encode_value(v)):
        shown = tuple(type(part).__name__ for part in value) if isinstance(value, (tuple, list)) else ()
        raise TypeError(f"value {value!r} ({type(value).__name__} of {shown}) reached the operator; the documented "
                        "form of the struct is a tuple of (int, Decimal, UTC datetime, date, tuple, sorted pairs, "
                        "tuple or None)")
    return v


@dataclass(frozen=True)
class TypedLogic:
    """Operator logic over encoded keys and values: ``inner`` (the catalogue's) computes on
    the integers; what arrives must be exactly the documented forms (module docstring)."""

    inner: Any

    def process(self, state: Any, key: Any, value: Any) -> tuple[Any, list[tuple[str, Any, Any]]]:
        """``inner.process`` on the decoded key and value; emitted keys and values encoded."""
        k, v = decode_key(key), decode_value(value)
        new_state, emitted = self.inner.process(state, k, v)
        return new_state, [(r, encode_key(k), encode_value(v)) for r, k, v in emitted]

    def flush(self, state: Any, key: Any) -> list[tuple[str, Any, Any]]:
        """``inner.flush`` on the decoded key; emitted keys and values encoded."""
        return [(r, encode_key(k), encode_value(v)) for r, k, v in self.inner.flush(state, decode_key(key))]


def typed_job(job: Any) -> Any:
    """``job`` (a scenario's executor job) with :class:`TypedLogic` on every operator and in
    every planned update, and its source's keys and values encoded."""
    planned = tuple(PlannedRequest(p.at, Request({op: Update(TypedLogic(u.logic), u.transform)
                                                  for op, u in p.request.updates.items()})) for p in job.planned)
    tuples = tuple((src, txn, encode_key(int(key)), encode_value(int(value)))
                   for src, txn, key, value in map(job.source.get, range(job.source.count())))
    return replace(job, logic={op: TypedLogic(inner) for op, inner in job.logic.items()}, planned=planned,
                   source=ListSource(tuples))


def decoded(result: Any) -> Any:
    """A ``RunResult`` of a typed job with its outputs' keys and values and its states' keys
    decoded to the scenario's integers (TypeError when one is not a documented form)."""
    return replace(result, outputs=[(op, txn, decode_key(k), decode_value(v)) for op, txn, k, v in result.outputs],
                   states={(op, decode_key(k)): v for (op, k), v in result.states.items()})


TYPED = 4
"""Random live cases run ``live-typed`` (:func:`typed_section`)."""


def typed_section(drawn: list[Scenario]) -> tuple[list[Scenario], list[Scenario]]:
    """Of the live suite's random cases, the ``live-typed`` ones (at most :data:`TYPED`, at most
    half; those with a driver crash first, so the input log's replay of typed values is run;
    as :func:`typed_case`) and the rest, in their order: the suite's case count is unchanged."""
    count = min(TYPED, (len(drawn) + 1) // 2)
    picked = set(sorted(range(len(drawn)), key=lambda i: (not drawn[i].timing.restarts, i))[:count])
    return ([typed_case(s) for i, s in enumerate(drawn) if i in picked],
            [s for i, s in enumerate(drawn) if i not in picked])
