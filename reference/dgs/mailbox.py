"""A worker's mailbox: selective reordering with heartbeats (DGS §3.4), efficiently.

Same release rule as ``spec.dgs.mailbox`` (read it for the rule, what *related* tags are and
how heartbeats reach descendants); instead of rescanning every buffer after each message, a
*workset* cascade: receiving an item of tag ``σ`` can only make releasable the heads of ``σ``
and of the tags related to ``σ``; releasing an item of ``τ`` can only unblock the tags related
to ``τ``. The tags to recheck are kept in a workset until it is empty (§3.4 "this process
recurses until the tag workset is empty"). ``tests/reference/dgs/test_dgs_mailbox.py`` checks it releases
what the spec's fixpoint releases.
"""

from __future__ import annotations

from collections import deque
from typing import Collection

from spec.dgs.mailbox import HEARTBEAT, MailItem
from spec.dgs.streams import ImplTag, OrderKey


class Mailbox:
    """Buffers and timers for the tracked implementation tags of one worker; ``related`` is
    the set of related pairs (``spec.dgs.mailbox.related_pairs``)."""

    def __init__(self, tracked: Collection[ImplTag], related: Collection[tuple[ImplTag, ImplTag]]) -> None:
        tags = sorted(set(tracked), key=repr)
        self._buffers: dict[ImplTag, deque[MailItem]] = {t: deque() for t in tags}
        self._timers: dict[ImplTag, OrderKey | None] = {t: None for t in tags}
        pairs = set(related)
        self._related: dict[ImplTag, tuple[ImplTag, ...]] = {
            t: tuple(o for o in tags if o != t and (t, o) in pairs) for t in tags
        }
        self._blocks: dict[ImplTag, tuple[ImplTag, ...]] = {
            t: tuple(o for o in tags if o != t and (o, t) in pairs) for t in tags
        }

    @property
    def tracked(self) -> tuple[ImplTag, ...]:
        """The tracked implementation tags."""
        return tuple(self._buffers)

    def pending(self) -> int:
        """How many items are buffered (not yet released)."""
        return sum(len(b) for b in self._buffers.values())

    def timer(self, impl: ImplTag) -> OrderKey | None:
        """The timer of ``impl``."""
        return self._timers[impl]

    def earliest(self, impl: ImplTag) -> OrderKey | None:
        """The key of the earliest buffered item of ``impl``."""
        buffer = self._buffers[impl]
        return buffer[0].key if buffer else None

    def receive(self, item: MailItem) -> list[MailItem]:
        """Take ``item`` (buffer it unless it is a heartbeat), advance its tag's timer, and
        return what becomes releasable."""
        if item.impl not in self._buffers:
            raise KeyError(f"mailbox does not track {item.impl!r}")
        if item.kind != HEARTBEAT:
            self._buffers[item.impl].append(item)
        previous = self._timers[item.impl]
        self._timers[item.impl] = item.key if previous is None else max(previous, item.key)
        released: list[MailItem] = []
        workset = [item.impl, *self._blocks[item.impl]]
        queued = set(workset)
        while workset:
            impl = workset.pop()
            queued.discard(impl)
            buffer = self._buffers[impl]
            while buffer and self._releasable(impl, buffer[0]):
                released.append(buffer.popleft())
                for other in self._blocks[impl]:
                    if other not in queued:
                        queued.add(other)
                        workset.append(other)
        return released

    def _releasable(self, impl: ImplTag, head: MailItem) -> bool:
        for other in self._related[impl]:
            timer = self._timers[other]
            if timer is None or timer < head.key:
                return False
            buffer = self._buffers[other]
            if buffer and buffer[0].key < head.key:
                return False
        return True
