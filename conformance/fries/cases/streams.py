"""Longer source streams for Fries scenarios: the same scenario, stretched.

The random scenarios of :mod:`conformance.fries.cases.scenarios` have a handful of source tuples,
which shrink well but are over within one or two micro-batches on Spark: a request then
becomes visible before any tuple is processed, and the window in which a wrong scheduler
(naive, unaligned) lets a transaction see both versions never opens. :func:`stretch` repeats
every source list ``factor`` times (keys and values unchanged, so routing and workers are
the same) and scales every request's ``at`` by ``factor``, so requests land mid-stream after
several batches. :func:`stretched` draws the factor (1 - unchanged - two times in three).
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import strategies as st

from spec.fries.scenario import Scenario, SourceTuple

FACTORS = (1, 1, 4)


def stretch(scenario: Scenario, factor: int) -> Scenario:
    """``scenario`` with each source list repeated ``factor`` times and ``at`` scaled."""
    if factor <= 1:
        return scenario
    sources = {
        name: tuple(SourceTuple(f"{name}:{i}", t.key, t.value)
                    for i, t in enumerate(t for _ in range(factor) for t in tuples))
        for name, tuples in scenario.sources.items()
    }
    requests = tuple(replace(r, at=r.at * factor) for r in scenario.reconfigurations)
    restarts = tuple(n * factor for n in scenario.timing.restarts)
    return replace(scenario, sources=sources, reconfigurations=requests,
                   timing=replace(scenario.timing, restarts=restarts))


def stretched(scenarios: st.SearchStrategy[Scenario]) -> st.SearchStrategy[Scenario]:
    """``scenarios``, each stretched by a factor drawn from :data:`FACTORS`."""
    return st.tuples(scenarios, st.sampled_from(FACTORS)).map(lambda pair: stretch(*pair))
