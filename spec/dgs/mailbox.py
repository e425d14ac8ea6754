"""The release rule of a worker's mailbox: selective reordering with heartbeats (DGS §3.4).

A mailbox tracks implementation tags: its worker's *own* and its worker's *ancestors'* (whose
events reach it as join requests, §3.4 "when a mailbox receives an event (or a join
request)"). Per tracked tag it has a *buffer* of received events / join requests in increasing
order and a *timer*: the largest order key known to be complete for that tag - the key of the
latest item received for it, or of a heartbeat. A heartbeat "updates its timers ... without
adding the heartbeat to the buffer" (§3.4).

Release rule (§3.4). The head ``x`` (key ``k``, tag ``σ``) of a buffer may be released when,
for every tracked tag ``δ`` *related* to ``σ`` (below):

1. ``δ``'s timer is ``>= k`` (every ``δ`` item up to ``k`` has been received; keys are unique,
   so for ``δ != σ`` this means ``> k``), and
2. no buffer of ``δ`` holds an item with a key ``< k``.

**Related** (our reading of "its dependent tags", made precise so that plans cannot
deadlock): ``σ`` and ``δ`` are related at worker ``w`` when at least one of them is ``w``'s own
tag and they depend on each other *directly or through a chain of tags handled by ``w``'s
descendants*. The chain matters: if ``ρ`` and ``σ`` are independent but a descendant's tag
``δ`` depends on both, the events ``ρ@2, δ@3, σ@5`` must be processed in that order, which
only ``w`` can enforce. Pairs of two ancestor tags are exempt: their items reach ``w`` from
its parent already in an order that respects them (the ancestor owning one of them enforced
it).

**Heartbeats to descendants.** A worker with children tells them, for every tag it tracks,
its *watermark*: the key of its earliest received-but-not-started item of that tag, or its
timer if there is none. A child uses it as a heartbeat for that (ancestor) tag: every join
request below it has already been sent. This is how "a heartbeat ... is broadcast to all the
worker processes that are descendants of the worker responsible" (§3.4) is realised without
letting a child overtake a join request its parent has not sent yet.

:func:`deliver` is the obviously-right fixpoint (release anything releasable, repeat); the
workset cascade of ``reference.dgs.mailbox`` must release the same items, which
``tests/reference/dgs/test_dgs_mailbox.py`` checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Collection, Mapping

from spec.dgs.streams import ImplTag, OrderKey

EVENT = "event"
JOIN = "join"
HEARTBEAT = "heartbeat"


@dataclass(frozen=True)
class MailItem:
    """One message to a mailbox: ``kind`` is ``"event"`` (the worker's own), ``"join"`` (a
    join request for an ancestor's event) or ``"heartbeat"`` (timer only)."""

    impl: ImplTag
    key: OrderKey
    kind: str
    payload: Any = None


@dataclass(frozen=True)
class MailboxState:
    """Timers and buffers of the tracked implementation tags."""

    timers: Mapping[ImplTag, OrderKey]
    buffers: Mapping[ImplTag, tuple[MailItem, ...]]


Related = Callable[[ImplTag, ImplTag], bool]


def related_pairs(
    depends: Callable[[ImplTag, ImplTag], bool],
    own: Collection[ImplTag],
    ancestors: Collection[ImplTag],
    below: Collection[ImplTag],
) -> frozenset[tuple[ImplTag, ImplTag]]:
    """The *related* pairs of a worker with implementation tags ``own``, whose ancestors
    handle ``ancestors`` and whose descendants handle ``below`` (module docstring)."""
    tracked = set(own) | set(ancestors)
    pairs: set[tuple[ImplTag, ImplTag]] = set()
    for start in tracked:
        seen_below: set[ImplTag] = set()
        frontier = [start]
        while frontier:
            node = frontier.pop()
            for other in tracked:
                if depends(node, other) and (start in own or other in own):
                    pairs.add((start, other))
            for nxt in below:
                if nxt not in seen_below and depends(node, nxt):
                    seen_below.add(nxt)
                    frontier.append(nxt)
    return frozenset(pairs)


def releasable(state: MailboxState, related: Related, impl: ImplTag) -> bool:
    """Whether the head of ``impl``'s buffer may be released (module docstring)."""
    buffer = state.buffers.get(impl, ())
    if not buffer:
        return False
    head = buffer[0]
    for other in state.buffers:
        if other == impl or not related(impl, other):
            continue
        timer = state.timers.get(other)
        if timer is None or timer < head.key:
            return False
        if any(item.key < head.key for item in state.buffers[other]):
            return False
    return True


def deliver(state: MailboxState, related: Related, item: MailItem) -> tuple[MailboxState, list[MailItem]]:
    """Receive ``item`` (its tag must be tracked), then release until nothing is releasable.
    Returns the new state and the released items (in one order the rule allows)."""
    timers = dict(state.timers)
    buffers = {k: tuple(v) for k, v in state.buffers.items()}
    if item.kind != HEARTBEAT:
        buffers[item.impl] = buffers[item.impl] + (item,)
    previous = timers.get(item.impl)
    timers[item.impl] = item.key if previous is None else max(previous, item.key)
    current = MailboxState(timers, buffers)
    released: list[MailItem] = []
    progress = True
    while progress:
        progress = False
        for impl in sorted(buffers, key=repr):
            if releasable(current, related, impl):
                released.append(buffers[impl][0])
                buffers[impl] = buffers[impl][1:]
                current = MailboxState(timers, buffers)
                progress = True
                break
    return current, released


def empty_mailbox(tracked: Collection[ImplTag]) -> MailboxState:
    """A mailbox tracking ``tracked``: empty buffers, no timers."""
    return MailboxState({}, {impl: () for impl in tracked})
