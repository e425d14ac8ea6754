"""The shapes of a program's states and events, and symbolic values of those shapes.

A DGS program gives no types, only code and an ``events()`` strategy. We sample it: reachable
states (by the checker's own generator, :func:`reference.dgs.domain.draw_reachable`) and
events, and generalise the samples into a *shape*:

* ``int`` - a symbolic integer (any integer), ``bool`` - a symbolic Boolean;
* ``const`` - the same value in every sample (e.g. the 0 payload of a barrier, ``None``);
* ``enum`` - one of a few non-numeric values seen (e.g. user names); enumerated, not symbolic;
* ``tuple`` of shapes (fixed length), ``dict`` over the union of the keys seen, each key
  present or not (symbolic) with a value of the key's shape.

"For all states" in a proof therefore means "for all states of this shape", and the shape is
printed with the result. Anything else (lists, sets, floats, mixtures) has no shape: the
condition is then "not provable symbolically" and is tested on examples instead.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from proofs.dgs.symbolic import SymBool, SymDict, SymInt
from reference.dgs.domain import draw_reachable
from spec.dgs.program import Program, Tag

MAX_ENUM = 6


@dataclass(frozen=True)
class Shape:
    """A generalised value: ``kind`` is int, bool, const, enum, tuple or dict; ``items``
    holds the constant / enumerated values / element shapes / (key, shape) pairs."""

    kind: str
    items: tuple[Any, ...] = ()

    def describe(self) -> str:
        """The shape in words, e.g. ``dict[{0, 1} -> int]``."""
        if self.kind in ("int", "bool"):
            return self.kind
        if self.kind == "const":
            return repr(self.items[0])
        if self.kind == "enum":
            return "one of " + "|".join(repr(v) for v in self.items)
        if self.kind == "tuple":
            return "(" + ", ".join(s.describe() for s in self.items) + ")"
        keys = ", ".join(repr(k) for k, _ in self.items)
        values = {s.describe() for _, s in self.items}
        value = values.pop() if len(values) == 1 else "mixed"
        return f"dict[{{{keys}}} -> {value}, each key present or not]"


def generalize(samples: list[Any]) -> Shape | None:
    """The shape of ``samples`` (non-empty), or None when it has none."""
    first = samples[0]
    if all(isinstance(v, bool) for v in samples):
        return Shape("const", (first,)) if all(v == first for v in samples) else Shape("bool")
    if all(isinstance(v, int) and not isinstance(v, bool) for v in samples):
        return Shape("const", (first,)) if all(v == first for v in samples) else Shape("int")
    if all(isinstance(v, tuple) and len(v) == len(first) for v in samples):
        parts = [generalize([v[i] for v in samples]) for i in range(len(first))]
        if any(p is None for p in parts):
            return None
        return Shape("tuple", tuple(p for p in parts if p is not None))
    if all(isinstance(v, dict) for v in samples):
        keys: dict[Any, list[Any]] = {}
        for v in samples:
            for k, x in v.items():
                keys.setdefault(k, []).append(x)
        entries = [(k, generalize(xs)) for k, xs in sorted(keys.items(), key=lambda kv: repr(kv[0]))]
        if any(shape is None for _, shape in entries):
            return None
        return Shape("dict", tuple(entries))
    if all(isinstance(v, (str, type(None))) for v in samples):
        distinct = sorted(set(samples), key=repr)
        if len(distinct) == 1:
            return Shape("const", (first,))
        return Shape("enum", tuple(distinct)) if len(distinct) <= MAX_ENUM else None
    return None


def instances(shape: Shape, name: str) -> list[Any]:
    """Symbolic values of ``shape`` (fresh variables); one per combination of enumerated
    leaves (a single value when the shape has no ``enum``)."""
    if shape.kind == "int":
        return [SymInt.fresh(name)]
    if shape.kind == "bool":
        return [SymBool.fresh(name)]
    if shape.kind == "const":
        return [shape.items[0]]
    if shape.kind == "enum":
        return list(shape.items)
    if shape.kind == "tuple":
        options = [instances(s, f"{name}.{i}") for i, s in enumerate(shape.items)]
        return [tuple(combo) for combo in itertools.product(*options)]
    results = []
    keyed = [(k, instances(s, f"{name}[{k!r}]")) for k, s in shape.items]
    for combo in itertools.product(*[vals for _, vals in keyed]):
        present = {k: SymBool.fresh(f"{name}[{k!r}]?") for k, _ in keyed}
        results.append(SymDict(present, {k: v for (k, _), v in zip(keyed, combo)}))
    return results


@dataclass(frozen=True)
class Samples:
    """Sampled reachable states per state type and events per tag."""

    states: dict[str, list[Any]]
    events: dict[Tag, list[Any]]


def sample(program: Program, *, examples: int = 200, seed: int = 0) -> Samples:
    """Reachable wires (every wire of every sampled history) and events, drawn with the
    checker's generators."""
    states: dict[str, list[Any]] = {}
    events: dict[Tag, list[Any]] = {}

    @hypothesis_seed(seed)
    @settings(max_examples=examples, database=None, deadline=None,
              suppress_health_check=list(HealthCheck))
    @given(st.data())
    def run(data: st.DataObject) -> None:
        _, wire = draw_reachable(data.draw, program)
        states.setdefault(wire.state_type, []).append(wire.state)
        for event in data.draw(st.lists(program.events(), min_size=1, max_size=5)):
            events.setdefault(program.tag(event), []).append(event)

    run()
    states.setdefault(program.initial, []).append(program.init())
    _add_forked_states(program, states, events)
    return Samples(states, events)


def _add_forked_states(program: Program, states: dict[str, list[Any]],
                       events: dict[Tag, list[Any]]) -> None:
    """States of the child types of forks (they only occur inside fork/join blocks): fork
    sampled states with empty predicates, then update them with sampled events of the child
    type's predicate; repeated so forks of child types are covered too."""
    for _ in range(len(program.state_types)):
        for fork in program.forks.values():
            for state in list(states.get(fork.source, []))[:50]:
                left, right = program.fork(fork.name, state, frozenset(), frozenset())
                for child, value in ((fork.left, left), (fork.right, right)):
                    bucket = states.setdefault(child, [])
                    bucket.append(value)
                    st_type = program.state_types[child]
                    for tag, evs in events.items():
                        if tag in st_type.pred:
                            for event in evs[:3]:
                                bucket.append(program.update(child, value, event))


class EventTemplates:
    """Fresh symbolic events per tag. A tag whose generalised event loses its tag (the tag
    function reads a payload) is enumerated from its samples instead; ``concrete_tags``
    lists those (a proof covers only their sampled events)."""

    def __init__(self, program: Program, samples: dict[Tag, list[Any]]) -> None:
        self.shapes: dict[Tag, Shape] = {}
        self.enumerated: dict[Tag, list[Any]] = {}
        for tag, events in samples.items():
            shape = generalize(events)
            if shape is not None and all(_keeps_tag(program, e, tag) for e in instances(shape, "probe")):
                self.shapes[tag] = shape
            else:
                self.enumerated[tag] = _distinct(events)[:MAX_ENUM]

    @property
    def tags(self) -> list[Tag]:
        """Every tag with at least one event."""
        return sorted([*self.shapes, *self.enumerated], key=repr)

    def fresh(self, tag: Tag, name: str) -> list[Any]:
        """The events of ``tag`` to consider, with fresh symbolic payloads."""
        if tag in self.shapes:
            return instances(self.shapes[tag], name)
        return list(self.enumerated.get(tag, []))

    def describe(self) -> str:
        """Which payloads are symbolic, in words."""
        parts = [f"{t!r}: {s.describe()}" for t, s in sorted(self.shapes.items(), key=lambda kv: repr(kv[0]))]
        parts += [f"{t!r}: sampled values only" for t in sorted(self.enumerated, key=repr)]
        return "; ".join(parts)


def _distinct(values: list[Any]) -> list[Any]:
    kept: list[Any] = []
    for value in values:
        if all(value != other for other in kept):
            kept.append(value)
    return sorted(kept, key=repr)


def _keeps_tag(program: Program, event: Any, tag: Tag) -> bool:
    try:
        same = program.tag_fn(event) == tag
    except Exception:  # noqa: BLE001 - the tag function cannot take symbolic payloads
        return False
    return isinstance(same, bool) and same
