"""The DGS release schedule and network model (``spark_impl/dgs/release.py``), on drawn cases:

* the network model: "item ``i`` of a stream arrives at ``max(arrival of item i-1, ts_i +
  delay + jitter)``" with the delay drawn in ``[0, max_delay]`` and the jitter in ``[0,
  max_jitter]`` unless ``Arrival.delays`` gives "explicit per-stream delays" (an explicit 0
  is kept);
* "the driver polls every tick time units; the items that arrived by then are received": an
  item is received only once it arrived;
* ``release_schedule`` "Raises InputError for an invalid input instance (Def. 3.3), an event
  no worker handles, or ``tick < 1``", and an input whose event can never be released is
  refused (a stream stops before a dependent event); no input gives no tick;
* a released event is a value (``Released`` is frozen: mailboxes holding them are pickled into
  live commits);
* the batch driver "validates every job (program, plan, input) before any Spark job starts":
  ``run_dgs_many`` refuses an invalid input of its second job, located at ``jobs[1]``.
"""

from __future__ import annotations

import math
from dataclasses import FrozenInstanceError, replace
from typing import Any

import pytest

from spec.dgs.streams import Heartbeat, StreamEvent
from spec.errors import InputError

from spark_impl.dgs import run_dgs_many
from spark_impl.dgs.release import Arrival, release_schedule
from spark_impl.dgs.topology import topology

from conformance.core.refusals import refused
from conformance.core.watchdog import call_with_timeout
from conformance.dgs.cases import DgsCase, draw_dgs_cases, program_of, shifted
from conformance.dgs.engines.batch import dgs_job

CASES = draw_dgs_cases(40, 0)
IDS = [f"case{i}" for i in range(len(CASES))]


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_arrivals_are_fifo_per_stream_and_within_the_delay_bound(case: DgsCase) -> None:
    bound = case.max_delay + case.max_jitter
    times = Arrival(case.max_delay, case.max_jitter, case.seed).times(case.streams)
    for stream, items in sorted(case.streams.items()):
        arrived = times.get(stream, [])
        assert len(arrived) == len(items)
        previous = -math.inf
        for item, t in zip(items, arrived):
            assert previous <= t and item.ts <= t and (t == previous or t <= item.ts + bound), (stream, item.ts, t)
            previous = t


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_explicit_delays_without_jitter_give_the_arrival_formula_exactly(case: DgsCase) -> None:
    """On every timestamp moved below zero (negative timestamps are valid, Def. 3.3)."""
    delays = {stream: 3 + 5 * n for n, stream in enumerate(sorted(case.streams))}
    early = shifted(case, -10**6).streams
    exact = Arrival(0, 0, case.seed, delays).times(early)
    for stream, items in sorted(early.items()):
        want, last = [], -math.inf
        for item in items:
            last = max(last, float(item.ts + delays[stream]))
            want.append(last)
        assert exact.get(stream) == want


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_explicit_delay_of_zero_is_kept(case: DgsCase) -> None:
    stamps = {stream: [float(item.ts) for item in items] for stream, items in case.streams.items()}
    assert Arrival(25, 0, case.seed, {stream: 0 for stream in case.streams}).times(case.streams) == stamps


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_the_delays_not_given_are_drawn(case: DgsCase) -> None:
    """With ``max_delay`` 1000 and no jitter some item arrives after its timestamp for one of
    ten seeds (all streams drawing 0 ten times has odds below 1e-20)."""
    stamps = {stream: [float(item.ts) for item in items] for stream, items in case.streams.items()}
    assert any(Arrival(1000, 0, seed).times(case.streams) != stamps for seed in range(case.seed, case.seed + 10))


def alone(case: DgsCase) -> tuple[Any, Any, str, StreamEvent] | None:
    """The case's program and topology, and an event whose release needs its own stream alone."""
    program = program_of(case.name)
    topo = topology(program, case.plan)
    found = next(((stream, item) for stream, items in sorted(case.streams.items()) for item in items
                  if isinstance(item, StreamEvent)
                  and topo.release_streams[(program.tag(item.payload), stream)] == frozenset({stream})), None)
    return None if found is None else (program, topo, found[0], found[1])


POLLED = [c for c in draw_dgs_cases(100, 0) if alone(c) is not None]


@pytest.mark.parametrize("case", POLLED)
def test_an_item_is_received_only_once_it_arrived_and_the_driver_polls_every_tick(case: DgsCase) -> None:
    """Three events 100 time units apart, no delay: three ticks at tick 1; polled every 250
    time units they take at most two polls (where polls start is the driver's choice)."""
    found = alone(case)
    assert found is not None
    program, topo, stream, item = found
    streams: dict[str, list[Any]] = {stream: [StreamEvent(ts, item.payload) for ts in (1, 101, 201)] + [Heartbeat(301)]}
    assert [len(t) for t in release_schedule(program, topo, streams, Arrival(), 1)] == [1, 1, 1]
    wide = [len(t) for t in release_schedule(program, topo, streams, Arrival(), 250)]
    assert sum(wide) == 3 and len(wide) <= 2


def test_a_released_event_is_a_frozen_value() -> None:
    case = POLLED[0]
    program = program_of(case.name)
    released = release_schedule(program, topology(program, case.plan), case.streams, Arrival(), 1)[0][0]
    with pytest.raises(FrozenInstanceError):
        setattr(released, "key", (0, "s0"))


def refusal_of(program: Any, topo: Any, streams: Any, tick: int) -> str | None:
    """``refused`` of ``release_schedule``, stopped after 10 s (a schedule that never ends)."""
    finished, said = call_with_timeout(lambda: refused(lambda: release_schedule(program, topo, streams, Arrival(), tick),
                                                       None, "the schedule"), 10.0, interrupt=True)
    return said if finished else "did not return within 10 s"


@pytest.mark.parametrize("case", CASES[:6], ids=IDS[:6])
def test_a_tick_below_one_is_refused(case: DgsCase) -> None:
    program = program_of(case.name)
    assert refusal_of(program, topology(program, case.plan), case.streams, 0) is None


WAITING = [(case, next(((stream, item) for stream, items in sorted(case.streams.items()) for item in items
                        if isinstance(item, StreamEvent)
                        and len(topology(program_of(case.name), case.plan).release_streams[
                            (program_of(case.name).tag(item.payload), stream)]) > 1), None)) for case in CASES[:12]]


@pytest.mark.parametrize("case, waiting", [(c, w) for c, w in WAITING if w is not None][:6])
def test_an_input_whose_event_can_never_be_released_is_refused(case: DgsCase, waiting: Any) -> None:
    """One stream holding an event that waits for the plan's other streams, then a heartbeat:
    a valid instance of its one stream (Def. 3.3) whose event is never released."""
    program = program_of(case.name)
    stream, item = waiting
    streams = {stream: [item, Heartbeat(item.ts + 1)]}
    assert refusal_of(program, topology(program, case.plan), streams, 1) is None


@pytest.mark.parametrize("case", CASES[:6], ids=IDS[:6])
def test_no_input_gives_no_tick(case: DgsCase) -> None:
    program = program_of(case.name)
    assert release_schedule(program, topology(program, case.plan), {s: [] for s in case.streams}, Arrival(), 1) == []


def bad_inputs(case: DgsCase) -> list[tuple[str, dict[str, Any]]]:
    """The case's input with two items of one stream swapped, and with a timestamp repeated."""
    stream = next(s for s, items in sorted(case.streams.items()) if len(items) >= 3)
    items = list(case.streams[stream])
    return [("items swapped", {**case.streams, stream: [items[1], items[0], *items[2:]]}),
            ("a timestamp repeated", {**case.streams, stream: [items[0], replace(items[1], ts=items[0].ts), *items[2:]]})]


@pytest.mark.parametrize("index", range(2))
@pytest.mark.parametrize("case", CASES[:3], ids=IDS[:3])
def test_the_batch_driver_refuses_an_invalid_input_instance_of_a_job_before_spark(case: DgsCase, index: int) -> None:
    """No Spark: ``spark`` is None, so an accepted input shows as an AttributeError on it."""
    what, streams = bad_inputs(case)[index]
    assert refused(lambda: run_dgs_many(None, [dgs_job(case), dgs_job(replace(case, streams=streams))]), "jobs[1]",
                   f"a job whose input has {what}") is None
    with pytest.raises(InputError):
        release_schedule(program_of(case.name), topology(program_of(case.name), case.plan), streams, Arrival(), 1)


def test_the_drawn_cases_give_events_released_alone_and_events_that_wait() -> None:
    """The parametrized tests above have cases to run on."""
    assert len(POLLED) >= 5 and sum(w is not None for _, w in WAITING) >= 3
