"""What the suite needs from one run of one scenario, whatever engine produced it.

Engines report results in their own types (the reference simulator's ``SimulationResult``,
spark_impl's ``RunResult``); :class:`RunOutcome` is the common, engine-neutral form the
oracles read. Keeping it here (and not in an engine module) lets the oracles, the vectors and
the users' pytest helper share it without importing any engine.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from spec.errors import InputError
from spec.fries.scenario import Output, Scenario
from spec.fries.schedule import Schedule

#: Names of the oracles, in the order they are checked (placement, serializability and
#: outputs, plus the sharper checks the traces allow: the schedule is complete, every channel is
#: FIFO (spec.fries.consistency (C2)), the final states match).
ORACLES = ("engine", "schedule", "placement", "serializable", "fifo", "outputs", "exactly-once", "states")


@dataclass(frozen=True)
class RunOutcome:
    """One run of one scenario.

    ``outputs`` lists every output record (sink, transaction, key, value) in the order the
    engine emitted them when it knows it (else any order); ``schedule`` is the per-object log
    (:mod:`spec.fries.schedule`); ``states`` the final state per (operator, key), or None when
    the engine does not report it; ``delays`` one reconfiguration delay per applied request
    (engine units: simulator time units, milliseconds for Spark); ``rejected`` the ids
    (``"R1"``, ...) of requests the engine rejected; ``error`` set when the engine failed on
    this scenario (then the rest is empty); ``senders``, parallel to the schedule's logs, the
    object that sent the tuple of each data operation (:data:`spec.fries.scenario.Senders`;
    None when the engine does not report it - the oracles then infer the channels, which is
    exact unless an object receives one transaction on several channels)."""

    outputs: tuple[Output, ...]
    schedule: Schedule
    states: Mapping[tuple[str, int], int] | None = None
    delays: tuple[float, ...] = ()
    rejected: frozenset[str] = field(default_factory=frozenset)
    error: str | None = None
    senders: Mapping[str, tuple[str | None, ...]] | None = None

    @staticmethod
    def failed(error: str) -> "RunOutcome":
        """An engine failure on one scenario."""
        return RunOutcome((), Schedule({}), None, (), frozenset(), error)


def expand_outputs(outputs: Counter[Output] | Iterable[Any]) -> tuple[Output, ...]:
    """Outputs as a tuple of records: a Counter is expanded by multiplicity (sorted, since it
    has no order), an iterable of 4-sequences is kept in order."""
    if isinstance(outputs, Counter):
        return tuple(sorted(outputs.elements()))
    records: list[Output] = []
    for index, raw in enumerate(outputs):
        if len(raw) != 4:
            raise InputError(f"an output record is (sink, txn, key, value), got {raw!r}", f"outputs[{index}]")
        sink, txn, key, value = raw
        records.append((str(sink), str(txn), int(key), int(value)))
    return tuple(records)


def rejected_ids(scenario: Scenario, rejected: Iterable[Any]) -> frozenset[str]:
    """Rejected requests as transaction ids: accepts ids (``"R2"``), 0-based indices, or
    rejection messages that name the request's id (``"R2 rejected: ..."``)."""
    ids = set()
    count = len(scenario.reconfigurations)
    for item in rejected:
        if isinstance(item, int) and not isinstance(item, bool):
            ids.add(f"R{item + 1}")
            continue
        named = re.search(r"\bR(\d+)\b", str(item))
        if named is None:
            raise InputError(f"rejection {str(item)!r} does not name its request (R1, R2, ...)", "rejected")
        ids.add(f"R{named.group(1)}")
    unknown = sorted(i for i in ids if i not in {f"R{j + 1}" for j in range(count)})
    if unknown:
        raise InputError(f"rejected requests {unknown} are not in the scenario", "rejected")
    return frozenset(ids)


@dataclass(frozen=True)
class PathFailure:
    """An entry path's own check failed for one scenario (:mod:`conformance.fries.engines.paths`;
    reported as an ``engine`` failure)."""

    scenario_index: int
    error: str


def outcome_of(scenario: Scenario, outputs: Any, schedule: Any, states: Any, delays: Any,
               rejected: Any, senders: Any = None) -> RunOutcome:
    """Normalise an engine's result fields (the reference's ``SimulationResult``, spark_impl's
    ``RunResult``) into a :class:`RunOutcome`."""
    if not isinstance(schedule, Schedule):
        schedule = Schedule.from_json(schedule.to_json() if hasattr(schedule, "to_json") else schedule)
    return RunOutcome(
        outputs=expand_outputs(outputs),
        schedule=schedule,
        states=states_of(states),
        delays=tuple(float(d) for d in (delays.values() if isinstance(delays, Mapping) else delays or ())),
        rejected=rejected_ids(scenario, rejected or ()),
        senders={str(obj): tuple(None if x is None else str(x) for x in log) for obj, log in dict(senders).items()}
        if senders else None,
    )


def states_of(states: Any) -> dict[tuple[str, int], int] | None:
    """An engine's final states as ``{(operator, key): state}`` with plain types (None: not reported)."""
    if states is None:
        return None
    return {(str(op), int(key)): int(value) for (op, key), value in dict(states).items()}
