"""``spark_impl.dgs.plan_checks`` (the near-linear P-validity predicates ``check_valid_plan`` and
so ``streamproof dgs-plan`` use) gives the same answer as the declarative
``spec.dgs.validity`` for each of the four predicates, on arbitrary and on valid plans; and
``reference.dgs.validity.check_plan`` stays near-linear on plans with thousands of workers."""

from __future__ import annotations

import time

import pytest
from hypothesis import given, settings, strategies as st

from support.dgs_helpers import example
from reference.dgs.strategies import arbitrary_plans, valid_plans
from reference.dgs.validity import check_plan
from spark_impl.dgs import plan_checks
from spark_impl.dgs.topology import check_valid_plan
from spec.dgs import validity
from spec.dgs.plan import Plan, Worker

NAMES = ("key_counter.py:KeyCounter", "windowing_typed.py:TypedWindow", "page_view.py:PageViewJoin",
         "windowing.py:EventWindow")
STREAMS = ("s0", "s1", "s2")


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=80)
@given(data=st.data())
def test_near_linear_predicates_equal_the_spec(name: str, data: st.DataObject) -> None:
    program = example(name)
    plan = data.draw(st.one_of(arbitrary_plans(program, STREAMS), valid_plans(program, STREAMS)))
    assert plan_checks.tags_known(program, plan) == validity.tags_known(program, plan)
    assert plan_checks.responsibility_unique(plan) == validity.responsibility_unique(plan)
    assert plan_checks.v1_holds(program, plan) == validity.v1_holds(program, plan)
    assert plan_checks.v2_holds(program, plan) == validity.v2_holds(program, plan)


def _balanced(ids: list[int], streams: int) -> Worker:
    """A balanced plan of EventWindow workers, one ``value`` stream per leaf."""
    if len(ids) == 1:
        return Worker(f"w{ids[0]}", "State", frozenset({("value", f"s{ids[0]}")}))
    half = len(ids) // 2
    return Worker(f"n{ids[0]}_{len(ids)}", "State", frozenset(), "fork", "join",
                  (_balanced(ids[:half], streams), _balanced(ids[half:], streams)))


def test_plan_validation_of_two_thousand_workers_is_near_linear() -> None:
    """k = 1000 one-stream leaves (1,999 workers): the quadratic check took minutes
    (benchmarks/cli_scaling.py has the figures); both checks now take well under a second."""
    program = example("windowing.py:EventWindow")
    plan = Plan(_balanced(list(range(1000)), 1000))
    started = time.monotonic()
    check_valid_plan(program, plan)
    check_plan(program, plan)
    assert time.monotonic() - started < 5
