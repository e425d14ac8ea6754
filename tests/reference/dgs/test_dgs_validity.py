"""P-validity (Def. 3.2): reference.dgs.validity.check_plan accepts exactly the plans the
declarative spec.dgs.validity.is_valid accepts; generated valid plans are valid; errors name
the rule, the workers and the tags; the plan JSON form round-trips."""

from __future__ import annotations

import pytest
from hypothesis import given, settings, strategies as st

from support.dgs_helpers import example
from reference.dgs.strategies import arbitrary_plans, valid_plans
from reference.dgs.validity import check_plan
from spec.dgs.plan import Plan, Worker, plan_from_json
from spec.dgs.validity import is_valid
from spec.errors import InputError

NAMES = ("key_counter.py:KeyCounter", "windowing_typed.py:TypedWindow", "page_view.py:PageViewJoin")
STREAMS = ("s0", "s1")


def accepts(name: str, plan: Plan) -> bool:
    try:
        check_plan(example(name), plan)
    except InputError:
        return False
    return True


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=60)
@given(data=st.data())
def test_check_plan_agrees_with_spec(name: str, data: st.DataObject) -> None:
    program = example(name)
    plan = data.draw(st.one_of(arbitrary_plans(program, STREAMS), valid_plans(program, STREAMS)))
    assert accepts(name, plan) == is_valid(program, plan)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=40)
@given(data=st.data())
def test_generated_valid_plans_are_valid_and_round_trip(name: str, data: st.DataObject) -> None:
    program = example(name)
    plan = data.draw(valid_plans(program, STREAMS))
    assert is_valid(program, plan)
    assert plan_from_json(plan.to_json()) == plan


def kc_worker(wid: str, tags: list[tuple[str, int]], children: tuple[Worker, ...] = ()) -> Worker:
    impls = frozenset((t, "s0") for t in tags)
    if children:
        return Worker(wid, "State", impls, "fork", "join", children)
    return Worker(wid, "State", impls)


def test_v2_error_names_workers_and_tags() -> None:
    plan = Plan(kc_worker("root", [], (kc_worker("a", [("r", 0)]), kc_worker("b", [("i", 0)]))))
    with pytest.raises(InputError, match=r"V2: workers 'a' and 'b' .* \('r', 0\)@s0 \(a\) depends on \('i', 0\)@s0 \(b\)"):
        check_plan(example("key_counter.py:KeyCounter"), plan)


def test_v1_errors() -> None:
    typed = example("windowing_typed.py:TypedWindow")
    bad_pred = Plan(Worker("root", "Total", frozenset(), "split", "add", (
        Worker("l", "Partial", frozenset({("barrier", "s0")})), Worker("r", "Partial", frozenset()))))
    with pytest.raises(InputError, match="V1: state type 'Partial' cannot process tag 'barrier'"):
        check_plan(typed, bad_pred)
    wrong_fork = Plan(Worker("root", "Total", frozenset(), "split_partial", "add", (
        Worker("l", "Partial", frozenset()), Worker("r", "Partial", frozenset()))))
    with pytest.raises(InputError, match="V1: fork 'split_partial' has type Partial"):
        check_plan(typed, wrong_fork)
    with pytest.raises(InputError, match="V1: the root's state type must be the initial type 'Total'"):
        check_plan(typed, Plan(Worker("root", "Partial", frozenset())))


def test_duplicate_responsibility_is_refused() -> None:
    plan = Plan(kc_worker("root", [("i", 0)], (kc_worker("a", [("i", 0)]), kc_worker("b", []))))
    with pytest.raises(InputError, match="handled by two workers"):
        check_plan(example("key_counter.py:KeyCounter"), plan)


def test_plan_json_errors_have_paths() -> None:
    with pytest.raises(InputError, match=r"plan.root.impl_tags\[0\]"):
        plan_from_json({"root": {"id": "w", "impl_tags": [{"tag": 1}]}})
    with pytest.raises(InputError, match="worker id 'w' is used twice"):
        plan_from_json({"root": {"id": "w", "children": [{"id": "w"}, {"id": "x"}]}})
    plan = plan_from_json({"root": {"id": "w", "impl_tags": [{"tag": ["i", 1], "stream": "s0"}],
                                    "children": [{"id": "a"}, {"id": "b"}]}})
    assert plan.root.fork == "fork" and plan.root.impl_tags == frozenset({(("i", 1), "s0")})
