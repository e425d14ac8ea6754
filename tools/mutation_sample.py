"""The seeded samples of tools/mutation.py's ``run``: uniform, or stratified by part of
the scope (:func:`mutation_report.stratum`)."""

from __future__ import annotations

import random
from collections import defaultdict
from typing import Any

from mutation_report import stratum


def sample(mutants: list[dict[str, Any]], n: int, seed: int) -> list[dict[str, Any]]:
    """A seeded uniform sample of ``n`` mutants (all when ``n`` >= the population)."""
    chosen = list(mutants)
    random.Random(seed).shuffle(chosen)
    return chosen[:n] if n < len(chosen) else chosen


def allocate(sizes: dict[str, int], n: int, least: int) -> dict[str, int]:
    """``n`` draws over strata of ``sizes`` proportionally (largest remainder), at least
    ``least`` per stratum (never more than it holds)."""
    floor = {k: min(least, v) for k, v in sizes.items()}
    rest = max(0, n - sum(floor.values()))
    spare = {k: v - floor[k] for k, v in sizes.items()}
    total = sum(spare.values())
    if total == 0 or rest == 0:
        return floor
    quota = {k: rest * v / total for k, v in spare.items()}
    out = {k: floor[k] + min(spare[k], int(q)) for k, q in quota.items()}
    left = min(n, sum(sizes.values())) - sum(out.values())
    for k in sorted(quota, key=lambda k: (int(quota[k]) - quota[k], k)):
        if left <= 0:
            break
        if out[k] < sizes[k]:
            out[k] += 1
            left -= 1
    return out


def stratified_sample(mutants: list[dict[str, Any]], n: int, seed: int, least: int = 2) -> list[dict[str, Any]]:
    """A seeded sample of ``n`` mutants stratified by :func:`stratum`, proportional to each
    stratum's size with at least ``least`` per stratum; mutants inside annotations (equivalent
    by construction, no run) are not drawn. The order interleaves the strata (draw ``i`` of a
    stratum with ``m`` draws sits at ``(i + 0.5) / m``), so a run stopped early is still a
    stratified sample of a smaller size."""
    rng = random.Random(seed)
    by: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for m in mutants:
        if not m.get("annotation"):
            by[stratum(str(m["module"]))].append(m)
    counts = allocate({k: len(v) for k, v in by.items()}, n, least)
    keyed = []
    for k in sorted(by):
        picked = rng.sample(by[k], counts[k])
        keyed += [((i + 0.5) / len(picked), k, m) for i, m in enumerate(picked)]
    return [m for _, _, m in sorted(keyed, key=lambda t: (t[0], t[1]))]
