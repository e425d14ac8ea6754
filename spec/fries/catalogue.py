"""The closed function catalogue of reconfiguration scenarios: what one operator does with one
tuple (Fries §2.1: f_O(t, s) -> (outputs, s')), and at end of input (§7.1).

Every executor (the spec's serial execution, the reference simulator, the Spark executor)
calls :func:`step` and :func:`flush` from here, so they compute exactly the same thing per
tuple; they differ only in *which tuples* each object processes, *in which order* and *with
which function version* - which is what the consistency definitions judge
(:mod:`spec.fries.serializability`, :mod:`spec.fries.consistency`).

Functions (JSON ``{"op": ..., <integer params>}``):

* ``map``     {mul, add}  one-to-one: emit (key, mul*value + add)
* ``filter``  {mod, rem}  one-to-one: emit (key, value) iff value % mod == rem
* ``fanout``  {copies}    one-to-many: emit (key, value + i) for i < copies
* ``replicate``           replicate: emit (key, value) once on every out edge
* ``sum``     {mul, add}  blocking: nothing per tuple; at end of input (key, mul*S + add)
* ``fold``    {mul}       **order-sensitive**, one-to-one: S' = (mul*S + value) mod M, emit (key, S')
* ``digest``  {mul, add}  **order-sensitive**, blocking: S' = (mul*S + value) mod M per tuple;
  at end of input (key, S + add)

``S`` is the key's state at the operator (0 before its first tuple), ``M`` = :data:`MODULUS`
(a prime, so the affine fold x -> mul*x + v is a bijection of the residues when mul != 0 and
two different orders of two different values give different states whenever mul != 1).

State: every non-source operator keeps one integer per key. ``map``, ``filter``, ``fanout``,
``replicate`` and ``sum`` add each input value to it (a commutative sum: the order of data
operations never matters, which is why Fries Def. 4.6 can let data operations commute).
``fold`` and ``digest`` update it by the affine fold, which does *not* commute, and ``fold``
emits the new state with every output: an object that processes its input in another order
(e.g. a tuple before one sent earlier on the same channel) emits other values. A state
transformation ``{"mul": a, "add": b}`` (T_O of Def. 2.1) maps each existing key's state s to
a*s + b, whatever the function.

Routing: an operator with children c_0..c_{n-1} sends an output with key k to c_{k mod n};
the i-th copy of ``fanout`` goes to c_{(k+i) mod n}; ``replicate`` sends to every child; with
no children the operator is a sink and the receiver is ``""``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from spec.fries.dataflow import OperatorKind

#: The modulus of the order-sensitive folds (a prime).
MODULUS = 1_000_003

#: Function ops allowed for each operator kind.
OPS_FOR_KIND: Mapping[OperatorKind, frozenset[str]] = {
    OperatorKind.ONE_TO_ONE: frozenset({"map", "filter", "fold"}),
    OperatorKind.ONE_TO_MANY: frozenset({"fanout", "map", "filter", "fold"}),
    OperatorKind.REPLICATE: frozenset({"replicate"}),
    OperatorKind.BLOCKING: frozenset({"sum", "digest"}),
}

#: The integer parameters of each op, in JSON order.
PARAMS: Mapping[str, tuple[str, ...]] = {
    "map": ("mul", "add"),
    "filter": ("mod", "rem"),
    "fanout": ("copies",),
    "replicate": (),
    "sum": ("mul", "add"),
    "fold": ("mul",),
    "digest": ("mul", "add"),
}

#: Ops whose state update does not commute (see the module docstring).
ORDER_SENSITIVE_OPS = frozenset({"fold", "digest"})


@dataclass(frozen=True)
class Function:
    """One entry of the function catalogue (see the module docstring)."""

    op: str
    params: tuple[tuple[str, int], ...] = ()

    def param(self, name: str) -> int:
        """The integer parameter ``name``."""
        return dict(self.params)[name]

    def to_json(self) -> dict[str, Any]:
        """``{"op": ..., <params>}``."""
        return {"op": self.op, **dict(self.params)}


@dataclass(frozen=True)
class StateTransform:
    """T_O of Fries Def. 2.1 in the catalogue: s -> mul*s + add for every key's state."""

    mul: int = 1
    add: int = 0

    def apply(self, state: int) -> int:
        """The transformed state."""
        return self.mul * state + self.add


def order_sensitive(function: Function) -> bool:
    """Does the order in which ``function`` processes its input change its state or outputs?"""
    return function.op in ORDER_SENSITIVE_OPS


def emit(function: Function, key: int, value: int, children: Sequence[str]) -> list[tuple[str, int, int]]:
    """What a *stateless* catalogue function emits for one input tuple, as (receiving child,
    key, value) triples (receiver ``""`` at a sink). Blocking ops emit nothing here; ``fold``
    emits its new state, so use :func:`step` for it."""
    outputs: list[tuple[int, int]] = []
    if function.op == "map":
        outputs = [(key, function.param("mul") * value + function.param("add"))]
    elif function.op == "filter":
        keep = value % function.param("mod") == function.param("rem")
        outputs = [(key, value)] if keep else []
    elif function.op == "fanout":
        outputs = [(key, value + i) for i in range(function.param("copies"))]
    elif function.op == "replicate":
        if not children:
            return [("", key, value)]
        return [(child, key, value) for child in children]
    elif function.op in ("sum", "digest", "fold"):
        return []
    if not children:
        return [("", k, v) for k, v in outputs]
    n = len(children)
    if function.op == "fanout":
        return [(children[(k + i) % n], k, v) for i, (k, v) in enumerate(outputs)]
    return [(children[k % n], k, v) for k, v in outputs]


def step(function: Function, state: int | None, key: int, value: int,
         children: Sequence[str]) -> tuple[int, list[tuple[str, int, int]]]:
    """Process one input tuple: the key's new state and what is emitted (module docstring).
    ``state`` is None before the key's first tuple at this operator."""
    previous = 0 if state is None else state
    if function.op in ORDER_SENSITIVE_OPS:
        new_state = (function.param("mul") * previous + value) % MODULUS
    else:
        new_state = previous + value
    if function.op == "fold":
        return new_state, [(children[key % len(children)] if children else "", key, new_state)]
    return new_state, emit(function, key, value, children)


def flush(function: Function, state: int | None, key: int, children: Sequence[str]) -> list[tuple[str, int, int]]:
    """End of input (§7.1) for one key of a blocking operator: ``sum`` emits mul*S + add,
    ``digest`` S + add, to ``children[key mod n]`` (``""`` at a sink); other ops nothing."""
    current = 0 if state is None else state
    if function.op == "sum":
        value = function.param("mul") * current + function.param("add")
    elif function.op == "digest":
        value = current + function.param("add")
    else:
        return []
    return [(children[key % len(children)] if children else "", key, value)]
