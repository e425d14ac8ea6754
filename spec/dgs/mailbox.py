"""The release rule of a worker's mailbox: selective reordering with heartbeats (DGS §3.4).

A mailbox tracks a set of implementation tags (those of its worker and of its worker's
ancestors, whose events reach it as join requests). Per tracked tag it has a *buffer* of
received items in increasing order and a *timer*: the order key of the latest item received
for that tag. An item is an event, a join request (an ancestor's event, §3.4 "when a mailbox
receives an event (or a join request)"), or a heartbeat.

Release rule (§3.4). The head ``x`` (key ``k``, tag ``σ``) of a buffer may be released when

1. every tracked tag ``δ`` that ``σ`` depends on has a timer ``>= k`` (the mailbox has seen
   every dependent item up to ``k``; keys are unique, so for ``δ != σ`` this means ``> k``), and
2. no buffer of such a ``δ`` holds an event or join request with a key ``< k``.

A heartbeat updates the timer like an event "without being released to the worker process".
Our reading, needed for correctness when heartbeats are forwarded to descendants: a heartbeat
is buffered in order, never blocks anything (condition 2 ignores heartbeats), and leaves its
buffer as soon as it reaches the head, as a *forwarding marker* (a worker with children
forwards it to them; a leaf drops it). Forwarding in buffer order guarantees that a child
never learns "no more σ up to k" before it has received every join request of σ below k.

:func:`deliver` is the obviously-right fixpoint (release anything releasable, repeat); the
efficient workset cascade of ``reference.dgs.mailbox`` must release the same items, which
``tests/test_dgs_mailbox.py`` checks.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Mapping

from spec.dgs.streams import ImplTag, OrderKey

EVENT = "event"
JOIN = "join"
HEARTBEAT = "heartbeat"


@dataclass(frozen=True)
class MailItem:
    """One message in a mailbox: ``kind`` is ``"event"``, ``"join"`` or ``"heartbeat"``."""

    impl: ImplTag
    key: OrderKey
    kind: str
    payload: Any = None


@dataclass(frozen=True)
class MailboxState:
    """Timers and buffers of the tracked implementation tags."""

    timers: Mapping[ImplTag, OrderKey]
    buffers: Mapping[ImplTag, tuple[MailItem, ...]]


DependsOn = Callable[[ImplTag, ImplTag], bool]


def releasable(state: MailboxState, depends: DependsOn, impl: ImplTag) -> bool:
    """Whether the head of ``impl``'s buffer may be released (module docstring)."""
    buffer = state.buffers.get(impl, ())
    if not buffer:
        return False
    head = buffer[0]
    if head.kind == HEARTBEAT:
        return True
    for other in state.buffers:
        if not depends(impl, other):
            continue
        timer = state.timers.get(other)
        if timer is None or timer < head.key:
            return False
        if any(item.kind != HEARTBEAT and item.key < head.key for item in state.buffers[other]):
            return False
    return True


def deliver(
    state: MailboxState, depends: DependsOn, item: MailItem
) -> tuple[MailboxState, list[MailItem]]:
    """Receive ``item`` (its tag must be tracked), then release until nothing is releasable.
    Returns the new state and the released items (in one order the rule allows)."""
    timers = dict(state.timers)
    buffers = {k: tuple(v) for k, v in state.buffers.items()}
    buffers[item.impl] = buffers[item.impl] + (item,)
    timers[item.impl] = item.key
    current = MailboxState(timers, buffers)
    released: list[MailItem] = []
    progress = True
    while progress:
        progress = False
        for impl in sorted(buffers, key=repr):
            if releasable(current, depends, impl):
                released.append(buffers[impl][0])
                buffers[impl] = buffers[impl][1:]
                current = MailboxState(timers, buffers)
                progress = True
                break
    return current, released


def empty_mailbox(tracked: list[ImplTag]) -> MailboxState:
    """A mailbox tracking ``tracked`` with empty buffers and no timers."""
    return MailboxState({}, {impl: () for impl in tracked})
