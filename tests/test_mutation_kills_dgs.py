"""The DGS suite's Spark-free checks of ``spark_impl/dgs`` promises no differential run sees:
each test applies a one-line bug (the function recompiled from its source with one change)
and shows the suite's check fails on it, and passes on the original."""

from __future__ import annotations

import importlib
from typing import Any

import pytest

from support.source_rewrite import rewritten_function

from conformance.dgs.checks.release import check as order
from conformance.dgs.cases import draw_dgs_cases

CASES = draw_dgs_cases(100, 0)


def _with(monkeypatch: pytest.MonkeyPatch, module: str, name: str, old: str, new: str) -> None:
    found = importlib.import_module(module)
    monkeypatch.setattr(found, name, rewritten_function(found, name, old, new))


def test_the_original_front_end_and_step_planner_keep_their_contracts() -> None:
    assert order(CASES) == []


def test_a_synchronizing_group_that_takes_in_another_workers_event_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """dgs/driver.py line 106 (``last[0] ==
    event.worker`` -> ``<=``): a group of ``w1`` takes in the next
    synchronizing event of any worker ``w2 >= w1``, which then runs at ``w1``. Only a
    non-ancestor ``w1`` gives a wrong trace, so the order check saw it at seed 1 only; the
    steps contract sees every such merge (7 of 100 cases at seed 0)."""
    _with(monkeypatch, "spark_impl.dgs.driver", "steps_of", "last[0] == event.worker", "last[0] <= event.worker")
    found = order(CASES)
    assert len(found) >= 3 and all("cut a tick into steps wrongly" in p for _, p in found), found[:2]


@pytest.mark.parametrize("name, old, new, seen", [
    # dgs/driver.py:core/ReplaceBinaryOperator_Mul_Div:0 (line 138) and :1 (line 149): the keyword-only
    # marker made positional-only (the arguments by name refused, an option by position accepted)
    ("run_dgs", "streams: Streams, *,", "streams: Streams, /,", "run_dgs (arguments by name)"),
    ("run_dgs_many", "jobs: Sequence[DgsJob], *,", "jobs: Sequence[DgsJob], /,", "run_dgs_many(spark=..., jobs=[])"),
    ("run_dgs", "error if len(jobs) == 1 else", "error if len(jobs) > 1 else", "located its one job"),
])
def test_the_batch_executors_call_forms_are_checked(monkeypatch: pytest.MonkeyPatch, name: str, old: str, new: str,
                                                    seen: str) -> None:
    """``run_dgs`` (the one-job wrapper) is never called by the suite, and no call there
    names its arguments or passes an option by position."""
    import spark_impl.dgs as package
    import spark_impl.dgs.driver as driver
    from conformance.dgs.checks.plans import validity_problems

    target = "run_dgs_many" if "len(jobs)" in old else name
    broken = rewritten_function(driver, target, old, new)
    monkeypatch.setattr(package, target, broken)
    monkeypatch.setattr(driver, target, broken)  # run_dgs calls the module's run_dgs_many
    assert any(seen in p for p in validity_problems(CASES[:1])), validity_problems(CASES[:1])


@pytest.mark.parametrize("old, new, seen", [
    # dgs/plans.py:core/ReplaceBinaryOperator_BitOr_BitXor:2 (line 26): a tag of the root and the one leaf dropped
    ("frozenset(root_impl) | frozenset(leaf_impl[0])", "frozenset(root_impl) ^ frozenset(leaf_impl[0])", "one leaf set"),
    # dgs/plans.py:core/ReplaceBinaryOperator_Mul_Div:0 (line 14): the tags by name refused
    ("leaf_impl: Sequence[Sequence[ImplTag]], *,", "leaf_impl: Sequence[Sequence[ImplTag]], /,", "raised TypeError"),
])
def test_balanced_plan_edge_requests_are_checked(monkeypatch: pytest.MonkeyPatch, old: str, new: str, seen: str) -> None:
    from conformance.dgs.checks.plans import check

    _with(monkeypatch, "spark_impl.dgs.plans", "balanced_plan", old, new)
    assert any(seen in p for p in check(100, 0)), check(100, 0)[:2]


def test_an_arrival_model_off_its_formula_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """dgs/release.py:core/ReplaceBinaryOperator_Add_BitOr:0 (line 73, ``item.ts + delay`` ->
    ``item.ts | delay``): arrival times stay FIFO and inside ``[ts, ts + delay + jitter]``, the
    bounds the order check knew; with explicit delays and no jitter the formula is exact."""
    import spark_impl.dgs.release as release

    from support.source_rewrite import rewritten_member

    broken = rewritten_member(release, release.Arrival, "times", "float(item.ts + delay + rng", "float(item.ts | delay + rng")
    monkeypatch.setattr(release.Arrival, "times", broken)
    assert any("the arrival model says" in p for _, p in order(CASES))


def test_a_long_input_that_can_never_be_released_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """dgs/release.py:core/ReplaceComparisonOperator_GtE_Is:0 (line 112, ``position >=
    len(pending)`` -> ``is``): equal ints past 256 are distinct objects, so a long input whose
    event can never be released looped forever instead of being refused."""
    import spark_impl.dgs.release as release

    from conformance.dgs.checks.release import refusal_problem

    monkeypatch.setattr(release, "release_schedule", rewritten_function(release, "release_schedule",
                                                             "if position >= len(pending) and buffered:",
                                                             "if position is len(pending) and buffered:"))
    found = next((p for p in map(refusal_problem, CASES[:3]) if p is not None), None)  # each hang costs 10 s
    assert found is not None and "300 heartbeats did not return" in found, found


@pytest.mark.parametrize("new", ["pending[position][0] >= now:", "pending[position][0] is not now:"])
def test_items_received_before_they_arrive_are_caught(monkeypatch: pytest.MonkeyPatch, new: str) -> None:
    """dgs/release.py:core/ReplaceComparisonOperator_LtE_GtE:0 and _LtE_IsNot:0 (line 98): every
    item received at the first poll - one tick, every output right."""
    import spark_impl.dgs.release as release

    monkeypatch.setattr(release, "release_schedule", rewritten_function(release, "release_schedule",
                                                             "pending[position][0] <= now:", new))
    assert any("received before they arrived" in p for _, p in order(CASES))


def test_negative_timestamps_are_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    """dgs/release.py:core/ReplaceUnaryOperator_USub_Not:0 (line 70, ``last = -math.inf`` -> ``not
    math.inf``: arrivals clamped at 0) and :1 (line 122, ``far = (-math.inf, "")`` -> ``(not
    math.inf, "")``: a stream without a timer passes an event of negative key); every drawn case
    had timestamps >= 0."""
    import spark_impl.dgs.release as release
    from support.source_rewrite import rewritten_member

    times = rewritten_member(release, release.Arrival, "times", "last = -math.inf", "last = not math.inf")
    monkeypatch.setattr(release.Arrival, "times", times)
    assert any("the arrival model says" in p for _, p in order(CASES))


def test_a_mutable_released_event_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """dgs/release.py:core/ReplaceTrueWithFalse:0 (line 44, ``Released``'s ``frozen=True`` -> ``False``)."""
    import dataclasses

    import spark_impl.dgs.release as release

    mutable = dataclasses.make_dataclass("Released", [(f.name, f.type, f) for f in dataclasses.fields(release.Released)])
    monkeypatch.setattr(release, "Released", mutable)
    assert any("Released is a frozen value" in p for _, p in order(CASES))


def test_a_mutable_dgs_job_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """dgs/driver.py:core/ReplaceTrueWithFalse:0 (line 77, ``@dataclass(frozen=True)`` -> ``False``)."""
    import dataclasses

    import spark_impl.dgs as package
    import spark_impl.dgs.driver as driver
    from conformance.dgs.checks.plans import validity_problems

    mutable = dataclasses.make_dataclass("DgsJob", [(f.name, f.type, f) for f in dataclasses.fields(driver.DgsJob)])
    monkeypatch.setattr(package, "DgsJob", mutable)
    monkeypatch.setattr(driver, "DgsJob", mutable)
    assert any("frozen value" in p for p in validity_problems(CASES[:1]))


@pytest.mark.parametrize("old, new", [
    ("sync[0] == previous[0]", "sync[0] is previous[0]"),  # driver.py:core/ReplaceComparisonOperator_Eq_Is:1 (line 128)
    ("sync[0] == previous[0]", "sync[1] == previous[0]"),  # driver.py:core/NumberReplacer:20 (line 128)
    ("for events in segment) < below", "for events in segment) <= below"),
])
def test_inlining_left_off_or_stretched_is_caught(monkeypatch: pytest.MonkeyPatch, old: str, new: str) -> None:
    """The inlining optimization is off (or inlines ``below`` events) with these changes: outputs
    and the trace oracle stay right, only which worker's trace shows the events changes. The
    ``is`` change differs only for worker ids that are equal but not identical - a live
    mailbox restored from its commit - which the order check now mixes into every tick."""
    _with(monkeypatch, "spark_impl.dgs.driver", "inline_short_segments", old, new)
    found = order(CASES)
    assert found and all("inline_below" in p for _, p in found), found[:2]


def test_a_schedule_that_accepts_tick_zero_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """``release_schedule`` must refuse tick 0 (line 86, not executed by a default differential
    run). Here it returns no tick instead; a change that lets tick 0 into the loop never
    returns, which the check reports after 10 s (not shown here: the thread would spin on)."""
    _with(monkeypatch, "spark_impl.dgs.release", "release_schedule", 'raise InputError(f"must be >= 1, got {tick}", "tick")',
          "return []")
    assert any("tick 0 was accepted" in p for _, p in order(CASES[:1]))


def test_the_live_harness_allows_a_repeated_delivery_only_after_a_kill_between_delivery_and_record() -> None:
    """``dgs/streaming.py`` ``deliver``: ``if commit.delivered >= commit.batch: return`` -> ``>``
    delivers a delivered batch again at every restart and replay; the sinks are idempotent by
    batch id, so outputs stay right, but a ``CallbackSink``'s function sees each call."""
    from conformance.dgs.engines.live import Collected

    class Frame:
        def collect(self) -> list[dict[str, Any]]:
            return [{"job": 0, "value": "1"}]

    collected = Collected()
    for batch in (0, 1, 1, 2):
        collected(Frame(), batch)
    assert collected.repeated({1}) is None
    assert "{1: 2}" in (collected.repeated(set()) or "")
    collected(Frame(), 1)
    assert "{1: 3}" in (collected.repeated({1}) or "")


@pytest.mark.parametrize("old, new, seen", [
    ("for holds, problem in checks:", "for holds, problem in checks[:2]:", "(V1 broken only) was accepted"),
    ("(v2_holds(program, plan), ", "(v1_holds(program, plan), ", "(V2 broken only) was accepted"),
])
def test_a_plan_validation_that_skips_v1_or_v2_is_caught(monkeypatch: pytest.MonkeyPatch, old: str, new: str,
                                                         seen: str) -> None:
    """Review finding 1 (topology.py:77-82): ``check_valid_plan`` "names the first Def. 3.2
    condition the plan breaks"; checking only known tags and unique responsibility, or V1 in
    place of V2, passed the two variants tried before (each breaks V1 too). A leaf naming a
    fork/join breaks V1 alone, a tag moved out of its owner's branch V2 alone."""
    import spark_impl.dgs.topology as topology
    from conformance.dgs.checks.plans import validity_problems

    monkeypatch.setattr(topology, "check_valid_plan", rewritten_function(topology, "check_valid_plan", old, new))
    found = validity_problems(CASES[:12])
    assert any(seen in p for p in found), found[:2]


def test_an_invalid_input_instance_run_by_the_batch_driver_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review finding 2 (release.py:87, ``check_valid_input(streams)`` deleted): every drawn
    input is a valid instance, and a schedule given items of a stream out of order, or a
    repeated timestamp, ends as usual - the bad input ran as if it were good."""
    import spark_impl.dgs.driver as driver
    import spark_impl.dgs.release as release
    from conformance.dgs.checks.release import invalid_input_problem

    broken = rewritten_function(release, "release_schedule", "check_valid_input(streams)", "None")
    monkeypatch.setattr(release, "release_schedule", broken)
    monkeypatch.setattr(driver, "release_schedule", broken)  # run_dgs_many calls the driver's name
    found = invalid_input_problem(CASES[0])
    assert found is not None and "swapped" in found and "expected InputError" in found, found
    assert any("one whose input has" in p for _, p in order(CASES[:3]))


def test_a_driver_that_polls_every_time_unit_is_caught(monkeypatch: pytest.MonkeyPatch) -> None:
    """Review finding 8 (release.py:115, ``now += tick`` -> ``now += 1``): the driver "polls
    every tick time units"; the poll check used tick 1, where the two agree, and a schedule of
    more ticks gives the same outputs."""
    _with(monkeypatch, "spark_impl.dgs.release", "release_schedule", "now += tick", "now += 1")
    found = order(CASES)
    assert any("polled every 250 time units, came out in ticks of [1, 1, 1]" in p for _, p in found), found[:2]


@pytest.mark.parametrize("new, seen", [
    ("self.delays.get(stream) or rng.randint(0, self.max_delay)", "with the explicit delay 0"),
    ("self.delays.get(stream, 0)", "the delays are never drawn"),
])
def test_explicit_zero_delays_and_drawn_delays_are_checked(monkeypatch: pytest.MonkeyPatch, new: str,
                                                           seen: str) -> None:
    """Review finding 9 (release.py:69): ``Arrival.delays`` are "explicit per-stream delays",
    the others drawn in ``[0, max_delay]``; the explicit delays tried were all positive and
    the drawn ones were only bounded, so an explicit 0 redrawn, or no delay ever drawn, kept
    every bound checked."""
    from support.source_rewrite import rewritten_method

    import spark_impl.dgs.release as release

    broken = rewritten_method(release.Arrival, "times", "self.delays.get(stream, rng.randint(0, self.max_delay))", new)
    monkeypatch.setattr(release.Arrival, "times", broken)
    found = order(CASES[:5])
    assert found and all(seen in p for _, p in found), found[:2]
