"""When each O+ output must appear: the emission round, and the instance that emits it
(STRETCH §2.3 watermarks, Alg. 2 expiry; docs/oplus.md "Emission rounds").

:mod:`spec.oplus.semantics` says *which* outputs an execution must produce ("watermarks decide
when outputs appear, never which"). This module says *when*, for an engine that runs a
scenario in rounds (micro-batches), as the Spark executor does:

* **Rounds.** With ``k`` items per round, round ``r`` delivers items ``r*k .. r*k + k - 1`` of
  every input list (explicit watermarks count as items). After round ``r`` the bound of a
  list is the largest timestamp or watermark it has delivered, +inf once it is exhausted
  (every list ends with the watermark +inf), and the round's watermark ``W(r)`` is the
  minimum bound over the lists (TB's merged watermark). There are ``max(1, ceil(n / k))``
  rounds for a longest list of ``n`` items; the last has ``W = +inf``.
* **Due outputs.** ``D(r)``, the outputs *determined* after round ``r``, are the sequential
  semantics' outputs of the *delivered prefix* (each list cut after round ``r``), restricted
  to what no later input can change:

  - window results (every operator but ScaleJoin and forward: A / A+ emit f_O at expiry):
    the rows with ``ts <= W(r)``. A row's ``ts`` is its instance's right end ``L + WS``, the
    instance is expired at ``L + WS <= W`` (spec.oplus.windows), and every tuple that falls in
    it has ``ts < L + WS <= W(r)``, so it has been delivered (later tuples have
    ``ts >= W(r)``): the prefix's row is the full run's row;
  - tuple-triggered results (ScaleJoin matches and forward copies, produced by f_U when a
    tuple is processed): every row of the prefix (a match needs both of its tuples, a copy
    its tuple; nothing later changes them).
* **Emission round.** ``D`` grows with ``r`` (as a multiset) and ``D(last) `` is the full
  output. An output is due in round ``r`` when it is in ``D(r) - D(r - 1)``: an engine
  must emit it in that round - not earlier (it is not determined yet: a window could still
  receive a tuple), not later (O+ emits a window as soon as the watermark passes ``L + WS``,
  STRETCH Alg. 2; a join or forward result as soon as its tuples are in). This is the
  eager emission every O+ engine of the project implements.
* **Emitting instance.** During round ``r`` the parallelism is the scenario's initial one,
  changed by every reconfiguration whose watermark is ``<= W(r')`` at a boundary ``r' < r``
  (a reconfiguration takes effect at the first round boundary whose watermark reaches it
  while the stream still runs; the end of the stream applies none, docs/oplus.md). A keyed
  row (window results and forward copies: the row's key is the key the tuple was routed by)
  is emitted by instance ``instance_of(key, parallelism of its round)``.

``outputs`` (the sequential meaning of a scenario as rows) is a parameter, so this module
stays independent of any engine: the conformance suite passes the reference's sequential
execution; the property tests check the claims above (monotonicity, the last round's ``D``
is the full output) on random scenarios.
"""

from __future__ import annotations

import math
from collections import Counter
from dataclasses import replace
from typing import Callable, Hashable, Iterable, TypeVar

from spec.oplus.scenario import Scenario, ScenarioMark, instance_of

TUPLE_TRIGGERED = ("scalejoin", "forward")
"""Operators whose rows are produced when a tuple is processed (f_U), not at expiry (f_O)."""

KEYED = ("sliding-sum", "wordcount", "paircount", "longest-tweet", "forward")
"""Operators whose row key is the key the row's tuples were routed by (ScaleJoin's is
``"match"``, not a routing key)."""

Row = TypeVar("Row", bound=tuple[int, Hashable, Hashable])
"""An output row ``(ts, key, value)`` (any hashable key and value representation)."""


def rounds(scenario: Scenario, items_per_round: int) -> int:
    """The number of rounds (module docstring)."""
    if items_per_round < 1:
        raise ValueError(f"items_per_round must be >= 1, got {items_per_round}")
    longest = max((len(items) for items in scenario.inputs), default=0)
    return max(1, -(-longest // items_per_round))


def round_watermark(scenario: Scenario, items_per_round: int, r: int) -> float:
    """``W(r)``: the merged watermark after round ``r`` (-inf before round 0). A time is an
    int (exact up to the format's 2**62; a float would round times above 2**53) or +-inf."""
    if r < 0:
        return -math.inf
    end = (r + 1) * items_per_round
    bounds: list[float] = []
    for items in scenario.inputs:
        if end >= len(items):
            bounds.append(math.inf)
        else:
            bounds.append(max(i.value if isinstance(i, ScenarioMark) else i.ts for i in items[:end]))
    return min(bounds, default=math.inf)


def prefix(scenario: Scenario, items_per_round: int, r: int) -> Scenario:
    """The scenario of the items delivered by the end of round ``r`` (no reconfigurations)."""
    end = (r + 1) * items_per_round
    return replace(scenario, inputs=tuple(items[:end] for items in scenario.inputs), reconfigurations=())


def due_by(scenario: Scenario, items_per_round: int, r: int,
           outputs: Callable[[Scenario], Iterable[Row]]) -> Counter[Row]:
    """``D(r)``: the outputs determined after round ``r`` (module docstring)."""
    rows = outputs(prefix(scenario, items_per_round, r))
    if scenario.operator in TUPLE_TRIGGERED:
        return Counter(rows)
    watermark = round_watermark(scenario, items_per_round, r)
    return Counter(row for row in rows if row[0] <= watermark)


def emission_rounds(scenario: Scenario, items_per_round: int,
                    outputs: Callable[[Scenario], Iterable[Row]]) -> Counter[tuple[Row, int]]:
    """Every output with the round it is due in: ``D(r) - D(r - 1)`` tagged ``r``.

    Raises ValueError if ``D`` is not monotone or the last round's ``D`` is not the full
    output (a broken ``outputs``: the module docstring's argument rules it out)."""
    result: Counter[tuple[Row, int]] = Counter()
    before: Counter[Row] = Counter()
    last = rounds(scenario, items_per_round) - 1
    for r in range(last + 1):
        now = due_by(scenario, items_per_round, r, outputs)
        if before - now:
            raise ValueError(f"round {r} no longer has outputs due before it: {sorted((before - now).elements())[:3]}")
        result.update({(row, r): n for row, n in (now - before).items()})
        before = now
    if before != Counter(outputs(scenario)):
        raise ValueError("the last round's due outputs are not the scenario's outputs")
    return result


def parallelism_in_round(scenario: Scenario, items_per_round: int, r: int) -> int:
    """The number of instances during round ``r`` (module docstring)."""
    size = scenario.parallelism
    for boundary in range(min(r, rounds(scenario, items_per_round) - 1)):
        watermark = round_watermark(scenario, items_per_round, boundary)
        for change in scenario.reconfigurations:
            if change.watermark <= watermark:
                size = change.parallelism
    return size


def applied_reconfigurations(scenario: Scenario, items_per_round: int) -> int:
    """How many reconfigurations take effect (the others only the end of the stream would
    reach: never applied)."""
    last_boundary = rounds(scenario, items_per_round) - 2
    watermark = round_watermark(scenario, items_per_round, last_boundary) if last_boundary >= 0 else -math.inf
    return sum(1 for change in scenario.reconfigurations if change.watermark <= watermark)


def emitting_instance(scenario: Scenario, items_per_round: int, row_key: str, r: int) -> int | None:
    """The instance that must emit a row with key ``row_key`` in round ``r``; None when the
    row key is not a routing key (ScaleJoin)."""
    if scenario.operator not in KEYED:
        return None
    return instance_of(row_key, parallelism_in_round(scenario, items_per_round, r))
