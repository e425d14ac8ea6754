"""Klink's least-slack choice, joins, the memory policy (spec.klink.slack / memory) and the
reference policies (reference.klink.policies) on a scripted view."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import pytest
from hypothesis import given, strategies as st

from reference.klink.policies import Fcfs, HighestRate, Klink, RoundRobin, StreamBox, make_policy
from spec.errors import InputError
from spec.klink.memory import best_release, released, under_pressure
from spec.klink.slack import Stage, event_cost, join_slack, least_slack, queued_cost, slack

values = st.floats(min_value=-100, max_value=100)


@dataclass
class View:
    """A SchedulerView whose answers are tables."""

    slacks: dict[int, float]
    heads: dict[int, float] = field(default_factory=dict)
    rates: dict[int, float] = field(default_factory=dict)
    release: dict[int, float] = field(default_factory=dict)
    deadlines: dict[int, float] = field(default_factory=dict)
    mem: float = 0.0

    def slack(self, query: int, now: float) -> float:
        return self.slacks[query]

    def head_arrival(self, query: int) -> float:
        return self.heads[query]

    def rate_priority(self, query: int) -> float:
        return self.rates[query]

    def releasable(self, query: int) -> float:
        return self.release[query]

    def memory(self) -> float:
        return self.mem

    def next_deadline(self, query: int) -> float:
        return self.deadlines[query]


@given(st.lists(values, min_size=1, max_size=10))
def test_least_slack_picks_the_minimum(slacks: list[float]) -> None:
    index = least_slack(slacks)
    assert slacks[index] == min(slacks)
    assert index == slacks.index(min(slacks))


@given(st.lists(values, min_size=1, max_size=10))
def test_klink_policy_picks_a_least_slack_query(slacks: list[float]) -> None:
    view = View(dict(enumerate(slacks)))
    chosen = Klink(None).choose(view, 0.0, list(range(len(slacks))))
    assert slacks[chosen] == min(slacks)


@given(st.lists(st.tuples(values, st.floats(min_value=0, max_value=50)), min_size=1, max_size=10))
def test_memory_policy_maximizes_release_then_least_slack(rows: list[tuple[float, float]]) -> None:
    view = View({i: s for i, (s, _) in enumerate(rows)}, release={i: p for i, (_, p) in enumerate(rows)}, mem=10.0)
    policy = Klink(bound=5.0)
    chosen = policy.choose(view, 0.0, list(range(len(rows))))
    top = max(p for _, p in rows)
    assert rows[chosen][1] == top
    assert rows[chosen][0] == min(s for s, p in rows if p == top)
    assert policy.memory_mode_decisions == 1


def test_memory_episode_ends_and_rests() -> None:
    view = View({0: -1.0, 1: 5.0}, release={0: 0.0, 1: 9.0}, mem=10.0)
    policy = Klink(bound=5.0, episode=1.0)
    assert policy.choose(view, 0.0, [0, 1]) == 1  # memory mode: most released
    assert policy.choose(view, 1.0, [0, 1]) == 0  # episode over: least slack
    assert policy.choose(view, 1.5, [0, 1]) == 0  # resting
    assert policy.choose(view, 2.0, [0, 1]) == 1  # a new episode
    view.mem = 4.0
    assert policy.choose(view, 2.1, [0, 1]) == 0  # memory halved: episode ends
    assert policy.episodes == 2


@given(st.lists(values, min_size=1, max_size=5))
def test_join_slack_is_the_minimum_over_inputs(per_input: list[float]) -> None:
    assert join_slack(per_input) == min(per_input)


def test_baselines() -> None:
    view = View({}, heads={0: 3.0, 1: 1.0, 2: 2.0}, rates={0: 1.0, 1: 5.0, 2: 7.0},
                deadlines={0: 9.0, 1: 4.0, 2: 8.0})
    assert Fcfs().choose(view, 0.0, [0, 1, 2]) == 1
    assert HighestRate().choose(view, 0.0, [0, 1, 2]) == 2
    assert StreamBox().choose(view, 0.0, [0, 1, 2]) == 1
    rr = RoundRobin()
    assert [rr.choose(view, 0.0, [0, 1, 2]) for _ in range(4)] == [0, 1, 2, 0]
    assert rr.choose(view, 0.0, [0, 2]) == 2
    with pytest.raises(InputError):
        make_policy("lifo", 1.0)


@given(st.lists(st.tuples(st.floats(min_value=0, max_value=2), st.floats(min_value=0, max_value=1)),
                min_size=1, max_size=5),
       st.lists(st.floats(min_value=0, max_value=100), min_size=5, max_size=5))
def test_queued_cost_is_linear_in_the_queues(stages_: list[tuple[float, float]], raw: list[float]) -> None:
    stages = [Stage(s, c) for s, c in stages_]
    queued = raw[: len(stages)]
    total = queued_cost(stages, queued)
    assert total == pytest.approx(sum(n * event_cost(stages, k) for k, n in enumerate(queued)))
    assert total >= 0
    # the recursion c_k + S_k * cost(k + 1): what survives stage k costs what waits at k + 1
    costs = [event_cost(stages, k) for k in range(len(stages))] + [0.0]
    for k, stage in enumerate(stages):
        assert costs[k] == pytest.approx(stage.cost + stage.selectivity * costs[k + 1])


def test_eq1() -> None:
    assert slack(10.0, 4.0, 2.5) == 3.5
    assert event_cost([Stage(0.5, 2.0), Stage(1.0, 4.0)]) == 4.0


@given(st.floats(min_value=0, max_value=1e6), st.lists(st.floats(min_value=0, max_value=1), min_size=1, max_size=5))
def test_released_is_between_zero_and_the_queue(sz: float, sel: list[float]) -> None:
    p = released(sz, sel)
    assert -1e-9 <= p <= sz + 1e-9
    assert p == pytest.approx(sz * (1 - math.prod(sel)))
    k, best = best_release(sz, sel)
    assert best == pytest.approx(released(sz, sel)) or best >= released(sz, sel)


def test_pressure_switch() -> None:
    assert under_pressure(10.0, 10.0) and not under_pressure(9.9, 10.0)
    assert best_release(10.0, [0.5, 3.0]) == (1, 5.0)
