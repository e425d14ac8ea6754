"""How much work a scenario asks for, bounded before anything runs.

An O+ execution does work per (tuple, key, window instance): WT multi updates every one of
the ``ceil(WS / WA)`` instances a tuple falls in, WT single shifts its one instance ``WA`` at
a time for as long as the tuple is in it, and each of those steps can emit an output. So
``WA = 1, WS = 10**12`` asks for 10**12 steps per tuple, ``params.keys = 10**6`` for 10**6
keys per tuple, ``parallelism = 10**6`` for 10**6 simulated instances, each sent every
watermark. Nothing here is computed lazily: the scenario is *refused* with a message naming
the factor when

* ``parallelism`` (initial or reconfigured) exceeds :data:`MAX_PARALLELISM`,
* ``params.keys`` exceeds :data:`MAX_KEYS`,
* or :func:`work_estimate` exceeds :data:`MAX_WORK` steps.

:func:`work_estimate` is an upper bound computed from the scenario alone, in time linear in
its size (plus a sort for ScaleJoin):

* keys per tuple: 1 (sliding-sum), the words (wordcount), the hashtags (longest-tweet), the
  word pairs at distance <= B (paircount: sum of ``min(B, n - 1 - i)``), ``params.keys``
  (scalejoin, forward);
* steps = sum over tuples of keys x ``ceil(WS / WA)``; for ScaleJoin (WA = 1, one instance per
  key) the K updates per tuple, the opposite tuples each one is compared with (those less
  than WS apart) and the shifts: at most ``min(K, tuples)`` chains each over the union of
  the tuples' ``[ts, ts + WS)``;
* plus (items) x P x max(1, P / 20) for the largest parallelism P: SN and VSN deliver every
  item or its watermark to every instance, and their simulations pick the next step among
  all P instances (measured: 30 items with P = 1,024 took 41 s in vsn, 100 items with
  P = 256 took 9.5 s, on the loaded 2-core machine).

The limits read a scenario through :class:`BudgetedScenario`, the few fields they need, so
that :mod:`spec.oplus.scenario` (which refuses a scenario over budget while it parses it) can
depend on this module and not the other way round.
"""

from __future__ import annotations

import bisect
from typing import Any, Mapping, Protocol, Sequence

from spec.errors import InputError, cut
from spec.oplus.windows import WindowSpec


class BudgetedTuple(Protocol):
    """What the limits read of one input tuple (:class:`spec.oplus.scenario.ScenarioTuple`)."""

    @property
    def ts(self) -> int: ...

    @property
    def fields(self) -> Mapping[str, Any]: ...


class BudgetedStep(Protocol):
    """What the limits read of one reconfiguration (:class:`spec.oplus.scenario.Reconfiguration`)."""

    @property
    def parallelism(self) -> int: ...


class BudgetedScenario(Protocol):
    """What the limits read of a scenario (:class:`spec.oplus.scenario.Scenario` is one)."""

    @property
    def operator(self) -> str: ...

    @property
    def windows(self) -> WindowSpec: ...

    @property
    def parallelism(self) -> int: ...

    @property
    def inputs(self) -> Sequence[Sequence[object]]: ...

    @property
    def reconfigurations(self) -> Sequence[BudgetedStep]: ...

    @property
    def params(self) -> Mapping[str, Any]: ...

    @property
    def tuple_streams(self) -> Sequence[Sequence[BudgetedTuple]]:
        """Each input list's tuples, its explicit watermarks left out."""
        ...

    @property
    def pair_distance(self) -> int | None:
        """paircount's largest distance between paired words (None: unbounded)."""
        ...

MAX_PARALLELISM = 1024
"""Most instances a scenario may ask for (SN / VSN simulate each one)."""

MAX_KEYS = 10_000
"""Largest ``params.keys`` (ScaleJoin, forward): every tuple goes to every key. Operator 10
uses 1,000."""

DELIVERY_SCALE = 20.0
"""P / DELIVERY_SCALE: how many steps one delivery to one of P instances costs (module
docstring)."""

MAX_WORK = 500_000
"""Most steps (module docstring) a scenario may ask for. Measured on the loaded 2-core
machine: 2 tuples x 300,000 window instances (every step creating a window set and emitting
an output, the worst case) took 68 s and 780 MB (sequential), 112 s and 1 GB (vsn); 1,000
tuples x 1,000 instances of one key took 11 s. So the limit is ~20-60 s and < 1 GB."""


def check_budget(scenario: BudgetedScenario) -> None:
    """Refuse a scenario asking for more than the limits of the module docstring."""
    if scenario.parallelism > MAX_PARALLELISM:
        raise InputError(_too_many(scenario.parallelism, MAX_PARALLELISM, "instances"),
                         "parallelism")
    for index, step in enumerate(scenario.reconfigurations):
        if step.parallelism > MAX_PARALLELISM:
            raise InputError(_too_many(step.parallelism, MAX_PARALLELISM, "instances"),
                             f"reconfigurations[{index}].parallelism")
    keys = scenario.params.get("keys")
    if isinstance(keys, int) and keys > MAX_KEYS:
        raise InputError(_too_many(keys, MAX_KEYS, "keys"), "params.keys")
    work, what = work_estimate(scenario)
    if work > MAX_WORK:
        raise InputError(f"this scenario asks for about {work:.3g} steps ({what}); at most "
                         f"{MAX_WORK:,} are run (lower WS / WA, the input or the parallelism; "
                         "see docs/oplus.md)", "top level")


def _too_many(value: int, limit: int, what: str) -> str:
    return f"at most {limit:,} {what}, got {cut(f'{value:,}', 30)}"


def work_estimate(scenario: BudgetedScenario) -> tuple[float, str]:
    """The upper bound of the module docstring, and which factor makes it."""
    windows = scenario.windows
    per_tuple = -(-windows.WS // windows.WA)  # ceil(WS / WA)
    tuples = scenario.tuple_streams
    items = sum(len(stream) for stream in scenario.inputs)
    count = sum(len(stream) for stream in tuples)
    widest = max([scenario.parallelism] + [r.parallelism for r in scenario.reconfigurations])
    delivery = float(items) * widest * max(1.0, widest / DELIVERY_SCALE)
    if scenario.operator == "scalejoin":
        work = _scalejoin(tuples, windows.WS, scenario.params["keys"])
        what = f"{count:,} tuples, K = {scenario.params['keys']:,} keys, WS = {windows.WS:,}"
    else:
        keys = sum(_keys(scenario, t) for stream in tuples for t in stream)
        work = float(keys) * per_tuple
        what = f"{keys:,} (tuple, key) pairs x {per_tuple:,} window instances each"
    if delivery > work:
        return work + delivery, f"{items:,} items delivered to {widest:,} instances"
    return work + delivery, what


def _keys(scenario: BudgetedScenario, t: BudgetedTuple) -> int:
    """An upper bound of the keys of tuple ``t`` (f_MK)."""
    name = scenario.operator
    if name in ("scalejoin", "forward"):
        return int(scenario.params["keys"])
    if name == "sliding-sum":
        return 1
    words = str(t.fields["text"]).split()
    if name == "wordcount":
        return len(words)
    if name == "longest-tweet":
        return sum(1 for w in words if w.startswith("#"))
    distance = scenario.pair_distance
    n = len(words)
    if distance is None or distance >= n:
        return n * (n - 1) // 2
    # sum over i of min(distance, n - 1 - i)
    return distance * (n - distance) + distance * (distance - 1) // 2


def _scalejoin(tuples: Sequence[Sequence[BudgetedTuple]], ws: int, keys: int) -> float:
    stamps = [sorted(t.ts for t in stream) for stream in tuples]
    count = sum(len(s) for s in stamps)
    compared = 0
    for this, other in ((stamps[0], stamps[1]), (stamps[1], stamps[0])):
        for ts in this:  # opposite tuples with |ts' - ts| < ws, counted from each side
            compared += bisect.bisect_left(other, ts + ws) - bisect.bisect_right(other, ts - ws)
    merged = sorted(stamps[0] + stamps[1])
    covered, end = 0, None
    for ts in merged:  # length of the union of [ts, ts + ws)
        start = ts if end is None else max(ts, end)
        covered += max(0, ts + ws - start)
        end = ts + ws if end is None else max(end, ts + ws)
    shifts = min(float(count) * ws, float(min(keys, count)) * covered)
    return float(count) * keys + compared + shifts
