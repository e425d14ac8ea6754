"""The DGS suite's driver-side check of spark_impl's mailbox and step plan.

The Spark DGS executor is consistent by one argument (``spark_impl.dgs.release``'s docstring,
Theorem 3.5): of two *dependent* events the one with the smaller order key ``(ts, stream)`` is
processed first. The driver decides that order before any Spark job runs - which tick
releases each event (:func:`~spark_impl.dgs.release.release_schedule`), how a tick's events
become steps (:func:`~spark_impl.dgs.driver.steps_of`: a leaf segment, then a synchronizing
group) and which short segments are inlined into a group
(:func:`~spark_impl.dgs.driver.inline_short_segments`). The outputs oracle sees a wrong order
only when the two events happen not to commute on that case's state; this check sees every
wrong order, without Spark, on every drawn case:

* every input event is released, and planned, exactly once, on its responsible worker (a leaf
  segment's leaf, a synchronizing group's worker) or, inlined, on an ancestor of it;
* for every dependent pair ``a`` < ``b`` (order keys), ``a`` is processed before ``b``: an
  earlier tick, or the same tick and an earlier step, or the same step with ``a`` in the leaf
  segment and ``b`` in the synchronizing group, or both in the same list with ``a`` first.
  (Events of one step's leaf segment on different leaves run in parallel; V2 makes them
  independent, so such a dependent pair is itself a finding.)
* every tick's cut into steps is :func:`~spark_impl.dgs.driver.steps_of`'s definition
  (:func:`steps_problem`): read in order, the steps give back the tick's released events
  (each leaf segment in key order, then its group); a leaf segment holds only its leaf's
  events, a synchronizing group only its worker's (a worker with children); a step is never
  empty, only the last one has no group, and two groups of one worker are merged unless leaf
  events come between them. (A group that took in another worker's event would run it where
  it does not belong: at an ancestor the outputs are the same, elsewhere they are not, and
  the order oracle sees only the latter.)
* the short segments inlined are those :func:`~spark_impl.dgs.driver.inline_short_segments`'s
  definition names (:func:`inline_problem`), no fewer (an optimization left off changes only
  which worker's trace shows the events, so no other oracle sees it) and no more. Every other
  released event of a tick is a pickled copy, as a live query's mailbox restored from its
  commit holds them: the planner must compare worker ids by value, not identity;
* ``release_schedule`` refuses, with InputError, a tick below 1 and an event that waits for
  a stream the input does not have (:func:`refusal_problem`, on the first cases: a schedule
  that never ends is reported after 10 s);
* the simulated network keeps its promise (:func:`arrival_problem`): item ``i`` of a stream
  arrives at ``max(arrival of item i-1, ts_i + delay + jitter)`` with the delay and jitter in
  ``[0, max_delay]`` and ``[0, max_jitter]`` (``spark_impl.dgs.release``'s docstring). A
  broken model still gives correct outputs (any arrival order must), but the case then no
  longer exercises the delays and reordering it claims to. With explicit per-stream delays
  (``Arrival.delays``) and no jitter the formula is exact; an explicit delay of 0
  is kept, and the delays not given are drawn (:func:`_delays_problem`);
* the driver receives an item only once it arrived (:func:`poll_problem`): three
  events of one stream that no other stream holds back, 100 time units apart, come out in
  three ticks; and it polls every ``tick`` time units: with ticks of 250 they take at most two;
* an input that is not a valid instance is refused (:func:`invalid_input_problem`): the batch
  driver "validates every job (program, plan, input) before any Spark job starts".
"""

from __future__ import annotations

import math
import pickle
from dataclasses import FrozenInstanceError, replace
from typing import Any, Hashable, Sequence

from spec.dgs.streams import Heartbeat, StreamEvent
from spec.errors import InputError

from conformance.core.refusals import refused
from conformance.core.watchdog import call_with_timeout
from conformance.dgs.cases import DgsCase, program_of, shifted
from conformance.dgs.engines.batch import dgs_job

REFUSALS = 3
""":func:`refusal_problem` runs on this many cases (a schedule that never ends costs 10 s each)."""

Position = tuple[int, int, int, int, int]
"""``(tick, step, 0 = leaf segment / 1 = synchronizing group, leaf or -1, index in its list)``."""


Plan = tuple[dict[tuple[int, str], list[Position]], dict[tuple[int, str], Hashable], dict[tuple[int, str], str]]
"""Per order key: where the driver plans the event, its tag as released, the worker that runs it."""


def planned_positions(case: DgsCase) -> Plan:
    """Where spark_impl's driver plans each event (by order key), each released event's tag
    and the worker that processes it (a leaf, or the synchronizing group's worker)."""
    from spark_impl.dgs.driver import inline_short_segments, steps_of
    from spark_impl.dgs.release import Arrival, release_schedule
    from spark_impl.dgs.topology import topology

    program = program_of(case.name)
    topo = topology(program, case.plan)
    ticks = release_schedule(program, topo, case.streams, Arrival(case.max_delay, case.max_jitter, case.seed),
                             case.tick)
    positions: dict[tuple[int, str], list[Position]] = {}
    tags: dict[tuple[int, str], Hashable] = {}
    by: dict[tuple[int, str], str] = {}
    for t, fresh in enumerate(ticks):
        released = [pickle.loads(pickle.dumps(e)) if i % 2 else e for i, e in enumerate(fresh)]  # restored ones
        for event in released:
            tags[event.key] = event.tag
        cut = steps_of(topo, released)
        wrong = steps_problem(topo, released, cut)
        steps = inline_short_segments(topo, cut, case.inline_below)
        wrong = wrong or inline_problem(topo, cut, case.inline_below, steps)
        if wrong is not None:
            raise StepsError(f"tick {t}: {wrong}")
        for s, (segment, sync) in enumerate(steps):
            for leaf, events in enumerate(segment):
                for i, (key, _) in enumerate(events):
                    positions.setdefault(key, []).append((t, s, 0, leaf, i))
                    by[key] = topo.leaves[leaf]
            for i, (key, _) in enumerate(sync[1] if sync is not None else ()):
                positions.setdefault(key, []).append((t, s, 1, -1, i))
                by[key] = sync[0] if sync is not None else ""
    return positions, tags, by


class StepsError(Exception):
    """A tick's steps break :func:`~spark_impl.dgs.driver.steps_of`'s definition."""


def steps_problem(topo: Any, released: Sequence[Any], steps: Sequence[Any]) -> str | None:
    """None when ``steps`` is the cut of ``released`` (key order) that ``steps_of`` defines
    (module docstring), else what is wrong."""
    by_key = {event.key: event for event in released}
    replayed: list[Any] = []
    for number, (segment, sync) in enumerate(steps):
        for leaf, events in enumerate(segment):
            for key, _ in events:
                if key not in by_key or by_key[key].worker != topo.leaves[leaf]:
                    return f"step {number}: event {key} in the leaf segment of leaf {topo.leaves[leaf]}"
        replayed += sorted((key for events in segment for key, _ in events), key=lambda k: (k[0], k[1]))
        if sync is None:
            if number != len(steps) - 1 or not any(segment):
                return f"step {number} has no synchronizing group and is {'empty' if not any(segment) else 'not the last'}"
            continue
        worker, events = sync
        if topo.leaf_index(worker) is not None or not events:
            return f"step {number}: a synchronizing group of {'leaf ' if events else 'no events at '}{worker}"
        strangers = [key for key, _ in events if key not in by_key or by_key[key].worker != worker]
        if strangers:
            return (f"step {number}: the synchronizing group of {worker} holds {strangers[:3]}, events of "
                    f"{[by_key[k].worker if k in by_key else None for k in strangers[:3]]}")
        replayed += [key for key, _ in events]
        following = steps[number + 1] if number + 1 < len(steps) else None
        if following is not None and not any(following[0]) and following[1] is not None and following[1][0] == worker:
            return f"steps {number} and {number + 1}: two groups of {worker} with no leaf event between, not merged"
    if replayed != [event.key for event in released]:
        return f"the steps hold the events {replayed[:8]}, released {[e.key for e in released][:8]}"
    return None


def inline_problem(topo: Any, steps: Sequence[Any], below: int, merged: Sequence[Any]) -> str | None:
    """None when ``merged`` is ``inline_short_segments(topo, steps, below)`` by its docstring:
    step ``i`` is inlined into the group before it exactly when ``below > 0``, step ``i - 1``
    and step ``i`` have groups of one worker ``w``, and step ``i``'s leaf segment has fewer than
    ``below`` events, all on leaves under ``w``; its events go, in key order, between the two
    groups."""
    expected: list[Any] = []
    for i, (segment, sync) in enumerate(steps):
        before = steps[i - 1][1] if i else None
        events = [entry for leaf_events in segment for entry in leaf_events]
        if (below > 0 and before is not None and sync is not None and sync[0] == before[0]
                and len(events) < below and all(leaf in topo.subtree_leaves[sync[0]]
                                                for leaf, leaf_events in enumerate(segment) if leaf_events)):
            kept, (worker, group) = expected[-1]
            expected[-1] = (kept, (worker, group + sorted(events, key=lambda entry: entry[0]) + sync[1]))
        else:
            expected.append((segment, sync))
    if list(merged) != expected:
        inlined = len(steps) - len(merged)
        return (f"inline_below {below}: {len(steps)} steps became {len(merged)} ({inlined} inlined), the definition "
                f"inlines {len(steps) - len(expected)}, or not the same way")
    return None


def refusal_problem(case: DgsCase) -> str | None:
    """None when ``release_schedule`` refuses, with InputError, a tick below 1 and an input of
    one stream holding an event that waits for other streams of the plan (the case's first
    event with two release streams or more, then a heartbeat: a valid instance of its one
    stream, Def. 3.3, whose event can never be released), and gives no tick for no input."""
    from spark_impl.dgs.release import Arrival, release_schedule
    from spark_impl.dgs.topology import topology

    program = program_of(case.name)
    topo = topology(program, case.plan)
    waiting = next(((stream, item) for stream, items in sorted(case.streams.items()) for item in items
                    if isinstance(item, StreamEvent)
                    and len(topo.release_streams[(program.tag(item.payload), stream)]) > 1), None)
    attempts: list[tuple[str, Any, int]] = [("tick 0", case.streams, 0)]
    if waiting is not None:
        attempts.append((f"only stream {waiting[0]}, an event of which waits for the others",
                         {waiting[0]: [waiting[1], Heartbeat(waiting[1].ts + 1)]}, 1))
        # the same with 300 heartbeats after it: item counts past 256 are distinct int objects
        attempts.append((f"only stream {waiting[0]}, an event of which waits for the others, then 300 heartbeats",
                         {waiting[0]: [waiting[1], *(Heartbeat(waiting[1].ts + k) for k in range(1, 301))]}, 1))
    for what, streams, tick in attempts:
        def attempt(streams: Any = streams, tick: int = tick) -> str:
            try:
                release_schedule(program, topo, streams, Arrival(), tick)
                return "was accepted"
            except InputError:
                return ""
            except Exception as error:  # noqa: BLE001 - a crash instead of a refusal is a finding
                return f"raised {type(error).__name__}: {error}"

        # a schedule that never ends is the finding (and is stopped: conformance.core.watchdog)
        finished, said = call_with_timeout(attempt, 10.0, interrupt=True)
        said = said if finished else "did not return within 10 s"
        if said:
            return f"release_schedule of {case.name} with {what} {said} (expected InputError)"
    if release_schedule(program, topo, {s: [] for s in case.streams}, Arrival(), 1) != []:
        return "release_schedule of no input gave ticks"
    return None


def arrival_problem(case: DgsCase) -> str | None:
    """None when every item's arrival time (``spark_impl.dgs.release.Arrival.times``) is, per
    stream, FIFO and either its predecessor's or within ``[ts, ts + max_delay + max_jitter]``."""
    from spark_impl.dgs.release import Arrival

    bound = case.max_delay + case.max_jitter
    times = Arrival(case.max_delay, case.max_jitter, case.seed).times(case.streams)
    for stream, items in sorted(case.streams.items()):
        arrived = times.get(stream, [])
        if len(arrived) != len(items):
            return f"stream {stream}: {len(arrived)} arrival times for {len(items)} items"
        previous = -math.inf
        for item, t in zip(items, arrived):
            if t < previous or t < item.ts or (t != previous and t > item.ts + bound):
                return (f"stream {stream}: the item at ts {item.ts} arrives at {t} (previous item at {previous}), "
                        f"outside FIFO order or [ts, ts + {bound}] (max delay {case.max_delay}, jitter "
                        f"{case.max_jitter}, seed {case.seed})")
            previous = t

    delays = {stream: 3 + 5 * n for n, stream in enumerate(sorted(case.streams))}
    early = shifted(case, -10**6).streams  # negative timestamps are valid (Def. 3.3)
    exact = Arrival(0, 0, case.seed, delays).times(early)  # no jitter: the docstring's formula exactly
    for stream, items in sorted(early.items()):
        want, last = [], -math.inf
        for item in items:
            last = max(last, float(item.ts + delays[stream]))
            want.append(last)
        if exact.get(stream) != want:
            return (f"stream {stream} with the explicit delay {delays[stream]} and no jitter arrives at "
                    f"{exact.get(stream, [])[:5]}, the arrival model says {want[:5]}")
    return _delays_problem(case)


def _delays_problem(case: DgsCase) -> str | None:
    """None when an explicit delay of 0 is kept and the delays not given are drawn:
    ``Arrival.delays`` are "explicit per-stream delays", the others are drawn from the seed in
    ``[0, max_delay]`` (release.py's docstring). With every stream's delay given as 0 and no
    jitter, every item arrives at its timestamp, whatever ``max_delay`` (25 here); with no
    delay given, ``max_delay`` 1000 and no jitter, some item of the case arrives after its
    timestamp for one of ten seeds (all streams drawing 0 ten times has odds below 1e-20).
    The drawn cases give no explicit delays and the explicit ones tried are all positive, so
    an explicit 0 taken as "draw one" or delays never drawn still kept every bound checked."""
    from spark_impl.dgs.release import Arrival

    stamps = {stream: [float(item.ts) for item in items] for stream, items in case.streams.items()}
    if not any(stamps.values()):
        return None
    zero = Arrival(25, 0, case.seed, {stream: 0 for stream in case.streams}).times(case.streams)
    if zero != stamps:
        late = next(s for s in sorted(stamps) if zero.get(s) != stamps[s])
        return (f"every stream with the explicit delay 0 (max delay 25, no jitter, seed {case.seed}): stream {late} "
                f"arrives at {zero.get(late, [])[:5]}, its timestamps are {stamps[late][:5]}")
    seeds = range(case.seed, case.seed + 10)
    if all(Arrival(1000, 0, seed).times(case.streams) == stamps for seed in seeds):
        return (f"no delay given, max delay 1000, no jitter: for seeds {seeds.start}-{seeds.stop - 1} every item "
                "arrives at its timestamp (the delays are never drawn)")
    return None


def problem(case: DgsCase) -> str | None:
    """None when the network model keeps its promise (:func:`arrival_problem`) and the driver
    plans every event once and dependent events in key order."""
    program = program_of(case.name)
    try:
        arrival = arrival_problem(case)
    except Exception as error:  # noqa: BLE001 - a crash of the arrival model is a finding
        return f"the arrival model raised {type(error).__name__}: {error}"
    if arrival is not None:
        return arrival
    try:
        positions, tags, by = planned_positions(case)
    except StepsError as error:
        return f"the driver cut a tick into steps wrongly: {error}"
    except Exception as error:  # noqa: BLE001 - a crash of the driver's planning is a finding
        return f"planning the case raised {type(error).__name__}: {error}"
    wanted = {(item.ts, stream): program.tag(item.payload) for stream, items in case.streams.items()
              for item in items if isinstance(item, StreamEvent)}
    lost = sorted(set(wanted) - set(positions))
    twice = sorted(k for k, p in positions.items() if len(p) > 1)
    extra = sorted(set(positions) - set(wanted))
    if lost or twice or extra:
        return (f"the driver's plan does not hold every event once: never planned {lost[:5]}, planned "
                f"twice {twice[:5]}, not in the input {extra[:5]}")
    unreleased = sorted(set(wanted) - set(tags))
    if unreleased:
        return f"events planned but never released by the mailbox: {unreleased[:5]}"
    owner = {impl: w for w in case.plan.workers() for impl in w.impl_tags}
    for key, worker in sorted(by.items()):
        responsible = owner.get((wanted[key], key[1]))
        if responsible is None or not any(w.id == worker for w in case.plan.workers() if responsible in w.walk()):
            return (f"event {_show(key, wanted)} is planned on worker {worker}, neither its responsible worker "
                    f"{responsible.id if responsible else None} nor an ancestor of it")
    order = sorted(positions)
    for i, a in enumerate(order):
        for b in order[i + 1:]:
            if not program.depends(wanted[a], wanted[b]):
                continue
            pa, pb = positions[a][0], positions[b][0]
            if not _before(pa, pb):
                return (f"dependent events {_show(a, wanted)} and {_show(b, wanted)} are planned out of key order: "
                        f"{_where(pa)} vs {_where(pb)} (max delay {case.max_delay}, jitter {case.max_jitter}, "
                        f"tick {case.tick}, inline_below {case.inline_below})")
    return None


def _before(a: Position, b: Position) -> bool:
    """``a`` is processed strictly before ``b`` (module docstring)."""
    if a[:2] != b[:2]:
        return a[:2] < b[:2]
    if a[2] != b[2]:
        return a[2] < b[2]
    return a[3] == b[3] and a[4] < b[4]


def _show(key: tuple[int, str], tags: dict[tuple[int, str], Any]) -> str:
    return f"(ts {key[0]}, {key[1]}, tag {tags[key]!r})"


def _where(p: Position) -> str:
    part = "the synchronizing group" if p[2] else f"the leaf segment (leaf {p[3]})"
    return f"tick {p[0]}, step {p[1]}, {part}, #{p[4]}"


def check(cases: list[DgsCase]) -> list[tuple[int, str]]:
    """``(case index, problem)`` of every case whose plan breaks the module's promise."""
    found = [(i, found) for i, case in enumerate(cases) for found in [problem(case)] if found is not None]
    for i, case in enumerate(cases[:REFUSALS]):
        refused = refusal_problem(case)
        if refused is not None:  # the first only: a schedule that never ends keeps a thread busy
            return found + [(i, refused)]
    found += [(i, late) for i, case in enumerate(cases) for late in [poll_problem(case)] if late is not None]
    invalid = invalid_input_problem(cases[0]) if cases else None
    return found + ([(0, invalid)] if invalid is not None else [])


def invalid_input_problem(case: DgsCase) -> str | None:
    """None when ``run_dgs_many`` refuses, with InputError located at ``jobs[1]``, the case's
    input with two items of one stream swapped and with one stream's timestamp repeated, run
    after the case itself as ``jobs[0]`` (``release_schedule``: "Raises InputError for an
    invalid input instance (Def. 3.3)"; a stream's timestamps increase strictly).

    Every drawn case is a valid instance, so no run ever gave the executor a bad one; and a
    schedule that takes it anyway mostly still ends - the items arrive in stream order, the
    last heartbeat releases everything - so the bad input ran as if it were good. No Spark is
    needed: the jobs are validated before the first Spark call (``spark`` is None here; an
    accepted input shows as an AttributeError on it)."""
    from spark_impl.dgs import run_dgs_many

    stream = next((s for s, items in sorted(case.streams.items()) if len(items) >= 3), None)
    if stream is None:
        return None
    items = list(case.streams[stream])
    bad: list[tuple[str, list[Any]]] = [
        (f"items 0 and 1 of stream {stream} swapped (ts {items[1].ts}, then {items[0].ts})",
         [items[1], items[0], *items[2:]]),
        (f"ts {items[0].ts} repeated by item 1 of stream {stream}",
         [items[0], replace(items[1], ts=items[0].ts), *items[2:]])]
    for what, changed in bad:
        streams = {**case.streams, stream: changed}
        problem = refused(lambda: run_dgs_many(None, [dgs_job(case), dgs_job(replace(case, streams=streams))]),
                          "jobs[1]", f"run_dgs_many of a valid job and one whose input has {what}")
        if problem is not None:
            return f"{problem} (an invalid input instance, DGS Def. 3.3)"
    return None


def poll_problem(case: DgsCase) -> str | None:
    """None when the driver receives an item only once it arrived (release.py's docstring: "the
    driver polls every tick time units; the items that arrived by then are received"):
    three events of one stream whose release needs no other stream, 100 time units apart with
    no delay, are released at three different ticks (tick 1); polled every 250 time units they
    take at most two polls (they arrive within 200 of each other; where the polls start is the
    driver's choice - it polls at the first arrival - so one or two). The drawn cases' ticks
    are compared with nothing that counts them, and tick 1 cannot tell a poll every ``tick``
    from a poll every time unit."""
    from spark_impl.dgs.release import Arrival, release_schedule
    from spark_impl.dgs.topology import topology

    program = program_of(case.name)
    topo = topology(program, case.plan)
    alone = next(((stream, item) for stream, items in sorted(case.streams.items()) for item in items
                  if isinstance(item, StreamEvent)
                  and topo.release_streams[(program.tag(item.payload), stream)] == frozenset({stream})), None)
    if alone is None:
        return None
    stream, item = alone
    streams: dict[str, list[Any]] = {stream: [StreamEvent(ts, item.payload) for ts in (1, 101, 201)] + [Heartbeat(301)]}
    ticks = release_schedule(program, topo, streams, Arrival(), 1)
    if [len(t) for t in ticks] != [1, 1, 1]:
        return (f"three events of stream {stream} arriving at 1, 101 and 201 (released by their own stream alone) "
                f"came out in ticks of {[len(t) for t in ticks]} events: received before they arrived")
    wide = [len(t) for t in release_schedule(program, topo, streams, Arrival(), 250)]
    if sum(wide) != 3 or len(wide) > 2:
        return (f"three events of stream {stream} arriving at 1, 101 and 201, polled every 250 time units, came out "
                f"in ticks of {wide} events: the driver polls every tick time units (at most two polls here)")
    try:  # a released event is a value (mailboxes holding them are pickled into live commits)
        setattr(ticks[0][0], "key", (0, stream))
    except FrozenInstanceError:
        return None
    return "a released event could be changed in place (Released is a frozen value)"
