"""Enorm §4.3-4.4 in spec.fusion: Table 1, PA^c, components, validity, job validation."""

from __future__ import annotations

import math

import pytest

from spec.errors import InputError
from spec.fusion.components import (
    component_pa,
    is_flexible,
    is_partition,
    is_stateless,
    is_valid_fusion,
    max_parallelism,
)
from spec.fusion.job import Job, Operator, OperatorKind


def test_table_1() -> None:
    assert (OperatorKind.MAP.stateful, OperatorKind.MAP.flexible) == (False, True)
    assert (OperatorKind.COMPUTE.stateful, OperatorKind.COMPUTE.flexible) == (True, True)
    assert (OperatorKind.CONSOLIDATE.stateful, OperatorKind.CONSOLIDATE.flexible) == (False, False)


def word_count() -> Job:
    # Example 1a/1b: O1 counts words, O2 counts letters, both partitioned on "word".
    ops = (
        Operator("O1", OperatorKind.COMPUTE, frozenset({"word"})),
        Operator("O2", OperatorKind.COMPUTE, frozenset({"word"})),
        Operator("O4", OperatorKind.CONSOLIDATE, frozenset()),
    )
    return Job(ops, {"word": 5000, "letter": 26}, (("O1", "O2", 10.0), ("O2", "O4", 1.0)))


def test_example_1b_and_cardinality() -> None:
    job = word_count()
    c1 = frozenset({"O1", "O2"})
    assert component_pa(job, c1) == {"word"}
    assert max_parallelism(job, c1) == job.cardinality(frozenset({"word"})) == 5000
    assert job.cardinality(frozenset()) == 1
    assert max_parallelism(job, frozenset({"O4"})) == 1
    assert is_flexible(job, c1) and not is_stateless(job, c1)
    assert is_stateless(job, frozenset({"O4"})) and not is_flexible(job, frozenset({"O4"}))
    unbounded = Job(job.operators, {"word": None, "letter": 26}, job.edges)
    assert unbounded.cardinality(frozenset({"word", "letter"})) == math.inf


def test_validity_conditions() -> None:
    job = word_count()
    assert is_valid_fusion(job, [frozenset({"O1", "O2"}), frozenset({"O4"})])
    # condition 2: O4 shares no attribute with O2
    assert not is_valid_fusion(job, [frozenset({"O1"}), frozenset({"O2", "O4"})])
    # condition 1: every operator exactly once
    assert not is_partition(job, [frozenset({"O1", "O2"})])
    assert not is_partition(job, [frozenset({"O1", "O2"}), frozenset({"O2", "O4"})])
    assert not is_partition(job, [frozenset({"O1", "O2", "O4"}), frozenset()])


@pytest.mark.parametrize(
    "edges, domains, message",
    [
        ((("O1", "O9", 1.0),), {"word": 2}, "unknown operator"),
        ((("O1", "O1", 1.0),), {"word": 2}, "self-loop"),
        ((("O1", "O2", -1.0),), {"word": 2}, "rate"),
        ((("O1", "O2", 1.0), ("O1", "O2", 2.0)), {"word": 2}, "duplicate edge"),
        ((("O1", "O2", 1.0), ("O2", "O1", 1.0)), {"word": 2}, "cycle"),
        ((), {}, "unknown partition attribute"),
        ((), {"word": 0}, "domain size"),
    ],
)
def test_bad_jobs_are_input_errors(edges: tuple[tuple[str, str, float], ...],
                                   domains: dict[str, int | None], message: str) -> None:
    ops = (Operator("O1", OperatorKind.MAP, frozenset({"word"})),
           Operator("O2", OperatorKind.MAP, frozenset({"word"})))
    with pytest.raises(InputError, match=message):
        Job(ops, domains, edges)


def test_duplicate_operator() -> None:
    op = Operator("O1", OperatorKind.MAP, frozenset())
    with pytest.raises(InputError, match="duplicate operator"):
        Job((op, op), {}, ())
