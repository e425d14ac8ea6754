"""The DGS suite's driver-side order check (conformance.dgs.checks.release) and the restricted
plans with a late stream that make the release rule's fixpoint matter:
no false positive on the drawn cases, and a one-line bug of the mailbox or of the step planner is
seen without any Spark job."""

from __future__ import annotations

import pytest

from spec.dgs.streams import StreamEvent

from conformance.dgs.checks.release import check
from conformance.dgs.cases import draw_dgs_cases
from conformance.dgs.suite import replay
from conformance.dgs.cases import STREAMS, case_to_json
from support.source_rewrite import rewritten_function

CASES = draw_dgs_cases(100, 0)


def test_the_driver_plans_every_drawn_case_once_and_in_dependence_order() -> None:
    assert check(CASES) == []


def test_some_cases_restrict_the_streams_tags_and_open_with_a_late_stream() -> None:
    restricted = [c for c in CASES if len({impl for w in c.plan.workers() for impl in w.impl_tags})
                  < len({t for w in c.plan.workers() for t, _ in w.impl_tags}) * len(STREAMS)]
    late = [c for c in restricted if any(
        not items or not isinstance(items[0], StreamEvent) or items[0].ts > 2 for items in c.streams.values())]
    assert len(restricted) >= 10 and len(late) >= 5


def test_a_mailbox_that_compares_with_the_latest_held_event_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import spark_impl.dgs.release as release

    wrong = rewritten_function(release, "_release", "earliest[e.tag] = min(", "earliest[e.tag] = max(")
    monkeypatch.setattr(release, "_release", wrong)
    found = check(CASES)
    assert len(found) >= 3 and all("out of key order" in p for _, p in found), found[:3]
    index = found[0][0]
    record = {"engine": "driver-plan", "case_data": case_to_json(CASES[index])}
    assert replay(record, None)[0] is False  # the saved form replays the failure


def test_a_step_planner_that_keeps_its_leaf_segment_after_a_barrier_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import spark_impl.dgs.driver as driver

    wrong = rewritten_function(driver, "steps_of", "            segment = [[] for _ in topo.leaves]\n", "")
    monkeypatch.setattr(driver, "steps_of", wrong)
    found = check(CASES[:20])
    assert found and any("planned twice" in p or "cut a tick into steps wrongly" in p for _, p in found)


def test_inlining_after_the_second_group_and_on_a_foreign_leaf_are_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    import spark_impl.dgs.driver as driver

    honest = driver.inline_short_segments
    late = rewritten_function(driver, "inline_short_segments", "previous[1] + inlined + sync[1]", "previous[1] + sync[1] + inlined")
    anywhere = rewritten_function(driver, "inline_short_segments", "leaf in topo.subtree_leaves[sync[0]]", "True")
    monkeypatch.setattr(driver, "inline_short_segments", late)
    assert any("out of key order" in p or "steps wrongly" in p for _, p in check(CASES))
    monkeypatch.setattr(driver, "inline_short_segments", anywhere)
    assert any("nor an ancestor" in p or "steps wrongly" in p for _, p in check(CASES))
    monkeypatch.setattr(driver, "inline_short_segments", honest)
    assert check(CASES) == []
