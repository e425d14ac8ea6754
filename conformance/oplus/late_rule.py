"""The live O+ front end's documented lateness rule, as the oracles model it
(docs/production/oplus.md, "Late tuples"; :mod:`spark_impl.lateness` is the product's code,
this is the harness's independent statement of it).

Files land one after another; each row of a file is a tuple of a source (its event time) or a
source's explicit watermark. A source's bound is its largest event time minus the allowed
lateness, or its largest explicit watermark; a job's watermark is the least bound over its
sources (-inf while one has delivered nothing); a tuple is late when its event time is below
the watermark the previous files left.
"""

from __future__ import annotations

import math
from typing import Sequence

Landed = tuple[int, float | None, float | None]
"""One landed row: ``(source, event time or None, explicit watermark or None)``."""


def late_rows(files: Sequence[Sequence[Landed]], sources: int, lateness: int) -> list[tuple[int, int]]:
    """``(file, row)`` of every tuple the rule makes late, in landing order."""
    bounds = [-math.inf] * sources
    late: list[tuple[int, int]] = []
    for index, rows in enumerate(files):
        watermark = min(bounds) if bounds else -math.inf
        late.extend((index, r) for r, (_, ts, _) in enumerate(rows) if ts is not None and ts < watermark)
        for source, ts, mark in rows:
            bound = ts - lateness if ts is not None else mark
            if bound is not None:
                bounds[source] = max(bounds[source], bound)
    return late
