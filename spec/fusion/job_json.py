"""The JSON format of a fusion job (Enorm §4.3 inputs of Alg. 1), read by ``streamproof fuse``.

A job file gives what Alg. 1 takes as input: the operators with their kind (Table 1) and
partition attributes ``PA(O)``, the domain size of every attribute (``null`` for unbounded,
which makes ``PA^c`` infinite), and the output rate of every edge::

    {
      "domains":   {"card": 100000, "merchant": 5000, "ts": null},
      "operators": [{"name": "parse",  "kind": "map",         "pa": ["card", "merchant"]},
                    {"name": "score",  "kind": "compute",     "pa": ["card"]},
                    {"name": "merge",  "kind": "consolidate", "pa": []}],
      "edges":     [{"from": "parse", "to": "score", "rate": 1200.0},
                    {"from": "score", "to": "merge", "rate": 40}]
    }

Every field is required except ``domains`` (default: no attributes) and ``edges`` (default:
none); unknown fields are refused, so a typo never silently changes the answer. Operators are
kept in file order, which is the order Alg. 1 scans them in (its tie-breaking depends on it).
Rates must be finite numbers ``>= 0`` whose sum is finite too (the total traffic, and the
percentages computed from it, must be numbers JSON can hold); domain sizes integers from 1 to
:data:`MAX_CARDINALITY` (10^100) or ``null``, and an operator's partition cardinality (the
product of its attributes' domain sizes) at most :data:`MAX_CARDINALITY` as well, so every
``PA^c`` printed is an exact integer of at most 101 digits (a larger domain is, for fusion,
unbounded: write ``null``). Everything else (duplicates, unknown names, cycles) is checked by :class:`Job` itself.
"""

from __future__ import annotations

import math
from typing import Any

from spec.errors import InputError
from spec.fusion.job import Job, Operator, OperatorKind
from spec.jsonio import (
    expect_list,
    expect_object,
    expect_str,
    json_type,
    reject_unknown_keys,
)

KINDS = tuple(kind.value for kind in OperatorKind)
MAX_CARDINALITY = 10**100
"""Largest domain size and operator partition cardinality accepted (module docstring)."""


def _rate(value: Any, where: str) -> float:
    """A finite, non-negative JSON number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise InputError(f"expected a number, got {json_type(value)}", where)
    try:
        rate = float(value)
    except OverflowError:
        raise InputError("rate is too large to be a finite number", where) from None
    if not math.isfinite(rate) or rate < 0:
        raise InputError(f"rate must be a finite number >= 0, got {value!r}", where)
    return rate


def _domain_size(value: Any, where: str) -> int | None:
    """An integer ``>= 1``, or ``None`` for an unbounded attribute."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise InputError(f"expected an integer >= 1 or null, got {json_type(value)}", where)
    if value < 1:
        raise InputError(f"domain size must be >= 1 (or null for unbounded), got {value}", where)
    if value > MAX_CARDINALITY:
        raise InputError(f"domain size must be at most 10^100 (or null for unbounded), got a number of "
                         f"{len(str(value))} digits", where)
    return value


def _operator(value: Any, where: str) -> Operator:
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"name", "kind", "pa"}, where)
    for key in ("name", "kind", "pa"):
        if key not in obj:
            raise InputError(f"missing field {key!r}", where)
    name = expect_str(obj["name"], f"{where}.name")
    kind = obj["kind"]
    if kind not in KINDS:
        raise InputError(f"unknown operator kind {kind!r} (expected one of {list(KINDS)})",
                         f"{where}.kind")
    attributes: list[str] = []
    for position, attribute in enumerate(expect_list(obj["pa"], f"{where}.pa")):
        attributes.append(expect_str(attribute, f"{where}.pa[{position}]"))
    if len(set(attributes)) != len(attributes):
        raise InputError("an attribute is listed twice", f"{where}.pa")
    return Operator(name, OperatorKind(kind), frozenset(attributes))


def _edge(value: Any, where: str) -> tuple[str, str, float]:
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"from", "to", "rate"}, where)
    for key in ("from", "to", "rate"):
        if key not in obj:
            raise InputError(f"missing field {key!r}", where)
    return (expect_str(obj["from"], f"{where}.from"), expect_str(obj["to"], f"{where}.to"),
            _rate(obj["rate"], f"{where}.rate"))


def job_from_json(value: Any, where: str) -> Job:
    """The validated :class:`Job` a parsed job file describes; :class:`InputError` naming the
    file (``where``) and the field on any problem."""
    obj = expect_object(value, where)
    reject_unknown_keys(obj, {"domains", "operators", "edges"}, where)
    if "operators" not in obj:
        raise InputError("missing field 'operators'", where)
    domains = {
        attribute: _domain_size(size, f"{where}: domains.{attribute}")
        for attribute, size in expect_object(obj.get("domains", {}), f"{where}: domains").items()
    }
    operators = tuple(
        _operator(op, f"{where}: operators[{k}]")
        for k, op in enumerate(expect_list(obj["operators"], f"{where}: operators"))
    )
    edges = tuple(
        _edge(edge, f"{where}: edges[{k}]")
        for k, edge in enumerate(expect_list(obj.get("edges", []), f"{where}: edges"))
    )
    if not math.isfinite(sum(rate for _, _, rate in edges)):  # as Job.total_traffic adds them
        raise InputError("the edges' rates sum to more than the largest finite number (about 1.8e308)",
                         f"{where}: edges")
    try:
        job = Job(operators, domains, edges)
    except InputError as error:
        raise error.located(where) from None
    for k, op in enumerate(operators):
        width = job.cardinality(op.pa)
        if width != math.inf and width > MAX_CARDINALITY:  # exact int comparison, no float overflow
            raise InputError("partition cardinality (the product of the attributes' domain sizes) is above "
                             "10^100; make an attribute unbounded (null)", f"{where}: operators[{k}]")
    return job


def job_to_json(job: Job) -> dict[str, Any]:
    """The job as its file format (``job_from_json(job_to_json(j))`` equals ``j``)."""
    return {
        "domains": dict(job.domains),
        "operators": [
            {"name": op.name, "kind": op.kind.value, "pa": sorted(op.pa)} for op in job.operators
        ],
        "edges": [{"from": src, "to": dst, "rate": rate} for src, dst, rate in job.edges],
    }
