"""The driver's view of one scenario's sources: rounds (micro-batches) and their watermarks.

The driver owns source offsets and watermarks, as Structured Streaming's driver does: round
``r`` takes the next ``items_per_round`` items of every input list; after it, the bound of a
list is the largest timestamp or explicit watermark it has delivered (+inf once the list is
exhausted: every list ends with the watermark +infinity) and the round's watermark is the
minimum bound over the lists (spec.oplus.watermarks: TB's merged watermark, §2.3). A later
round can therefore carry tuples with smaller timestamps than an earlier one (from another
list), never below the previous watermark.

Reconfigurations ``{"watermark": w, "parallelism": p}`` take effect at the first round
boundary whose watermark reaches ``w`` while the stream still runs (a finite watermark); one
that only the end of the stream would reach is not applied (as in the reference, docs/oplus.md).
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from functools import cached_property

from spec.errors import InputError
from spec.oplus.scenario import Scenario, ScenarioMark

from spark_impl.oplus.operators import Item


@dataclass(frozen=True)
class Feed:
    """The sources of one scenario, cut into rounds of ``items_per_round`` items per list."""

    scenario: Scenario
    items_per_round: int

    def __post_init__(self) -> None:
        k = self.items_per_round
        if isinstance(k, bool) or not isinstance(k, numbers.Integral) or k < 1:
            raise InputError(f"must be an integer >= 1, got {k!r}", "items_per_round")

    @property
    def rounds(self) -> int:
        """Number of rounds; the last one ends with the watermark +inf (at least one round)."""
        longest = max((len(items) for items in self.scenario.inputs), default=0)
        return max(1, -(-longest // self.items_per_round))

    def items(self, round_index: int) -> list[Item]:
        """The tuples of round ``round_index`` (explicit watermarks only move bounds)."""
        lo, hi = round_index * self.items_per_round, (round_index + 1) * self.items_per_round
        result: list[Item] = []
        for source, items in enumerate(self.scenario.inputs):
            for position in range(lo, min(hi, len(items))):
                item = items[position]
                if not isinstance(item, ScenarioMark):
                    result.append((item.ts, source, position, dict(item.fields)))
        return result

    def watermark(self, round_index: int) -> float:
        """The merged watermark after round ``round_index`` (-inf before the first round)."""
        if round_index < 0:
            return -math.inf
        end = (round_index + 1) * self.items_per_round
        bounds = [math.inf if end >= len(prefix) else prefix[end - 1] for prefix in self._bounds]
        return min(bounds, default=math.inf)

    @cached_property
    def _bounds(self) -> list[list[float]]:
        """Per list, the bound after each item: the running max of timestamps and marks."""
        result = []
        for items in self.scenario.inputs:
            running: float = -math.inf  # an int after the first item: exact up to MAX_TIME (2**62)
            prefix: list[float] = []
            for item in items:
                running = max(running, item.value if isinstance(item, ScenarioMark) else item.ts)
                prefix.append(running)
            result.append(prefix)
        return result

    def parallelism_after(self, round_index: int) -> tuple[int, int]:
        """(parallelism in force after round ``round_index``'s boundary, reconfigurations
        applied so far)."""
        size, applied = self.scenario.parallelism, 0
        wm = self.watermark(round_index)
        if math.isinf(wm):
            wm = self.watermark(round_index - 1)  # the end of the stream applies nothing new
        for change in self.scenario.reconfigurations:
            if change.watermark <= wm:
                size, applied = change.parallelism, applied + 1
        return size, applied
