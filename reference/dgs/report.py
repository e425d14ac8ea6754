"""Counterexamples of C1-C3, in plain words and as JSON.

A counterexample names every ingredient of the violated equation: how the state ``s`` was
reached from ``init`` (the history: updates and fork/join blocks), the fork/join and their
predicates, the events, the intermediate states and both sides. User values need not be JSON:
:func:`to_jsonable` keeps JSON-native values and falls back to ``repr``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Sequence

from spec.dgs.consistency import C1Instance, C2Instance, C3Instance, Evaluation
from spec.dgs.program import Program, short_repr, tags_text
from spec.dgs.semantics import Block, Step, Update


def to_jsonable(value: Any) -> Any:
    """``value`` as JSON-serialisable data: JSON scalars, lists (from lists and tuples),
    objects (non-string keys written with ``repr``), sets as sorted lists; ``repr`` for
    anything else."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else repr(value)
    if isinstance(value, (list, tuple)):
        return [to_jsonable(v) for v in value]
    if isinstance(value, (set, frozenset)):
        return [to_jsonable(v) for v in sorted(value, key=repr)]
    if isinstance(value, dict):
        return {(k if isinstance(k, str) else repr(k)): to_jsonable(v) for k, v in value.items()}
    return repr(value)


def history_json(steps: Sequence[Step]) -> list[Any]:
    """A history as JSON: ``{"update": event}`` and ``{"fork", "join", "pred1", "pred2",
    "left", "right"}`` entries."""
    out: list[Any] = []
    for step in steps:
        if isinstance(step, Update):
            out.append({"update": to_jsonable(step.event)})
        else:
            out.append(_block_json(step))
    return out


def _block_json(block: Block) -> dict[str, Any]:
    return {
        "fork": block.fork,
        "join": block.join,
        "pred1": to_jsonable(block.left_pred),
        "pred2": to_jsonable(block.right_pred),
        "left": history_json(block.left),
        "right": history_json(block.right),
    }


def history_words(steps: Sequence[Step]) -> str:
    """A history in words, e.g. ``update ('i', 0); fork {..} | {..} [..] [..] join``."""
    if not steps:
        return "init (no steps)"
    parts = []
    for step in steps:
        if isinstance(step, Update):
            parts.append(f"update {short_repr(step.event, 60)}")
        else:
            parts.append(
                f"fork {step.fork!r} with {tags_text(step.left_pred)} | {tags_text(step.right_pred)}, "
                f"left [{history_words(step.left)}], right [{history_words(step.right)}], "
                f"join {step.join!r}"
            )
    return "init, then " + "; ".join(parts)


@dataclass(frozen=True)
class Counterexample:
    """A shrunk violation of one condition; ``instance`` is the spec-level instance
    (``spec.dgs.consistency.C1Instance`` ...), so the violation can be re-evaluated."""

    condition: str
    equation: str
    history: tuple[Step, ...]
    facts: tuple[tuple[str, Any], ...]
    instance: Any = None

    def to_json(self) -> dict[str, Any]:
        """JSON: the equation, the history and every named value (``repr`` fallback)."""
        data: dict[str, Any] = {"equation": self.equation, "history": history_json(self.history)}
        for name, value in self.facts:
            data[name] = to_jsonable(value)
        return data

    def lines(self) -> list[str]:
        """The counterexample in plain words, one fact per line."""
        labels = [LABELS.get(name, name) for name, _ in self.facts]
        width = max(len(label) for label in labels)
        out = [f"equation: {self.equation}", f"s reached by: {history_words(self.history)}"]
        out += [f"{label.ljust(width)} = {short_repr(value, 200)}" for label, (_, value) in zip(labels, self.facts)]
        return out


LABELS = {
    "u1": "u1 (events then processed on the left wire)",
    "u2": "u2 (events then processed on the right wire)",
    "side": "e is processed on the wire",
    "forked": "fork(s, pred1, pred2)",
    "lhs_state": "left side of the equation (state)",
    "rhs_state": "right side of the equation (state)",
    "lhs_out": "left side output",
    "rhs_out": "right side output",
    "states_equal": "states equal",
    "outputs_equal": "outputs equal as multisets",
}


def counterexample_for(program: Program, instance: Any, ev: Evaluation) -> Counterexample:
    """Build the counterexample of a violated evaluation of ``instance``."""
    v = ev.values
    facts: list[tuple[str, Any]] = [("s", v["s"])]
    if isinstance(instance, (C1Instance, C2Instance)):
        facts += [
            ("fork", instance.fork),
            ("join", instance.join),
            ("pred1", set(instance.left_pred)),
            ("pred2", set(instance.right_pred)),
        ]
    if isinstance(instance, C1Instance):
        facts += [
            ("u1", list(instance.left_events)),
            ("u2", list(instance.right_events)),
            ("s1", v["s1"]),
            ("s2", v["s2"]),
            ("side", instance.side),
            ("e", instance.event),
        ]
    elif isinstance(instance, C2Instance):
        facts += [("forked", (v["s1"], v["s2"]))]
    elif isinstance(instance, C3Instance):
        facts += [("e1", instance.event1), ("e2", instance.event2)]
    facts += [("lhs_state", v["lhs_state"]), ("rhs_state", v["rhs_state"])]
    if "lhs_out" in v:
        facts += [("lhs_out", v["lhs_out"]), ("rhs_out", v["rhs_out"])]
        facts += [("states_equal", v["states_equal"]), ("outputs_equal", v["outputs_equal"])]
    return Counterexample(ev.condition, ev.equation, tuple(instance.history), tuple(facts), instance)
