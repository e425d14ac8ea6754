"""Klink's memory-pressure policy (Klink §3.4).

Above a memory bound ``b`` (``mem_util >= b``, Fig. 3) Klink stops minimizing slack and runs
the queries whose execution releases the most memory. For query ``q`` processed down to its
``k``-th operator, ``p_k^q = sz^q * (1 - prod_{i <= k} S_i^q)`` events leave the system, where
``sz^q`` is the number of queued events that can be processed (Klink bounds it by what the
pipeline can process in one cycle of ``r`` seconds). Among the queries maximizing ``p``,
the least-slack one runs.
"""

from __future__ import annotations

import math
from typing import Sequence

from spec.errors import InputError


def released(queued: float, selectivities: Sequence[float]) -> float:
    """``p = sz * (1 - prod S_i)``: events released by processing ``queued`` events through
    operators of the given selectivities (Klink §3.4)."""
    if queued < 0:
        raise InputError(f"queue size must be >= 0, got {queued}", "queued")
    return queued * (1.0 - math.prod(selectivities))


def best_release(queued: float, selectivities: Sequence[float]) -> tuple[int, float]:
    """``max_k p_k``: the prefix length ``k`` (1-based) that releases the most events and that
    amount. With selectivities <= 1 the product only shrinks, so the whole pipeline wins;
    an operator with selectivity > 1 (a flatten) can make a shorter prefix better. Ties go to
    the shortest prefix."""
    if not selectivities:
        raise InputError("a pipeline has at least one operator", "selectivities")
    best_k, best_p = 1, released(queued, selectivities[:1])
    for k in range(2, len(selectivities) + 1):
        p = released(queued, selectivities[:k])
        if p > best_p:
            best_k, best_p = k, p
    return best_k, best_p


def under_pressure(memory: float, bound: float) -> bool:
    """Klink Fig. 3: the memory policy is active iff ``mem_util >= b``."""
    return memory >= bound
