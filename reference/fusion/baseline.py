"""The fusion baseline of Enorm §7.6.

"Taking the first operator in the job and trying to merge downstream operators, by greedily
fusing the operator whose intersection of partition attributes is the largest. This fusion
operation continues until no more operators can be fused. Then it selects a random non-fused
operator and retries."

Interpretation choices: "downstream operators" are the direct successors of any member of
the growing component that are not yet in a component; ties go to the first in job order;
the random restart draws from a seeded ``random.Random`` so runs are reproducible.
"""

from __future__ import annotations

import random

from spec.fusion.components import Component
from spec.fusion.job import Job


def baseline_fusion(job: Job, rng: random.Random) -> list[Component]:
    """The §7.6 baseline; components in the order they were built."""
    position = {name: k for k, name in enumerate(job.names)}
    successors: dict[str, list[str]] = {name: [] for name in job.names}
    for src, dst, _ in job.edges:
        successors[src].append(dst)
    unassigned = set(job.names)
    components: list[Component] = []
    seed = job.names[0] if job.names else None
    while seed is not None:
        members = {seed}
        unassigned.discard(seed)
        pa = job.operator(seed).pa
        while True:
            frontier = {d for m in members for d in successors[m] if d in unassigned}
            best: tuple[int, int, str] | None = None
            for name in frontier:
                common = len(pa & job.operator(name).pa)
                if common > 0:
                    key = (-common, position[name], name)
                    if best is None or key < best:
                        best = key
            if best is None:
                break
            chosen = best[2]
            members.add(chosen)
            unassigned.discard(chosen)
            pa = pa & job.operator(chosen).pa
        components.append(frozenset(members))
        remaining = sorted(unassigned, key=position.__getitem__)
        seed = rng.choice(remaining) if remaining else None
    return components
