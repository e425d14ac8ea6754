"""Window instances, the expiry rule and output timestamps (STRETCH §2.1, §2.3, Alg. 2).

A window of advance WA and size WS has one *instance* per integer ``l``, covering the event
times ``[l*WA, l*WA + WS)``: left boundary inclusive, right boundary exclusive (§2.1). We name
an instance by its left boundary ``L = l*WA`` (the paper's ``w.l``), as Alg. 2 does.

**The expiry rule (one rule, used everywhere).** The paper states both
``w.l + WS <= W`` (§2.3: "can safely invoke f_A for any w such that w.l + WS <= W") and
``rho + WS < W`` (the loop of Alg. 2 L28 and Alg. 4 L16). We use::

    expired(L, W)  iff  L + WS <= W

i.e. a window instance is expired as soon as the watermark reaches its right boundary. This is
the earliest *safe* moment: a watermark W promises that every future tuple has ``tau >= W``
(Def. 2), and a tuple with ``tau >= L + WS`` does not fall in ``[L, L + WS)``. The strict form
is also safe but emits one watermark step later; with the final watermark +infinity both
produce the same outputs. The same rule is used by the reference executors, by the ScaleJoin
purge (Operator 10 writes ``T[0].tau + WS < t.tau``; we purge when ``tau' + WS <= t.tau``, so
two tuples join iff they share a window instance, ``|tau - tau'| < WS`` when WA = 1) and by
Enorm's panes.

**Output timestamps.** A result produced by f_U or f_O for window instance L carries the
timestamp ``L + WS``, the instance's (exclusive) right boundary (§2.1, "prepareOutTuples"), so
every output is later than every input that contributed to it (Observation 1).

Time is an ``int`` (the paper's discrete delta increments); watermarks may also be
``-inf`` (nothing known yet) or ``+inf`` (the stream ended), hence :data:`Watermark`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from spec.errors import InputError

Watermark = float
"""An event time or +/-infinity. Python ints are accepted where a Watermark is expected."""

NO_WATERMARK: Watermark = -math.inf
"""The watermark before anything is known (Alg. 2 initializes W to 0; we use -inf so negative
event times are allowed)."""

END_OF_STREAM: Watermark = math.inf
"""The watermark after the last tuple: every window instance expires."""


@dataclass(frozen=True)
class WindowSpec:
    """Window advance WA and size WS (§2.1). Validated: ``WA > 0`` and ``WS >= WA``.

    ``WS >= WA`` is the issue's contract (the paper assumes sliding windows, WA < WS, §3;
    tumbling WA = WS is allowed; hopping windows WS < WA, which skip tuples, are not)."""

    WA: int
    WS: int

    def __post_init__(self) -> None:
        if self.WA <= 0:
            raise InputError(f"WA must be > 0, got {self.WA}", "WA")
        if self.WS < self.WA:
            raise InputError(f"WS must be >= WA ({self.WA}), got {self.WS}", "WS")

    def right_boundary(self, left: int) -> int:
        """The exclusive right boundary ``L + WS`` of instance ``L``: also the timestamp of
        every output produced for it (§2.1)."""
        return left + self.WS

    def contains(self, left: int, ts: int) -> bool:
        """True iff event time ``ts`` falls in instance ``[left, left + WS)``."""
        return left <= ts < left + self.WS and left % self.WA == 0

    def earliest_left(self, ts: int) -> int:
        """earliestWinL(t) (Alg. 2): the smallest ``l*WA`` with ``l*WA + WS > ts``."""
        # smallest l with l*WA > ts - WS  <=>  l = floor((ts - WS) / WA) + 1
        return ((ts - self.WS) // self.WA + 1) * self.WA

    def latest_left(self, ts: int) -> int:
        """latestWinL(t) (Alg. 2): the largest ``l*WA <= ts``."""
        return (ts // self.WA) * self.WA

    def lefts_of(self, ts: int) -> range:
        """Every instance ``ts`` falls in, by increasing left boundary."""
        return range(self.earliest_left(ts), self.latest_left(ts) + 1, self.WA)

    def expired(self, left: int, watermark: Watermark) -> bool:
        """THE expiry rule: instance ``left`` is expired at watermark W iff
        ``left + WS <= W`` (see the module docstring)."""
        return left + self.WS <= watermark

    def earliest_open_left(self, watermark: Watermark) -> Watermark:
        """The smallest left boundary on the grid that is *not* expired at ``watermark``
        (-inf / +inf for infinite watermarks). Every non-expired instance starts at or after
        it; the reference's rho sits there after each expiry loop."""
        if math.isinf(watermark):
            return watermark
        return self.earliest_left(math.floor(watermark))
