"""The live DGS mailbox across micro-batches (``spark_impl/dgs/streaming_input.py``, "Mailbox
across micro-batches" and ``receive``; the release rule of ``spark_impl/dgs/release.py``'s
docstring), fed each drawn case's files as the live engine writes them, one ``receive`` call per
file (also with every timestamp moved below zero: negative timestamps are valid, Def. 3.3):

* each call releases, in key order, exactly what the release rule releases (recomputed here
  from the plan: holding an event longer keeps every output right, so only the rule sees it);
  over the calls every event is released once, dependent events in key order, and nothing is
  held once every stream ended with a heartbeat;
* "a micro-batch's items of a stream are taken in timestamp order": each file with its rows in
  reverse order, fed to a second mailbox, releases the same events;
* an item at or before its stream's timer is refused naming the batch, and "on InputError
  [the mailbox] is unchanged" - also when items before it in the batch were taken;
* ``Topology.worker_of``: "InputError if none is": an event on a stream no worker handles is
  refused naming the stream, by ``receive`` (mailbox unchanged) and by ``release_schedule``.
"""

from __future__ import annotations

import json
import math
from typing import Any, Sequence

import pytest

from spec.dgs.streams import Heartbeat, Item, StreamEvent
from spec.errors import InputError

from spark_impl.dgs.release import Arrival, release_schedule
from spark_impl.dgs.streaming_input import Mailbox, group_rows, receive
from spark_impl.dgs.topology import Topology, topology

from conformance.core.refusals import refused
from conformance.dgs.cases import STREAMS, DgsCase, draw_dgs_cases, program_of, shifted
from conformance.dgs.engines.live import case_chunks

DRAWN = draw_dgs_cases(24, 0)
CASES = DRAWN + [shifted(case, -10**6) for case in DRAWN[:6]]
IDS = [f"case{i}" for i in range(len(DRAWN))] + [f"early{i}" for i in range(6)]


class Fed:
    """A case fed file by file into a mailbox: per file, its items and what it released."""

    def __init__(self, case: DgsCase) -> None:
        self.case = case
        self.program = program_of(case.name)
        self.topo: Topology = topology(self.program, case.plan)
        self.box = Mailbox()
        self.files: list[tuple[list[tuple[str, Item]], list[Any], str | None]] = []
        for number, chunk in enumerate(case_chunks(case)):
            items = group_rows([json.dumps(row) for row in chunk], 1, number)[0]
            released = receive(self.program, self.topo, self.box, items, f"file {number}")
            self.files.append((items, released, rule_problem(self.program, case, self.box, released)))

    def wanted(self) -> list[tuple[int, str]]:
        """The keys of the case's events, sorted."""
        return sorted((item.ts, stream) for stream, items in self.case.streams.items() for item in items
                      if isinstance(item, StreamEvent))


def rule_problem(program: Any, case: DgsCase, box: Mailbox, released: Sequence[Any]) -> str | None:
    """None when a call released exactly what the release rule releases: every released event
    ``e`` (key ``k``, tag ``(σ, s)``) has every stream of ``D(σ, s)`` - ``s`` and the streams of
    the plan's tags dependent on σ - at a timer ``>= k`` and no held event with a smaller key and
    a dependent tag; every held event lacks one of the two (the largest set the rule allows)."""
    far = (-math.inf, "")
    impl = [pair for worker in case.plan.workers() for pair in worker.impl_tags]

    def ready(e: Any) -> bool:
        streams = {e.stream} | {s for tag, s in impl if program.depends(e.tag, tag)}
        return all(box.timers.get(s, far) >= e.key for s in streams)

    def blocked(e: Any) -> bool:
        return any(f.key < e.key and program.depends(f.tag, e.tag) for f in box.buffered)

    for e in released:
        if not ready(e) or blocked(e):
            return f"released the event at {e.key}, which the release rule holds"
    for e in box.buffered:
        if ready(e) and not blocked(e):
            return f"held the event at {e.key}, which the release rule releases"
    return None


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_each_micro_batch_releases_in_key_order_what_the_release_rule_releases(case: DgsCase) -> None:
    fed = Fed(case)
    for number, (_, released, wrong) in enumerate(fed.files):
        keys = [e.key for e in released]
        assert keys == sorted(keys), f"file {number}"
        assert wrong is None, f"file {number}: {wrong}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_every_event_is_released_once_and_dependent_events_in_key_order(case: DgsCase) -> None:
    fed = Fed(case)
    when = [(number, e.key) for number, (_, released, _) in enumerate(fed.files) for e in released]
    assert sorted(key for _, key in when) == fed.wanted() and not fed.box.buffered
    tags = {(item.ts, stream): fed.program.tag(item.payload) for stream, items in case.streams.items()
            for item in items if isinstance(item, StreamEvent)}
    at = {key: number for number, key in when}
    late = [(a, b) for a in at for b in at if a < b and at[a] > at[b] and fed.program.depends(tags[a], tags[b])]
    assert late == []


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_micro_batchs_rows_in_any_order_release_the_same_events(case: DgsCase) -> None:
    fed = Fed(case)
    back = Mailbox()
    for number, (items, released, _) in enumerate(fed.files):
        assert receive(fed.program, fed.topo, back, list(reversed(items)), "reversed") == released, f"file {number}"


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_item_at_or_before_its_streams_timer_is_refused_and_changes_nothing(case: DgsCase) -> None:
    fed = Fed(case)
    box = fed.box
    stream, (ts, _) = max(box.timers.items(), key=lambda entry: entry[1])
    other = next(s for s in STREAMS if s != stream)
    before = (dict(box.timers), list(box.buffered))
    for stale, what in ((ts, "at its own last ts"), (ts - 1, "before its own last ts")):
        batch = [(other, Heartbeat(box.timers[other][0] + 1)), (stream, Heartbeat(stale))]
        assert refused(lambda batch=batch: receive(fed.program, fed.topo, box, batch, "file 9"), "file 9",
                       f"a heartbeat of {stream} {what} {ts}", f"(ts {ts})") is None
        assert (box.timers, box.buffered) == before


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_a_batch_refused_after_taking_an_event_leaves_the_mailbox_as_it_was(case: DgsCase) -> None:
    """A heartbeat of stream ``a`` at ``T + 5`` is taken; then a batch of an event of another
    stream at ``T + 1`` and a heartbeat of ``a`` at ``T + 3`` is refused after the event was
    taken (items in timestamp order), and must leave the timers and held events unchanged."""
    fed = Fed(case)
    box = fed.box
    stream, item = next((stream, item) for stream, items in sorted(case.streams.items()) for item in items
                        if isinstance(item, StreamEvent))
    other = next(s for s in STREAMS if s != stream)
    last = max(ts for ts, _ in box.timers.values())
    receive(fed.program, fed.topo, box, [(other, Heartbeat(last + 5))], "file 10")
    before = (dict(box.timers), list(box.buffered))
    batch: list[tuple[str, Item]] = [(stream, StreamEvent(last + 1, item.payload)), (other, Heartbeat(last + 3))]
    assert refused(lambda: receive(fed.program, fed.topo, box, batch, "file 11"), "file 11",
                   "a heartbeat behind an earlier one of its stream", f"(ts {last + 5})") is None
    assert (box.timers, box.buffered) == before


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_an_event_on_a_stream_no_worker_handles_is_refused_naming_the_stream(case: DgsCase) -> None:
    fed = Fed(case)
    payload = min(((item.ts, stream, item) for stream, items in case.streams.items() for item in items
                   if isinstance(item, StreamEvent)), key=lambda entry: entry[:2])[2].payload
    every = [item.ts for items in case.streams.values() for item in items]
    streams: dict[str, Sequence[Item]] = {**case.streams,
                                          "s9": [StreamEvent(min(every) - 1, payload), Heartbeat(max(every) + 1)]}
    assert refused(lambda: release_schedule(fed.program, fed.topo, streams, Arrival(), 1_000_000), None,
                   "release_schedule with an event on stream s9", "'s9'") is None
    box = fed.box
    last = max(ts for ts, _ in box.timers.values())
    batch: list[tuple[str, Item]] = [(stream, Heartbeat(last + 1)) for stream in sorted(box.timers)]
    batch.append(("s9", StreamEvent(last + 1, payload)))
    before = (dict(box.timers), list(box.buffered))
    with pytest.raises(InputError, match="'s9'"):
        receive(fed.program, fed.topo, box, batch, "file 12")
    assert (box.timers, box.buffered) == before
