"""Breadth-first search of one configuration under one scheduler.

Every reachable state is visited once (states are compared whole, logs included, so two
interleavings that reach the same state are explored once: the "diamond" merge of explicit
state search, exact). A *complete* state has no successor; its logs are a complete schedule
(Def. 4.7), checked by the reference checker
(:func:`reference.fries.serializability.check_serializability`). A complete state in which a
reconfigured object never applied R, or a message is left, is a deadlock (reported as a
violation too). Breadth first, the first violation found has a shortest trace (fewest
actions) among this configuration's violations; the search stops there.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Any

from reference.fries.serializability import Verdict, check_serializability
from spec.fries.schedule import Operation, Schedule

from proofs.fries.modelcheck.control import Control, Objects
from proofs.fries.modelcheck.system import MARKER, UPDATE, Action, State, System


@dataclass(frozen=True)
class Counterexample:
    """A violating run: its actions in words, the complete schedule and the verdict (the
    precedence cycle) - or ``deadlock`` when the run stopped before R was applied
    everywhere."""

    steps: tuple[str, ...]
    schedule: Schedule
    verdict: Verdict | None
    deadlock: str | None = None

    def to_json(self) -> dict[str, Any]:
        """``{"trace", "schedule", "cycle", "explanation"}``."""
        return {"trace": list(self.steps), "schedule": self.schedule.to_json(),
                "cycle": list(self.verdict.cycle) if self.verdict and self.verdict.cycle else None,
                "explanation": self.deadlock or (self.verdict.explain() if self.verdict else "")}


@dataclass(frozen=True)
class Outcome:
    """States visited and the counterexample (None: every complete schedule is
    conflict-serializable)."""

    states: int
    counterexample: Counterexample | None


def explore(objects: Objects, control: Control, tuples: int = 1) -> Outcome:
    """Search every interleaving (module docstring)."""
    system = System(objects, control, tuples)
    parent: dict[State, tuple[State | None, Action | None]] = {}
    frontier: deque[State] = deque()
    for state in system.initial_states():
        if state not in parent:
            parent[state] = (None, None)
            frontier.append(state)
    verdicts: dict[object, Verdict] = {}
    while frontier:
        state = frontier.popleft()
        terminal = True
        for action, after in system.successors(state):
            terminal = False
            if after not in parent:
                parent[after] = (state, action)
                frontier.append(after)
        if not terminal:
            continue
        problem = _deadlock(system, state)
        logs = state[7]
        schedule = _schedule(objects, logs)
        if problem is None:
            verdict = verdicts.get(logs)
            if verdict is None:
                verdict = verdicts[logs] = check_serializability(schedule)
            if verdict.serializable:
                continue
        else:
            verdict = None
        trace = _trace(objects, control, parent, state)
        return Outcome(len(parent), Counterexample(trace, schedule, verdict, problem))
    return Outcome(len(parent), None)


def _deadlock(system: System, state: State) -> str | None:
    pending, requested, fcms, _, _, _, queues, logs = state
    assert isinstance(logs, tuple) and isinstance(queues, tuple)
    missing = [system.objects.names[o] for o in sorted(system.objects.reconfigured)
               if UPDATE not in logs[o]]
    if missing:
        return f"deadlock: R never applied on {', '.join(missing)}"
    if pending or fcms or any(queues) or not requested:
        return "deadlock: messages left undelivered"
    return None


def _schedule(objects: Objects, logs: object) -> Schedule:
    """The complete schedule: the log of every non-source object (sources log nothing)."""
    assert isinstance(logs, tuple)
    out: dict[str, tuple[Operation, ...]] = {}
    for o, name in enumerate(objects.names):
        if o in objects.sources:
            continue
        out[name] = tuple(Operation("R", update=True) if x == UPDATE else Operation(f"t{x}")
                          for x in logs[o])
    return Schedule(out)


def _trace(objects: Objects, control: Control, parent: dict[State, tuple[State | None, Action | None]],
           state: State) -> tuple[str, ...]:
    steps: list[str] = []
    current: State | None = state
    while current is not None:
        before, action = parent[current]
        if action is not None:
            steps.append(describe(objects, control, action))
        current = before
    return tuple(reversed(steps))


def describe(objects: Objects, control: Control, action: Action) -> str:
    """One action in words."""
    names = objects.names

    def channel(c: object) -> str:
        assert isinstance(c, int)
        src, dst = objects.channels[c]
        return f"{names[src]} -> {names[dst]}"

    def sends(option: object) -> str:
        assert isinstance(option, tuple)
        if not option:
            return "emits nothing"
        return "sends to " + ", ".join(names[objects.channels[c][1]] for c in option)

    def aligns(obj: int) -> str:
        applies = " applies R" if obj in objects.reconfigured else " aligns"
        markers = [names[objects.channels[c][1]] for c in control.forward[obj]]
        return applies + (f" and sends the marker to {', '.join(markers)}" if markers else "")

    kind = action[0]
    if kind == "start":
        return "the controller starts R"
    if kind == "fcm":
        obj = action[1]
        assert isinstance(obj, int)
        return f"the FCM reaches {names[obj]}, which" + aligns(obj)
    if kind == "ingest":
        _, src, txn, option = action
        assert isinstance(src, int)
        return f"source {names[src]} ingests t{txn} and {sends(option)}"
    if kind == "marker":
        _, c, now_aligned = action
        assert isinstance(c, int)
        obj = objects.channels[c][1]
        done = ", is aligned and" + aligns(obj) if now_aligned else ""
        return f"{names[obj]} takes the marker on {channel(c)}{done}"
    _, c, txn, option = action
    assert isinstance(c, int)
    return f"{names[objects.channels[c][1]]} processes t{txn} from {channel(c)} and {sends(option)}"


__all__ = ["Counterexample", "MARKER", "Outcome", "describe", "explore"]
