"""Enorm fusion: the efficient Alg. 1 (reference.fusion.greedy) against the literal one
(spec.fusion.greedy), validity of the components, the greedy's traffic order, the §7.6
baseline and the random job generator."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings, strategies as st

from reference.fusion.baseline import baseline_fusion
from reference.fusion.greedy import automatic_fusion as fast_fusion
from reference.fusion.random_jobs import TUPLES_PER_OPERATOR, random_job
from spec.errors import InputError
from spec.fusion.components import (
    component_pa,
    inter_component_percent,
    inter_component_traffic,
    is_connected,
    is_valid_fusion,
    owner,
)
from spec.fusion.greedy import SCORES, automatic_fusion
from spec.fusion.job import Job, Operator, OperatorKind

ATTRIBUTES = ["a", "b", "c", "d"]


@st.composite
def jobs(draw: st.DrawFn) -> Job:
    n = draw(st.integers(min_value=1, max_value=7))
    ops = tuple(
        Operator(f"o{k}", draw(st.sampled_from(list(OperatorKind))),
                 frozenset(draw(st.sets(st.sampled_from(ATTRIBUTES), max_size=4))))
        for k in range(n)
    )
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=12)) if pairs else []
    # small integer rates so ties are common; 0 is a possible rate
    edges = tuple((f"o{i}", f"o{j}", float(draw(st.integers(min_value=0, max_value=4)))) for i, j in chosen)
    domains = {a: draw(st.none() | st.integers(min_value=1, max_value=9)) for a in ATTRIBUTES}
    return Job(ops, domains, edges)


def canonical(components: list[frozenset[str]]) -> set[frozenset[str]]:
    return set(components)


@given(jobs(), st.sampled_from(SCORES))
def test_reference_equals_spec(job: Job, score: str) -> None:
    assert canonical(fast_fusion(job, score)) == canonical(automatic_fusion(job, score))


@given(jobs(), st.sampled_from(SCORES))
def test_components_are_valid_connected_partitions(job: Job, score: str) -> None:
    components = automatic_fusion(job, score)
    assert is_valid_fusion(job, components)
    assert all(is_connected(job, c) for c in components)
    for c in components:
        if len(c) > 1:
            assert component_pa(job, c)


@given(jobs(), st.sampled_from(SCORES))
def test_fusion_is_maximal(job: Job, score: str) -> None:
    # Alg. 1 stops only when no positive-score edge joins components that share attributes
    components = automatic_fusion(job, score)
    where = owner(components)
    for src, dst, rate in job.edges:
        if where[src] != where[dst]:
            common = component_pa(job, components[where[src]]) & component_pa(job, components[where[dst]])
            assert not common or (score == "comm" and rate == 0)


@given(jobs())
def test_greedy_respects_traffic_order(job: Job) -> None:
    # Alg. 1's first fusion is the heaviest edge whose operators share an attribute (the
    # first in scan order among ties), and components only grow, so that edge ends internal.
    components = automatic_fusion(job, "comm")
    where = owner(components)
    position = {name: k for k, name in enumerate(job.names)}
    valid = [(-rate, position[s], k) for k, (s, d, rate) in enumerate(job.edges)
             if rate > 0 and job.operator(s).pa & job.operator(d).pa]
    if valid:
        src, dst, _ = job.edges[min(valid)[2]]
        assert where[src] == where[dst]
    assert inter_component_traffic(job, components) <= job.total_traffic()


def test_heaviest_compatible_edge_wins() -> None:
    ops = (
        Operator("s", OperatorKind.MAP, frozenset({"x", "y"})),
        Operator("a", OperatorKind.COMPUTE, frozenset({"x"})),
        Operator("b", OperatorKind.CONSOLIDATE, frozenset({"y"})),
    )
    job = Job(ops, {"x": 4, "y": None}, (("s", "a", 1.0), ("s", "b", 5.0)))
    components = fast_fusion(job, "comm")
    assert canonical(components) == {frozenset({"s", "b"}), frozenset({"a"})}
    assert inter_component_traffic(job, components) == 1.0
    assert inter_component_percent(job, components) == pytest.approx(100 / 6)
    assert job.cardinality(component_pa(job, frozenset({"s", "b"}))) == math.inf


@settings(max_examples=30)
@given(jobs(), st.integers(min_value=0, max_value=1000))
def test_baseline_is_a_valid_partition(job: Job, seed: int) -> None:
    components = baseline_fusion(job, random.Random(seed))
    assert is_valid_fusion(job, components)
    assert components == baseline_fusion(job, random.Random(seed))


@settings(max_examples=10)
@given(st.integers(min_value=4, max_value=60), st.integers(min_value=0, max_value=10_000))
def test_random_jobs_follow_section_7(n: int, seed: int) -> None:
    job = random_job(n, random.Random(seed))
    assert len(job.operators) == n
    assert all(1 <= len(op.pa) <= 30 for op in job.operators)
    sent: dict[str, float] = {}
    for src, _, rate in job.edges:
        assert rate >= 0
        sent[src] = sent.get(src, 0.0) + rate
    assert all(total <= TUPLES_PER_OPERATOR + 1e-6 for total in sent.values())
    for score in SCORES:
        assert is_valid_fusion(job, fast_fusion(job, score))


def test_unknown_score_and_bad_jobs() -> None:
    op = Operator("o", OperatorKind.MAP, frozenset({"x"}))
    job = Job((op,), {"x": 2}, ())
    with pytest.raises(InputError):
        fast_fusion(job, "size")
    with pytest.raises(InputError):
        automatic_fusion(job, "size")
    with pytest.raises(InputError):
        random_job(3, random.Random(0))
