"""Components and the validity of a fusion (Enorm §4.4, §4.4.1).

Fusion groups the operators of a job into *components*. For a component ``C``:

* ``PA(C) = intersection of PA(O) for O in C`` and ``C`` runs on at most ``PA^c(PA(C))``
  nodes (its maximum parallelism, §4.4);
* ``C`` is *stateless* iff all its operators are, *flexible* iff all its operators are
  (§4.4, with Table 1).

A fusion is valid (§4.4.1) iff (1) every operator belongs to exactly one component and
(2) every component's operators share a partition attribute. Interpretation choice: (2) binds
components of two or more operators only. A lone operator with ``PA = {}`` is a component
of its own (Enorm's Example 2b has components with ``PA(C) = {}`` and ``PA^c(C) = 1``).

Fusion minimizes the *inter-component traffic*: the summed rate of the edges whose endpoints
lie in different components (§4.4.1; §7.6 reports it as a percentage of all traffic).
"""

from __future__ import annotations

from typing import Iterable, Sequence

from spec.fusion.job import Job

Component = frozenset[str]


def component_pa(job: Job, component: Component) -> frozenset[str]:
    """``PA(C)``: the attributes shared by every operator of ``component``."""
    names = sorted(component)
    if not names:
        return frozenset()
    common = job.operator(names[0]).pa
    for name in names[1:]:
        common = common & job.operator(name).pa
    return common


def max_parallelism(job: Job, component: Component) -> float:
    """``PA^c(C)``: how many nodes ``component`` can be parallelized onto (§4.4)."""
    return job.cardinality(component_pa(job, component))


def is_stateless(job: Job, component: Component) -> bool:
    """§4.4: a component is stateless iff it contains only stateless operators."""
    return all(not job.operator(name).kind.stateful for name in component)


def is_flexible(job: Job, component: Component) -> bool:
    """§4.4: a component is flexible iff it contains only flexible operators."""
    return all(job.operator(name).kind.flexible for name in component)


def is_partition(job: Job, components: Sequence[Component]) -> bool:
    """§4.4.1 condition 1: every operator in exactly one (non-empty) component."""
    seen: list[str] = [name for component in components for name in component]
    return (
        all(component for component in components)
        and len(seen) == len(set(seen))
        and set(seen) == set(job.names)
    )


def shares_attributes(job: Job, component: Component) -> bool:
    """§4.4.1 condition 2 for one component (vacuous for a single operator)."""
    return len(component) < 2 or bool(component_pa(job, component))


def is_valid_fusion(job: Job, components: Sequence[Component]) -> bool:
    """Conditions 1 and 2 of §4.4.1."""
    return is_partition(job, components) and all(shares_attributes(job, c) for c in components)


def is_connected(job: Job, component: Component) -> bool:
    """True iff ``component`` is connected by job edges ignoring direction (Alg. 1 only fuses
    along edges, so its components always are)."""
    names = set(component)
    if not names:
        return False
    start = min(names)
    reached = {start}
    frontier = [start]
    while frontier:
        name = frontier.pop()
        for src, dst, _ in job.edges:
            for a, b in ((src, dst), (dst, src)):
                if a == name and b in names and b not in reached:
                    reached.add(b)
                    frontier.append(b)
    return reached == names


def owner(components: Iterable[Component]) -> dict[str, int]:
    """Operator name -> index of its component."""
    return {name: i for i, component in enumerate(components) for name in component}


def inter_component_traffic(job: Job, components: Sequence[Component]) -> float:
    """The summed rate of the edges between different components (§4.4.1 objective)."""
    where = owner(components)
    return sum(rate for src, dst, rate in job.edges if where[src] != where[dst])


def inter_component_percent(job: Job, components: Sequence[Component]) -> float:
    """Inter-component traffic as a percentage of all traffic (Enorm Fig. 15); 0 for a job
    without traffic."""
    total = job.total_traffic()
    # divided first: 100 * traffic may overflow a float when the traffic itself does not
    return 0.0 if total == 0 else 100.0 * (inter_component_traffic(job, components) / total)
