"""The sequential spec and wire-diagram semantics (DGS Def. 2.2, Theorem 2.4, §3.5).

Sequential spec (§3.5): ``spec(u)`` processes the events of ``u`` in order with ``update``
and ``out`` of ``State_0`` from ``init`` - no fork, no join.

Wire diagrams (Def. 2.2). A *wire* is ``(State_i, s, pred)`` with ``pred`` a set of tags that
implies ``pred_i``. A diagram is a sequence of steps run left to right on a wire (case 3,
sequential composition; the empty sequence is case 1):

* :class:`Update` ``e`` (case 2): ``e``'s tag must satisfy the wire's predicate;
* :class:`Block` (case 4): fork the wire with ``fork(s, pred1, pred2)`` (``pred1``, ``pred2``
  independent, each implying ``pred`` and the child type's predicate), run the ``left`` and
  ``right`` sub-diagrams on the two wires, join them back with the matching join.

:func:`run_diagram` returns the end wire, the output and the input *per branch*: Def. 2.2 lets
the input ``u`` of a block be any interleaving of its branches' inputs (and the output any
interleaving of theirs). Theorem 2.4 says that, for a consistent program, the multiset of the
output equals the multiset of ``spec(u)`` for *every* such interleaving ``u``;
``tests/reference/dgs/test_dgs_semantics.py`` checks this on the shipped examples.

Outputs compare as **multisets** (:func:`multiset_equal`) - "deterministic up to output
reordering" (Thm. 2.4) - of values compared with ``==``, except that a float NaN equals a
float NaN, also inside tuples, lists, sets and dict values (:func:`comparable`): ``NaN != NaN``
would make a program whose ``out`` returns ``float('nan')`` differ from itself, so every
output comparison (``dgs-plan``, ``check-dgs``, the conformance oracles) would blame a
plan for computing exactly what the sequential program computes.
"""

from __future__ import annotations

import math

from collections import Counter
from dataclasses import dataclass
from typing import Any, Iterable, Sequence, Union

from spec.dgs.program import Event, Pred, Program, State, short_repr, tags_text
from spec.errors import InputError


def spec_run(program: Program, events: Iterable[Event]) -> tuple[State, list[Any]]:
    """The sequential implementation: ``(final state, outputs)`` of processing ``events`` in
    order from ``init`` with ``State_0``'s update and out."""
    state = program.init()
    outputs: list[Any] = []
    for event in events:
        program.tag(event)  # validates the tag
        outputs.extend(program.out(program.initial, state, event))
        state = program.update(program.initial, state, event)
    return state, outputs


def spec_output(program: Program, events: Iterable[Event]) -> list[Any]:
    """``spec(u)``: the sequential specification's output list (DGS §3.5)."""
    return spec_run(program, events)[1]


class _NaN:
    """The one value every float NaN is replaced by in :func:`comparable` (equal to itself,
    by identity; hashable)."""

    def __repr__(self) -> str:
        return "nan"


NAN = _NaN()
MAX_DEPTH = 100
"""Containers nested deeper than this are compared as they are (no NaN replacement)."""


def comparable(value: Any, depth: int = 0) -> Any:
    """``value`` with every float NaN replaced by :data:`NAN` inside (exact) tuples, lists,
    sets, frozensets and dict values, so ``==`` holds between equal outputs that hold NaN
    (module docstring). Only built-in types are looked into: no user ``__eq__`` or
    ``__iter__`` runs here."""
    if type(value) is float:
        return NAN if math.isnan(value) else value
    kind = type(value)
    if depth >= MAX_DEPTH or kind not in (tuple, list, set, frozenset, dict):
        return value
    if type(value) is dict:
        return {k: comparable(v, depth + 1) for k, v in value.items()}
    return kind(comparable(v, depth + 1) for v in value)


def outputs_equal(a: Any, b: Any) -> bool:
    """``a == b`` for outputs: NaN equals NaN (:func:`comparable`)."""
    return bool(comparable(a) == comparable(b))


def multiset_equal(a: Sequence[Any], b: Sequence[Any]) -> bool:
    """Equality of ``a`` and ``b`` as multisets, with ``==`` on elements, NaN equal to NaN
    (:func:`comparable`; elements need not be hashable)."""
    if len(a) != len(b):
        return False
    a, b = [comparable(x) for x in a], [comparable(x) for x in b]
    try:
        return Counter(a) == Counter(b)
    except TypeError:
        remaining = list(b)
        for item in a:
            for index, other in enumerate(remaining):
                if item == other:
                    del remaining[index]
                    break
            else:
                return False
        return True


@dataclass(frozen=True)
class Wire:
    """A wire ``(State_i, s, pred)`` (Def. 2.2)."""

    state_type: str
    state: State
    pred: Pred


@dataclass(frozen=True)
class Update:
    """Case 2 of Def. 2.2: process one event on the wire."""

    event: Event


@dataclass(frozen=True)
class Block:
    """Case 4 of Def. 2.2: fork, two parallel sub-diagrams, join."""

    fork: str
    join: str
    left_pred: Pred
    right_pred: Pred
    left: tuple["Step", ...]
    right: tuple["Step", ...]


Step = Union[Update, Block]


@dataclass(frozen=True)
class Branches:
    """The input of one block: its left and its right sub-diagram's inputs."""

    left: list[Any]
    right: list[Any]


@dataclass(frozen=True)
class Run:
    """The result of a diagram: the end wire, its outputs, and its input as a tree: a list of
    events and :class:`Branches`, one per block."""

    end: Wire
    outputs: list[Any]
    inputs: list[Any]


def initial_wire(program: Program) -> Wire:
    """``(State_0, init, true)``: the wire every execution starts from."""
    return Wire(program.initial, program.init(), program.tags)


def check_block(program: Program, wire: Wire, block: Block) -> None:
    """Raise an InputError unless ``block`` is well formed on ``wire`` (Def. 2.2 case 4)."""
    fork = program.forks.get(block.fork)
    join = program.joins.get(block.join)
    if fork is None or join is None:
        raise InputError(f"unknown fork {block.fork!r} or join {block.join!r}")
    if fork.source != wire.state_type or (join.left, join.right, join.target) != (
        fork.left,
        fork.right,
        fork.source,
    ):
        raise InputError(f"fork {fork.name!r} / join {join.name!r} do not match the wire's type")
    for pred, child in ((block.left_pred, fork.left), (block.right_pred, fork.right)):
        if not pred <= wire.pred or not pred <= program.state_types[child].pred:
            raise InputError(f"predicate {tags_text(pred)} does not imply the wire's predicate")
    if not program.independent_sets(block.left_pred, block.right_pred):
        raise InputError("the block's predicates are not independent")


def run_diagram(program: Program, wire: Wire, steps: Sequence[Step]) -> Run:
    """Run a wire diagram (Def. 2.2) from ``wire``; an InputError if it is ill formed."""
    state = wire.state
    outputs: list[Any] = []
    inputs: list[Any] = []
    for step in steps:
        if isinstance(step, Update):
            tag = program.tag(step.event)
            if tag not in wire.pred:
                raise InputError(
                    f"event {short_repr(step.event)} does not satisfy the wire's predicate"
                )
            outputs.extend(program.out(wire.state_type, state, step.event))
            state = program.update(wire.state_type, state, step.event)
            inputs.append(step.event)
        else:
            current = Wire(wire.state_type, state, wire.pred)
            check_block(program, current, step)
            fork = program.forks[step.fork]
            s1, s2 = program.fork(step.fork, state, step.left_pred, step.right_pred)
            left = run_diagram(program, Wire(fork.left, s1, step.left_pred), step.left)
            right = run_diagram(program, Wire(fork.right, s2, step.right_pred), step.right)
            state = program.join(step.join, left.end.state, right.end.state)
            outputs.extend(left.outputs + right.outputs)
            inputs.append(Branches(left.inputs, right.inputs))
    return Run(Wire(wire.state_type, state, wire.pred), outputs, inputs)


def flatten_inputs(inputs: Sequence[Any]) -> list[Event]:
    """One interleaving of a run's input: each block's left input, then its right input."""
    flat: list[Event] = []
    for item in inputs:
        if isinstance(item, Branches):
            flat.extend(flatten_inputs(item.left))
            flat.extend(flatten_inputs(item.right))
        else:
            flat.append(item)
    return flat


def interleave(inputs: Sequence[Any], choices: Iterable[bool]) -> list[Event]:
    """An interleaving of a run's input chosen by ``choices`` (True: take from the left
    branch next). Every interleaving allowed by Def. 2.2 is reachable by some ``choices``."""
    source = iter(choices)
    flat: list[Event] = []
    for item in inputs:
        if isinstance(item, Branches):
            left = interleave(item.left, source)
            right = interleave(item.right, source)
            while left or right:
                take_left = bool(left) and (not right or next(source, True))
                flat.append((left if take_left else right).pop(0))
        else:
            flat.append(item)
    return flat
