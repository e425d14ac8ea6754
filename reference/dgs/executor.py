"""Executing a synchronization plan: simulated workers and mailboxes (DGS §3.4), seeded.

:func:`run_plan` ``(program, plan, streams, seed) -> list of outputs`` is the reference
executor's entry point (a stable name: ``spark_impl`` and the conformance suite compare
against it). :func:`execute_plan` returns the same run with its final state and trace.

The simulation is a discrete-event loop over messages, deterministic for a given ``seed``:

* **producers**: stream ``s`` sends its items at their timestamps; each message is delayed by
  the stream's own base delay plus a per-message jitter (both drawn from ``seed``). An event
  goes to the worker responsible for its implementation tag ``(tag, s)``; since an item of
  ``s`` also tells that no *other* tag of ``s`` has an earlier pending event, every other
  implementation tag of ``s`` in the plan receives a heartbeat at the same key (a stream
  heartbeat likewise reaches every implementation tag of ``s``);
* **channels** between two processes are FIFO (Appendix C assumption 4) with random delays;
* **workers** (§3.4 "Event processing"): a worker takes released items from its mailbox in
  order. A leaf processes its own events with ``out``/``update``. A worker with children,
  for its own event, sends a join request (the event's tag and key) to both children, waits
  for their states, joins them, processes the event, forks the new state with its children's
  subtree predicates and sends the halves back. A worker receiving a join request (an
  ancestor's event) joins its own children first if it has any, sends its state up and waits
  for the state to come back;
* **mailboxes** (:class:`reference.dgs.mailbox.Mailbox`) track the worker's own and its
  ancestors' implementation tags and release by the §3.4 rule (``spec.dgs.mailbox``); after
  every step a worker with children sends them a heartbeat for each tracked tag whose
  *watermark* (its earliest received-but-not-started item, else its timer) has advanced.

Before running, the plan is checked P-valid (:func:`reference.dgs.validity.check_plan`) and
the input a valid input instance (Def. 3.3); both raise InputError. Theorem 3.5 - for a
consistent program the output multiset equals ``spec(sort(u))`` - is tested in
``tests/reference/dgs/test_dgs_executor.py``.
"""

from __future__ import annotations

import heapq
import random
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from reference.dgs.mailbox import Mailbox
from reference.dgs.validity import check_plan, impl_text
from spec.dgs.mailbox import EVENT, HEARTBEAT, JOIN, MailItem, related_pairs
from spec.dgs.plan import Plan, Worker
from spec.dgs.program import Program, short_repr
from spec.dgs.streams import ImplTag, StreamEvent, Streams, check_valid_input, order_key
from spec.errors import InputError

MAX_STREAM_DELAY = 20
MAX_JITTER = 6
MAX_LINK_DELAY = 3


@dataclass
class _Proc:
    worker: Worker
    parent: str | None
    mailbox: Mailbox
    state: Any = None
    released: deque[MailItem] = field(default_factory=deque)
    waiting: str | None = None
    pending: MailItem | None = None
    replies: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ExecutionResult:
    """A run of a plan: the outputs in production order, the final state (all workers joined
    back into the root), and the processed events as ``(worker id, key, payload)``."""

    outputs: list[Any]
    final_state: Any
    processed: list[tuple[str, tuple[int, str], Any]]
    messages: int


class _Simulation:
    def __init__(self, program: Program, plan: Plan, streams: Streams, seed: int) -> None:
        self.program = program
        self.plan = plan
        self.streams = streams
        self.rng = random.Random(seed)
        self.owner: dict[ImplTag, str] = {t: w.id for w in plan.workers() for t in w.impl_tags}
        parents = plan.parents()
        self.by_id = {w.id: w for w in plan.workers()}
        depends = lambda a, b: program.depends(a[0], b[0])  # noqa: E731 - tiny adapter
        self.procs: dict[str, _Proc] = {}
        # each worker's ancestors' and descendants' implementation tags, gathered once (linear
        # in the tree, not one walk per worker)
        above_of: dict[str, frozenset[ImplTag]] = {plan.root.id: frozenset()}
        for worker in plan.workers():  # parents first
            for child in worker.children:
                above_of[child.id] = above_of[worker.id] | worker.impl_tags
        subtree: dict[str, frozenset[ImplTag]] = {}
        for worker in reversed(plan.workers()):  # children first
            subtree[worker.id] = worker.impl_tags.union(*(subtree[c.id] for c in worker.children))
        for worker in plan.workers():
            above = set(above_of[worker.id])
            below = subtree[worker.id] - worker.impl_tags
            related = related_pairs(depends, worker.impl_tags, above, below)
            mailbox = Mailbox(worker.impl_tags | above, related)
            self.procs[worker.id] = _Proc(worker, parents[worker.id], mailbox)
        self.sent_marks: dict[str, dict[ImplTag, tuple[int, str]]] = {w: {} for w in self.procs}
        self.preds = {w.id: frozenset(tag for tag, _ in subtree[w.id]) for w in plan.workers()}
        self.queue: list[tuple[int, int, str, str, Any]] = []
        self.seq = 0
        self.last_arrival: dict[tuple[str, str], int] = {}
        self.outputs: list[Any] = []
        self.processed: list[tuple[str, tuple[int, str], Any]] = []
        self.now = 0
        self.started = False

    # --- message passing -----------------------------------------------------------------

    def send(self, src: str, dst: str, kind: str, payload: Any, delay: int) -> None:
        channel = (src, dst)
        arrival = max(self.now + delay, self.last_arrival.get(channel, 0))
        self.last_arrival[channel] = arrival
        self.seq += 1
        heapq.heappush(self.queue, (arrival, self.seq, dst, kind, payload))

    def link(self, src: str, dst: str, kind: str, payload: Any) -> None:
        self.send(src, dst, kind, payload, self.rng.randint(0, MAX_LINK_DELAY))

    # --- producers -------------------------------------------------------------------------

    def schedule_inputs(self) -> None:
        by_stream: dict[str, list[ImplTag]] = {}
        for impl in sorted(self.owner, key=repr):
            by_stream.setdefault(impl[1], []).append(impl)
        start = min((it.ts for items in self.streams.values() for it in items), default=0)
        for stream in sorted(self.streams):
            base = self.rng.randint(0, MAX_STREAM_DELAY)
            for item in self.streams[stream]:
                key = order_key(stream, item)
                messages: list[tuple[ImplTag, MailItem]] = []
                event_impl: ImplTag | None = None
                if isinstance(item, StreamEvent):
                    event_impl = (self.program.tag(item.payload), stream)
                    if event_impl not in self.owner:
                        raise InputError(
                            f"no worker of the plan handles implementation tag {impl_text(event_impl)} "
                            f"(event {short_repr(item.payload)} at ts {item.ts})",
                            f"stream {stream!r}",
                        )
                    messages.append((event_impl, MailItem(event_impl, key, EVENT, item.payload)))
                for impl in by_stream.get(stream, []):
                    if impl != event_impl:
                        messages.append((impl, MailItem(impl, key, HEARTBEAT)))
                self.now = item.ts - start
                delay = base + self.rng.randint(0, MAX_JITTER)
                for impl, mail in messages:
                    self.send(f"stream:{stream}", self.owner[impl], "mail", mail, delay)
        self.now = 0

    # --- workers ---------------------------------------------------------------------------

    def distribute(self, proc: _Proc, state: Any) -> None:
        """Give ``state`` to ``proc``: a leaf keeps it, a parent forks it to its children."""
        children = proc.worker.children
        if not children:
            proc.state = state
            return
        assert proc.worker.fork is not None
        left, right = children
        s1, s2 = self.program.fork(proc.worker.fork, state, self.preds[left.id], self.preds[right.id])
        proc.state = None
        for child, part in ((left, s1), (right, s2)):
            if not self.started:
                self.distribute(self.procs[child.id], part)
            else:
                self.link(proc.worker.id, child.id, "grant", part)

    def process(self, proc: _Proc, state: Any, item: MailItem) -> Any:
        self.outputs.extend(self.program.out(proc.worker.state_type, state, item.payload))
        self.processed.append((proc.worker.id, item.key, item.payload))
        return self.program.update(proc.worker.state_type, state, item.payload)

    def pump(self, proc: _Proc) -> None:
        wid = proc.worker.id
        children = proc.worker.children
        while proc.waiting is None and proc.released:
            item = proc.released.popleft()
            if children:
                proc.pending = item
                proc.waiting = "children"
                proc.replies = {}
                for child in children:
                    self.link(wid, child.id, "mail", MailItem(item.impl, item.key, JOIN))
            elif item.kind == EVENT:
                proc.state = self.process(proc, proc.state, item)
            else:
                assert proc.parent is not None
                self.link(wid, proc.parent, "reply", (wid, proc.state))
                proc.state = None
                proc.waiting = "parent"

    def on_reply(self, proc: _Proc, child_id: str, state: Any) -> None:
        proc.replies[child_id] = state
        left, right = proc.worker.children
        if left.id not in proc.replies or right.id not in proc.replies:
            return
        assert proc.worker.join is not None and proc.pending is not None
        joined = self.program.join(proc.worker.join, proc.replies[left.id], proc.replies[right.id])
        item, proc.pending, proc.replies = proc.pending, None, {}
        if item.kind == EVENT:
            joined = self.process(proc, joined, item)
            proc.waiting = None
            self.distribute(proc, joined)
            self.pump(proc)
        else:
            assert proc.parent is not None
            self.link(proc.worker.id, proc.parent, "reply", (proc.worker.id, joined))
            proc.waiting = "parent"

    def on_grant(self, proc: _Proc, state: Any) -> None:
        proc.waiting = None
        self.distribute(proc, state)
        self.pump(proc)

    # --- the loop --------------------------------------------------------------------------

    def run(self) -> ExecutionResult:
        self.distribute(self.procs[self.plan.root.id], self.program.init())
        self.started = True
        self.schedule_inputs()
        messages = 0
        while self.queue:
            self.now, _, dst, kind, payload = heapq.heappop(self.queue)
            messages += 1
            proc = self.procs[dst]
            if kind == "mail":
                proc.released.extend(proc.mailbox.receive(payload))
                self.pump(proc)
            elif kind == "reply":
                self.on_reply(proc, payload[0], payload[1])
            else:
                self.on_grant(proc, payload)
            self.send_watermarks(proc)
        for proc in self.procs.values():
            if proc.waiting is not None or proc.released or proc.mailbox.pending():
                raise RuntimeError(
                    f"internal: worker {proc.worker.id!r} is stuck at the end of the input "
                    f"(waiting={proc.waiting}, released={len(proc.released)}, buffered={proc.mailbox.pending()})"
                )
        return ExecutionResult(self.outputs, self.collect(self.plan.root), self.processed, messages)

    def send_watermarks(self, proc: _Proc) -> None:
        """Heartbeats to the children for every tracked tag whose watermark advanced."""
        if not proc.worker.children:
            return
        sent = self.sent_marks[proc.worker.id]
        unstarted: dict[ImplTag, tuple[int, str]] = {}
        for item in proc.released:
            if item.impl not in unstarted:
                unstarted[item.impl] = item.key
        for impl in proc.mailbox.tracked:
            candidates = [k for k in (unstarted.get(impl), proc.mailbox.earliest(impl)) if k is not None]
            mark = min(candidates) if candidates else proc.mailbox.timer(impl)
            if mark is None or (impl in sent and sent[impl] >= mark):
                continue
            sent[impl] = mark
            for child in proc.worker.children:
                self.link(proc.worker.id, child.id, "mail", MailItem(impl, mark, HEARTBEAT))

    def collect(self, worker: Worker) -> Any:
        """The final state: every subtree joined back (no messages needed at the end)."""
        if not worker.children:
            return self.procs[worker.id].state
        assert worker.join is not None
        left, right = worker.children
        return self.program.join(worker.join, self.collect(left), self.collect(right))


def execute_plan(program: Program, plan: Plan, streams: Streams, seed: int = 0) -> ExecutionResult:
    """Run ``plan`` on ``streams`` (checked: P-valid plan, valid input instance)."""
    check_plan(program, plan)
    check_valid_input(streams)
    return _Simulation(program, plan, streams, seed).run()


def run_plan(program: Program, plan: Plan, streams: Streams, seed: int = 0) -> list[Any]:
    """The outputs of running ``plan`` on ``streams`` with the simulation seeded by ``seed``
    (order of production; compare with ``spec_output`` as multisets)."""
    return execute_plan(program, plan, streams, seed).outputs
