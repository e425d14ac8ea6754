"""Drawing a fixed number of cases from a hypothesis strategy, reproducibly from a seed.

The suite generates its cases up front (so a batch of them can run in one Spark job) rather
than inside a ``@given`` test: :func:`draw_cases` runs hypothesis's generation phase only, with
the seed fixed and no example database, and collects what it draws. The same (strategy, n,
seed) always gives the same cases. Shrinking is done afterwards on the failing case itself
(:mod:`conformance.core.shrink`), because a Spark batch cannot be re-entered from inside
hypothesis's shrinker.
"""

from __future__ import annotations

from typing import TypeVar

from hypothesis import HealthCheck, Phase, given, seed as hypothesis_seed, settings
from hypothesis import strategies as st

T = TypeVar("T")


def draw_cases(strategy: st.SearchStrategy[T], n: int, seed: int) -> list[T]:
    """``n`` values drawn from ``strategy`` (fewer only if the strategy has fewer distinct
    values), reproducibly from ``seed``."""
    if n <= 0:
        return []
    drawn: list[T] = []

    @settings(max_examples=n, database=None, phases=[Phase.generate], deadline=None,
              suppress_health_check=list(HealthCheck), derandomize=False)
    @hypothesis_seed(seed)
    @given(strategy)
    def collect(value: T) -> None:
        if len(drawn) < n:
            drawn.append(value)

    collect()
    return drawn
