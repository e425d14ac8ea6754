"""Simplifying moves over a Fries scenario's JSON, for :func:`conformance.core.shrink.shrink`.

Most aggressive first: keep one reconfiguration, drop a reconfiguration or one of its
operators, halve the source tuples, drop a tuple, reset a timing hook, lower parallelism,
remove a sink or bypass an inner operator, then make numbers small. Every candidate is
re-validated with :func:`spec.fries.scenario.scenario_from_json` and dropped if invalid, so a
move may be sloppy (e.g. leave ``at`` beyond the last tuple) without producing garbage.
The result is a scenario no single move simplifies while it still fails: 1-minimal.
"""

from __future__ import annotations

import copy
import json
from typing import Any, Iterator

from spec.errors import InputError
from spec.fries.scenario import scenario_from_json

Json = dict[str, Any]


def candidates(value: Json) -> Iterator[Json]:
    """Valid simplifications of ``value``, most aggressive first, no duplicates."""
    seen = {_key(value)}
    for move in (_reconfiguration_moves, _source_moves, timing_moves, _parallelism_moves,
                 _operator_moves, _number_moves):
        for candidate in move(value):
            key = _key(candidate)
            if key in seen:
                continue
            seen.add(key)
            try:
                scenario_from_json(candidate)
            except InputError:
                continue
            yield candidate


def size(value: Json) -> int:
    """A rough size used in reports: tuples + reconfigured operators + operators + hooks."""
    tuples = sum(len(v) for v in value.get("sources", {}).values())
    updates = sum(len(r["updates"]) for r in value.get("reconfigurations", []))
    return tuples + updates + len(value["dataflow"]["operators"]) + len(value.get("timing", {}))


def _key(value: Json) -> str:
    return json.dumps(value, sort_keys=True)


Path = tuple[str | int, ...]


def _parent(value: Any, path: Path) -> Any:
    for step in path[:-1]:
        value = value[step]
    return value


def set_at(value: Json, path: Path, new: Any) -> Json:
    """A copy of ``value`` with the item at ``path`` replaced by ``new``."""
    clone = copy.deepcopy(value)
    _parent(clone, path)[path[-1]] = new
    return clone


def delete_at(value: Json, path: Path) -> Json:
    """A copy of ``value`` without the item at ``path`` (a list index or an object key)."""
    clone = copy.deepcopy(value)
    container = _parent(clone, path)
    container.pop(path[-1])
    return clone


def _reconfiguration_moves(value: Json) -> Iterator[Json]:
    requests = value.get("reconfigurations", [])
    if len(requests) > 1:
        for request in requests:
            yield set_at(value, ("reconfigurations",), [request])
    for i in range(len(requests)):
        yield delete_at(value, ("reconfigurations", i))
    for i, request in enumerate(requests):
        if len(request["updates"]) > 1:
            for name in request["updates"]:
                yield delete_at(value, ("reconfigurations", i, "updates", name))
        for name, update in request["updates"].items():
            if update.get("state", {}) not in ({}, {"mul": 1, "add": 0}):
                yield set_at(value, ("reconfigurations", i, "updates", name, "state"), {"mul": 1, "add": 0})


def _source_moves(value: Json) -> Iterator[Json]:
    # un-stretch: keep the first half of every source and halve every request point and
    # restart point with it (undoes conformance.fries.cases.streams.stretch in one step)
    if any(len(tuples) >= 2 for tuples in value["sources"].values()):
        half = copy.deepcopy(value)
        for name, tuples in half["sources"].items():
            half["sources"][name] = tuples[: (len(tuples) + 1) // 2]
        for request in half.get("reconfigurations", []):
            request["at"] //= 2
        timing = half.get("timing", {})
        if timing.get("restarts"):
            timing["restarts"] = sorted({max(1, n // 2) for n in timing["restarts"]})
        yield half
    for name, tuples in value["sources"].items():
        n = len(tuples)
        if n >= 2:
            yield set_at(value, ("sources", name), tuples[: n // 2])
            yield set_at(value, ("sources", name), tuples[n // 2:])
        for i in range(n):
            yield delete_at(value, ("sources", name, i))


def timing_moves(value: Json) -> Iterator[Json]:
    timing = value.get("timing", {})
    if timing:
        yield delete_at(value, ("timing",))
    for field in timing:
        yield delete_at(value, ("timing", field))
    for i in range(len(timing.get("restarts", []))):
        yield delete_at(value, ("timing", "restarts", i))
    for field in ("stragglers", "operator_cost"):
        for name in timing.get(field, {}):
            yield delete_at(value, ("timing", field, name))


def _parallelism_moves(value: Json) -> Iterator[Json]:
    parallelism = value.get("parallelism", {})
    if parallelism:
        yield delete_at(value, ("parallelism",))
    for name, p in parallelism.items():
        yield delete_at(value, ("parallelism", name))
        if p > 2:
            yield set_at(value, ("parallelism", name), p - 1)


def _operator_moves(value: Json) -> Iterator[Json]:
    operators = value["dataflow"]["operators"]
    edges = value["dataflow"]["edges"]
    for op in operators:
        name = op["name"]
        if op["kind"] == "source":
            if not value["sources"].get(name) and len([o for o in operators if o["kind"] == "source"]) > 1:
                yield _remove_operator(value, name, [])
            continue
        parents = [a for a, b in edges if b == name]
        children = [b for a, b in edges if a == name]
        bypass = [[p, c] for p in parents for c in children if [p, c] not in edges]
        yield _remove_operator(value, name, bypass)


def _remove_operator(original: Json, name: str, bypass: list[list[str]]) -> Json:
    value = copy.deepcopy(original)
    flow = value["dataflow"]
    flow["operators"] = [op for op in flow["operators"] if op["name"] != name]
    flow["edges"] = [e for e in flow["edges"] if name not in e] + bypass
    value["functions"].pop(name, None)
    value["sources"].pop(name, None)
    value.get("parallelism", {}).pop(name, None)
    timing = value.get("timing", {})
    for field in ("operator_cost", "stragglers"):
        for key in list(timing.get(field, {})):
            if key == name or key.startswith(f"{name}#"):
                timing[field].pop(key)
    for request in value.get("reconfigurations", []):
        request["updates"].pop(name, None)
    value["reconfigurations"] = [r for r in value.get("reconfigurations", []) if r["updates"]]
    return value


def _number_moves(value: Json) -> Iterator[Json]:
    for name, tuples in value["sources"].items():
        for i, item in enumerate(tuples):
            for field in ("key", "value"):
                current = item[field]
                for smaller in dict.fromkeys((0, current // 2, current - 1 if current > 0 else current + 1)):
                    if abs(smaller) < abs(current):
                        yield set_at(value, ("sources", name, i, field), smaller)
    for i, request in enumerate(value.get("reconfigurations", [])):
        at = request["at"]
        for smaller in dict.fromkeys((0, at // 2, at - 1)):
            if 0 <= smaller < at:
                yield set_at(value, ("reconfigurations", i, "at"), smaller)
