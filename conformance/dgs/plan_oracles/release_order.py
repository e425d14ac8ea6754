"""The DGS suite's oracle ``order``: spark_impl's driver plans every event once, dependent
events in key order (DGS Theorem 3.5), each tick cut into steps as ``steps_of`` defines.

The Spark DGS executor is consistent by one argument (``spark_impl.dgs.release``'s docstring,
Theorem 3.5): of two *dependent* events the one with the smaller order key ``(ts, stream)`` is
processed first. The driver decides that order before any Spark job runs - which tick
releases each event (:func:`~spark_impl.dgs.release.release_schedule`), how a tick's events
become steps (:func:`~spark_impl.dgs.driver.steps_of`: a leaf segment, then a synchronizing
group) and which short segments are inlined into a group
(:func:`~spark_impl.dgs.driver.inline_short_segments`). The outputs oracle sees a wrong order
only when the two events happen not to commute on that case's state; this oracle sees every
wrong order, without Spark, on every drawn case:

* every input event is released, and planned, exactly once, on its responsible worker (a leaf
  segment's leaf, a synchronizing group's worker) or, inlined, on an ancestor of it;
* for every dependent pair ``a`` < ``b`` (order keys), ``a`` is processed before ``b``: an
  earlier tick, or the same tick and an earlier step, or the same step with ``a`` in the leaf
  segment and ``b`` in the synchronizing group, or both in the same list with ``a`` first.
  (Events of one step's leaf segment on different leaves run in parallel; V2 makes them
  independent, so such a dependent pair is itself a finding.)
* every tick's cut into steps is ``steps_of``'s definition (:func:`steps_problem`): read in
  order, the steps give back the tick's released events (each leaf segment in key order, then
  its group); a leaf segment holds only its leaf's events, a synchronizing group only its
  worker's (a worker with children); a step is never empty, only the last one has no group,
  and two groups of one worker are merged unless leaf events come between them.
* the short segments inlined are those ``inline_short_segments``'s definition names
  (:func:`inline_problem`), no fewer (an optimization left off changes only which worker's
  trace shows the events, so no other oracle sees it) and no more. Every other released event
  of a tick is a pickled copy, as a live query's mailbox restored from its commit holds them:
  the planner must compare worker ids by value, not identity.

The planner judged is a :class:`Planner` (by default spark_impl's driver: :data:`DRIVER`), so
the oracle can be tested on hand-built wrong plans.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from typing import Any, Callable, Hashable, Sequence

from spec.dgs.streams import StreamEvent

from spark_impl.dgs.driver import inline_short_segments, steps_of
from spark_impl.dgs.release import Arrival, release_schedule
from spark_impl.dgs.topology import topology

from conformance.dgs.cases import DgsCase, program_of

Position = tuple[int, int, int, int, int]
"""``(tick, step, 0 = leaf segment / 1 = synchronizing group, leaf or -1, index in its list)``."""

Plan = tuple[dict[tuple[int, str], list[Position]], dict[tuple[int, str], Hashable], dict[tuple[int, str], str]]
"""Per order key: where the driver plans the event, its tag as released, the worker that runs it."""


@dataclass(frozen=True)
class Planner:
    """The driver's three planning functions, as ``spark_impl.dgs`` defines them: the release
    schedule ``(program, topo, streams, arrival, tick) -> ticks``, the cut of a tick into steps
    ``(topo, released) -> steps`` and the inlining ``(topo, steps, below) -> steps``."""

    schedule: Callable[..., list[list[Any]]]
    steps: Callable[[Any, list[Any]], list[Any]]
    inline: Callable[[Any, list[Any], int], list[Any]]


DRIVER = Planner(release_schedule, steps_of, inline_short_segments)
"""spark_impl's driver: the planner the suite judges."""


class StepsError(Exception):
    """A tick's steps break ``steps_of``'s or ``inline_short_segments``'s definition."""


def planned_positions(case: DgsCase, planner: Planner = DRIVER) -> Plan:
    """Where ``planner`` plans each event of ``case`` (by order key), each released event's tag
    and the worker that processes it (a leaf, or the synchronizing group's worker); raises
    :class:`StepsError` when a tick's cut or inlining breaks its definition."""
    program = program_of(case.name)
    topo = topology(program, case.plan)
    ticks = planner.schedule(program, topo, case.streams, Arrival(case.max_delay, case.max_jitter, case.seed),
                             case.tick)
    positions: dict[tuple[int, str], list[Position]] = {}
    tags: dict[tuple[int, str], Hashable] = {}
    by: dict[tuple[int, str], str] = {}
    for t, fresh in enumerate(ticks):
        released = [pickle.loads(pickle.dumps(e)) if i % 2 else e for i, e in enumerate(fresh)]  # restored ones
        for event in released:
            tags[event.key] = event.tag
        cut = planner.steps(topo, released)
        wrong = steps_problem(topo, released, cut)
        steps = planner.inline(topo, cut, case.inline_below)
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


def problem(case: DgsCase, planner: Planner = DRIVER) -> str | None:
    """None when ``planner`` plans every event of ``case`` once, on its worker or an ancestor,
    dependent events in key order, each tick cut and inlined by definition (module docstring)."""
    program = program_of(case.name)
    try:
        positions, tags, by = planned_positions(case, planner)
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


def check(cases: Sequence[DgsCase], planner: Planner = DRIVER) -> list[tuple[int, str]]:
    """``(case index, problem)`` of every case whose plan breaks the oracle (module docstring)."""
    return [(i, found) for i, case in enumerate(cases) for found in [problem(case, planner)] if found is not None]
