"""Watermarks, window deadlines, sweeping watermarks and epochs (Klink §2.1, §2.2, §3).

A *watermark* with timestamp ``ts`` promises that no later event has a timestamp below ``ts``
(§2.2). An operator *ingests* watermarks in some order; we record each as
``(timestamp, ingestion_time)`` in ingestion order.

A time-based window function with size ``s`` and slide ``l`` (§2.1) produces windows
``[d - s, d)`` whose *deadlines* ``d`` are met every ``l`` time units. We fix the phase with an
``offset``: the deadlines are ``offset + l, offset + 2l, ...`` (a query deployed at a random
time has a random offset, §6.2.1).

Sweeping watermark (§2.2, Fig. 2): for a deadline ``d``, the SWM is the *first ingested*
watermark whose timestamp is at or past ``d`` (``ts >= d``: a watermark ``ts`` completes every
window ending at or before ``ts``). One watermark may sweep several deadlines. In Fig. 2
(``s = l = 3``, watermarks 1, 3, 5, 7) watermark 3 sweeps deadline 3 and watermark 7 sweeps
deadline 6; watermark 5 sweeps nothing.

Epochs (§3): the SWMs of a query, in ingestion order, cut its stream into epochs; epoch
``n + 1`` starts after the ingestion of the ``n``-th SWM. Epoch 1 starts at time 0.
Interpretation choice: a watermark that arrives out of order (a timestamp below the largest
seen so far) can never be an SWM, because an earlier watermark already swept every deadline
it could sweep; we keep it in the input rather than dropping it as Flink does.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spec.errors import InputError


@dataclass(frozen=True)
class Watermark:
    """A watermark ``timestamp`` ingested at ``ingested_at`` (Klink §2.2)."""

    timestamp: float
    ingested_at: float


@dataclass(frozen=True)
class WindowSpec:
    """A time-based window function omega_(s, l) (Klink §2.1) with phase ``offset``.

    Raises :class:`InputError` unless ``size > 0`` and ``slide > 0``."""

    size: float
    slide: float
    offset: float = 0.0

    def __post_init__(self) -> None:
        if not self.size > 0:
            raise InputError(f"window size must be positive, got {self.size}", "window")
        if not self.slide > 0:
            raise InputError(f"window slide must be positive, got {self.slide}", "window")

    def deadline(self, index: int) -> float:
        """The deadline of the ``index``-th window (1-based): ``offset + index * slide``."""
        return self.offset + index * self.slide

    def deadlines_until(self, horizon: float) -> list[float]:
        """Every deadline ``d <= horizon``, ascending."""
        count = math.floor((horizon - self.offset) / self.slide + 1e-9)
        return [self.deadline(i) for i in range(1, count + 1)]

    def window(self, deadline: float) -> tuple[float, float]:
        """The event-time range ``[deadline - size, deadline)`` completed at ``deadline``."""
        return (deadline - self.size, deadline)


def sweeping_watermark(deadline: float, ingested: list[Watermark]) -> int | None:
    """Index in ``ingested`` of the SWM of ``deadline``: the first watermark whose timestamp
    is ``>= deadline`` (Klink §2.2); ``None`` if no ingested watermark reaches it yet."""
    for index, mark in enumerate(ingested):
        if mark.timestamp >= deadline:
            return index
    return None


def is_sweeping(index: int, deadlines: list[float], ingested: list[Watermark]) -> bool:
    """True iff watermark ``ingested[index]`` is the SWM of at least one of ``deadlines``."""
    return any(sweeping_watermark(d, ingested) == index for d in deadlines)


def swept_deadlines(index: int, deadlines: list[float], ingested: list[Watermark]) -> list[float]:
    """The deadlines whose SWM is ``ingested[index]`` (a watermark can sweep several)."""
    return [d for d in deadlines if sweeping_watermark(d, ingested) == index]


def sweeping_indices(deadlines: list[float], ingested: list[Watermark]) -> list[int]:
    """Indices of the SWMs among ``ingested`` for the given deadlines, in ingestion order,
    each once (the epoch boundaries of Klink §3)."""
    return sorted({i for d in deadlines if (i := sweeping_watermark(d, ingested)) is not None})


def epoch_of(time: float, deadlines: list[float], ingested: list[Watermark]) -> int:
    """The 1-based epoch that contains instant ``time`` (Klink §3): one plus the number of
    SWMs ingested at or before ``time`` (epoch ``n + 1`` starts after the ``n``-th SWM)."""
    return 1 + sum(
        1 for i in sweeping_indices(deadlines, ingested) if ingested[i].ingested_at <= time
    )


def epochs(deadlines: list[float], ingested: list[Watermark]) -> list[tuple[float, float]]:
    """The closed epochs as ``(start, end)`` ingestion-time intervals: from 0 (or the previous
    SWM's ingestion) to the next SWM's ingestion (Klink §3, Fig. 2)."""
    bounds = [ingested[i].ingested_at for i in sweeping_indices(deadlines, ingested)]
    starts = [0.0] + bounds[:-1]
    return list(zip(starts, bounds))


def swm_generation_time(deadline: float, period: float, phase: float = 0.0) -> float:
    """Generation time of the SWM of ``deadline`` for a source that emits, every ``period``
    from ``phase``, a watermark stamped with its generation time (an ordered source,
    §2.2 "injected periodically"): the first emission instant ``>= deadline``.

    This is the origin the estimator adds the network delay to (Eq. 2 writes
    ``E[w_{n+1}] = E[d_n + p]`` measured from the previous SWM, whose successor is generated
    one SWM period ``p`` later)."""
    if period <= 0:
        raise InputError(f"watermark period must be positive, got {period}", "watermarks")
    steps = math.ceil((deadline - phase) / period - 1e-9)
    return phase + steps * period
