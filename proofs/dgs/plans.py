"""A bounded, exhaustive check of DGS Theorem 3.5 for one program: every small P-valid
synchronization plan on every small valid input, under several executor seeds.

Theorem 3.5: for a consistent program, every P-valid plan (Def. 3.2) run on a valid input
instance (Def. 3.3) outputs the multiset ``spec(sort(u))``. The property tests sample plans
and inputs; this enumerates them:

* plans: the root alone, or the root forked once into two leaves (every fork/join pair of the
  initial type); every assignment of each implementation tag ``(tag, stream)`` to the root,
  the left or the right worker, or to no one when no stream event uses it; kept when
  :func:`reference.dgs.validity.check_plan` accepts it (V1, V2);
* inputs: every sequence of at most ``max_events`` sampled events (one per tag), each on any
  stream, timestamps 1, 2, ... in sequence order, a final heartbeat on every stream;
* the executor's nondeterminism (message delays) under ``seeds`` seeds.

A counterexample is a plan, an input and a seed whose output differs from the spec's.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from itertools import product
from typing import Any, Iterator, Sequence

from reference.dgs.executor import execute_plan
from reference.dgs.small_scope import sample_events
from reference.dgs.validity import check_plan
from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Event, Program
from spec.dgs.semantics import multiset_equal, spec_run
from spec.dgs.streams import Heartbeat, Item, StreamEvent, expected_output, sort_streams
from spec.errors import InputError


@dataclass(frozen=True)
class PlanCheck:
    """``plans`` valid plans, ``inputs`` input instances, ``runs`` executions; ``complete``
    when the bound was covered within the budget; ``counterexample`` = (plan, input, seed)."""

    plans: int
    inputs: int
    runs: int
    complete: bool
    counterexample: tuple[Plan, dict[str, list[Item]], int] | None


def plans(program: Program, streams: Sequence[str]) -> Iterator[Plan]:
    """Every valid plan of depth <= 1 (module docstring)."""
    impls = [(tag, s) for s in streams for tag in program.sorted_tags]
    yield Plan(Worker("w0", program.initial, frozenset(impls)))
    for fork, join in program.fork_join_pairs(program.initial):
        for places in product((0, 1, 2), repeat=len(impls)):
            sides: list[set[Any]] = [set(), set(), set()]
            for impl, place in zip(impls, places):
                sides[place].add(impl)
            plan = Plan(Worker("w0", program.initial, frozenset(sides[0]), fork.name, join.name, (
                Worker("w1", fork.left, frozenset(sides[1])),
                Worker("w2", fork.right, frozenset(sides[2])))))
            try:
                check_plan(program, plan)
            except InputError:
                continue
            yield plan


def inputs(events: Sequence[Event], streams: Sequence[str], max_events: int) -> Iterator[dict[str, list[Item]]]:
    """Every input of the bound (module docstring)."""
    for length in range(max_events + 1):
        for chosen in product(events, repeat=length):
            for placed in product(streams, repeat=length):
                items: dict[str, list[Item]] = {s: [] for s in streams}
                for ts, (event, stream) in enumerate(zip(chosen, placed), start=1):
                    items[stream].append(StreamEvent(ts, event))
                for stream in streams:
                    items[stream].append(Heartbeat(length + 1))
                yield items


def check_theorem_3_5(program: Program, streams: Sequence[str] = ("s0",), max_events: int = 2,
                      seeds: int = 2, budget: float = 10.0) -> PlanCheck:
    """Run every plan of the bound on every input of the bound under ``seeds`` seeds."""
    events = sample_events(program, per_tag=1)
    cases = list(inputs(events, streams, max_events))
    deadline = time.monotonic() + budget
    count = runs = 0
    for plan in plans(program, streams):
        count += 1
        for streams_in in cases:
            expected = expected_output(program, streams_in)
            final, _ = spec_run(program, sort_streams(streams_in))
            for seed in range(seeds):
                if time.monotonic() > deadline:
                    return PlanCheck(count, len(cases), runs, False, None)
                runs += 1
                result = execute_plan(program, plan, streams_in, seed)
                if not (multiset_equal(result.outputs, expected)
                        and program.states_equal(program.initial, result.final_state, final)):
                    return PlanCheck(count, len(cases), runs, False, (plan, streams_in, seed))
    return PlanCheck(count, len(cases), runs, True, None)
