"""The DGS suite's oracles of the driver's plans (:mod:`conformance.dgs.plan_oracles`): they
hold on spark_impl's driver, plan builder and plan validation for the drawn cases, and each
names a hand-built wrong planner, builder or validation (the collaborators are parameters of
the oracles):

* ``order`` (:mod:`conformance.dgs.plan_oracles.release_order`, DGS Thm 3.5): ticks released
  out of order, an event lost or planned twice, a synchronizing group that takes in another
  worker's event, inlining left off or done where the definition does not allow it;
* ``plan`` (:mod:`conformance.dgs.plan_oracles.plans`, Def. 3.1 and 3.2): a builder whose
  leaves own the wrong sets, a validation that accepts every plan, or skips V1 or V2.

Also: the drawn cases give the order oracle what to see (streams that carry only some tags,
cases that open with an event held behind a late stream: the release rule's fixpoint).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from spec.dgs.plan import Plan, Worker
from spec.dgs.streams import StreamEvent
from spec.dgs.validity import responsibility_unique, tags_known, v1_holds, v2_holds
from spec.errors import InputError

from spark_impl.dgs.driver import steps_of
from spark_impl.dgs.plans import balanced_plan
from spark_impl.dgs.release import release_schedule

from conformance.dgs.cases import STREAMS, case_to_json, draw_dgs_cases
from conformance.dgs.plan_oracles import plans, release_order
from conformance.dgs.plan_oracles.release_order import DRIVER, Planner
from conformance.dgs.suite import replay

CASES = draw_dgs_cases(100, 0)


def test_spark_impls_driver_plans_every_drawn_case_once_and_in_dependence_order() -> None:
    assert release_order.check(CASES) == []


def test_some_cases_restrict_the_streams_tags_and_open_with_a_late_stream() -> None:
    restricted = [c for c in CASES if len({impl for w in c.plan.workers() for impl in w.impl_tags})
                  < len({t for w in c.plan.workers() for t, _ in w.impl_tags}) * len(STREAMS)]
    late = [c for c in restricted if any(
        not items or not isinstance(items[0], StreamEvent) or items[0].ts > 2 for items in c.streams.values())]
    assert len(restricted) >= 10 and len(late) >= 5


def found_by(planner: Planner, cases: Any = CASES) -> list[str]:
    return [text for _, text in release_order.check(cases, planner)]


def test_ticks_released_in_reverse_are_out_of_key_order() -> None:
    reverse = replace(DRIVER, schedule=lambda *args: release_schedule(*args)[::-1])
    assert any("out of key order" in text for text in found_by(reverse))


def test_an_event_lost_by_the_schedule_is_never_planned() -> None:
    lossy = replace(DRIVER, schedule=lambda *args: [tick[1:] or tick for tick in release_schedule(*args)])
    assert any("never planned" in text for text in found_by(lossy))


def test_an_event_released_twice_is_planned_twice() -> None:
    twice = replace(DRIVER, schedule=lambda *args: [*release_schedule(*args), release_schedule(*args)[0]])
    assert any("planned twice" in text for text in found_by(twice))


def other_workers_group(topo: Any, released: list[Any]) -> list[Any]:
    """``steps_of``, then the first synchronizing group also takes the next step's group."""
    steps = steps_of(topo, released)
    for i in range(len(steps) - 1):
        if steps[i][1] is not None and steps[i + 1][1] is not None and steps[i][1][0] != steps[i + 1][1][0]:
            segment, (worker, events) = steps[i]
            later, (_, more) = steps[i + 1]
            return [*steps[:i], (segment, (worker, events + more)), (later, None), *steps[i + 2:]]
    return steps


def test_a_group_that_takes_in_another_workers_event_is_a_wrong_cut() -> None:
    found = found_by(replace(DRIVER, steps=other_workers_group))
    assert found and all("cut a tick into steps wrongly" in text for text in found)


def test_inlining_left_off_is_named() -> None:
    found = found_by(replace(DRIVER, inline=lambda topo, steps, below: steps))
    assert found and all("inline_below" in text for text in found)


def test_inlining_under_a_foreign_worker_is_named() -> None:
    def anywhere(topo: Any, steps: list[Any], below: int) -> list[Any]:
        if below <= 0 or not steps:
            return steps
        merged = [steps[0]]
        for segment, sync in steps[1:]:
            previous_segment, previous = merged[-1]
            events = [entry for leaf_events in segment for entry in leaf_events]
            if previous is not None and sync is not None and sync[0] == previous[0] and len(events) < below:
                merged[-1] = (previous_segment, (previous[0], previous[1] + sorted(events, key=lambda e: e[0])
                                                 + sync[1]))
            else:
                merged.append((segment, sync))
        return merged

    assert any("inline_below" in text for text in found_by(replace(DRIVER, inline=anywhere)))


def test_spark_impls_plan_builder_and_validation_keep_their_definitions() -> None:
    assert plans.check(200, 0) == [] and plans.validity_problems(CASES[:24]) == []


def test_a_builder_whose_two_leaves_are_one_worker_or_swapped_is_named() -> None:
    def one_worker_for_two(root_impl: Any, leaf_impl: Any, **kw: Any) -> Plan:
        if len(leaf_impl) == 2:
            return Plan(Worker("w0", kw["root_type"], frozenset(root_impl) | frozenset(leaf_impl[0])))
        return balanced_plan(root_impl, leaf_impl, **kw)

    assert any("the leaves own" in text for text in plans.check(200, 0, one_worker_for_two))

    def swapped(root_impl: Any, leaf_impl: Any, **kw: Any) -> Plan:
        return balanced_plan(root_impl, list(leaf_impl)[::-1], **kw)

    assert any("the leaves own" in text for text in plans.check(200, 0, swapped))


def unique(program: Any, plan: Plan) -> bool:
    return responsibility_unique(plan)


def validation(*conditions: Any) -> Any:
    """A plan validation that checks only ``conditions`` (``spec.dgs.validity`` predicates
    called with the program and the plan)."""
    def validate(program: Any, plan: Plan) -> None:
        if not all(holds(program, plan) for holds in conditions):
            raise InputError("not P-valid", "plan")
    return validate


@pytest.mark.parametrize("conditions, named", [
    ((), "with an unknown tag was accepted"),
    ((tags_known, unique), "(V1 broken only) was accepted"),
    ((tags_known, unique, v1_holds), "(V2 broken only) was accepted"),
], ids=["every plan", "no V1 or V2", "V1 in place of V2"])
def test_a_validation_that_accepts_invalid_plans_is_named(conditions: Any, named: str) -> None:
    assert any(named in text for text in plans.validity_problems(CASES[:24], validation(*conditions)))


def test_a_validation_of_every_condition_holds() -> None:
    assert plans.validity_problems(CASES[:24], validation(tags_known, unique, v1_holds, v2_holds)) == []


def test_a_saved_driver_plan_case_replays_through_the_order_oracle() -> None:
    passes, explanation = replay({"engine": "driver-plan", "case_data": case_to_json(CASES[0])}, None)
    assert passes and "dependent events in key order" in explanation
