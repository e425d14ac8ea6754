"""Virtual shared-nothing (VSN) execution with elastic reconfiguration (STRETCH Alg. 3-6).

* Upstream instances add every tuple once to the shared ``TB_in`` (Alg. 3 forwardVSN),
  through addSTRETCH (Alg. 5): before a source's next tuple, each pending reconfiguration in
  its control queue becomes a *control tuple*. Alg. 5 stamps it with that next tuple's
  timestamp, so that tuple cannot raise W above gamma and in short streams reconfigurations
  rarely happen; we stamp it with the source's current bound (T[i] before the update; the
  next tuple's timestamp when the source has none). The controller (§7 reconfigure) fills
  the control queues once TB_in's merged watermark passes the requested watermark.
* Every instance reads every item of TB_in and runs processVSN (Alg. 4) on one shared sigma:
  a control tuple sets ``e*, O*, f_mu*, gamma`` (Alg. 6 prepareReconfig) if its epoch is
  newer than the pending ``e*`` - each source carries one control tuple per reconfiguration,
  and Alg. 6's test against the current ``e`` would let every later copy push gamma further
  (we keep the first copy's timestamp; all instances see the same copies in the same
  order, so they agree either way); a regular tuple that raises W above gamma triggers the
  reconfiguration: the instance enters the barrier (waitForInstances(O)); leaving it, exactly
  one instance connects provisioned instances (TB_out.addSources with bound t.ts - Lemma 3 -
  then TB_in.addReaders) or disconnects decommissioned ones (TB_in.removeReaders, then
  TB_out.removeSources); all switch to ``f_mu*``.
* Outputs go to ``TB_out`` (instances are its sources), whose reader collects them; every
  watermark an instance processes is forwarded to TB_out (§2.3, explicit watermarks).

**Deviation (documented in docs/oplus.md).** Alg. 4 runs the expiry loop *after* the barrier,
with the new mapping, so a key that moves to a newly provisioned instance can have a window
that expired between W-bar and t.ts emitted by the new instance with a timestamp below t.ts,
contradicting Lemma 3 (t.ts as the new instance's watermark lower bound); e.g. WA = WS = 10,
W-bar = 3, t.ts = 25: the instance [0, 10) is emitted at 10 < 25 by the new owner. We run the
expiry loop up to W with the *old* mapping before entering the barrier; after the switch
nothing at or before t.ts is left to expire, every later output is > t.ts, and Lemma 3 holds.
``expire_before_barrier=False`` runs Alg. 4 as printed (tests show the counterexample).
Correctness is unaffected: each expired window is still output exactly once, by the instance
responsible for it when it expired. Operators for which Lemma 2 does not hold
(:func:`~spec.oplus.model.lemma2_applies`) cannot feed a TB; their outputs are collected
directly.

The simulation is single-threaded: sources and instances take steps in an order drawn from
``rng``; an instance in the barrier can leave only when every instance of O has arrived.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass
from typing import Callable, Sequence

from spec.oplus.model import Key, OPlus, OutputTuple, StreamTuple, lemma2_applies
from spec.oplus.watermarks import Delivered, Mark, SourceItem
from reference.oplus.executors import ReconfigEvent, Rejected, RunResult, all_tuples
from reference.oplus.instance import Instance, Mapping
from reference.oplus.state import WindowStore
from reference.oplus.tuple_buffer import TupleBuffer

MappingFactory = Callable[[int, int], Mapping]
"""(epoch, parallelism) -> f_mu for that epoch, mapping keys into ``range(parallelism)``."""

COLLECTOR = "collector"

ENDED_FIRST = "the input passed this watermark only by ending"
"""Why a request is rejected when no input is left once the watermark passes it."""


@dataclass(frozen=True)
class Control:
    """A control tuple's payload (Alg. 5): the next epoch, its instances and mapping."""

    epoch: int
    instances: frozenset[int]
    mapping: Mapping


@dataclass(frozen=True)
class Request:
    """A reconfiguration the controller issues once a source passes ``watermark``."""

    watermark: int
    parallelism: int


class _Node:
    """o_j running processVSN: an :class:`Instance` plus the elastic variables of Alg. 4."""

    def __init__(self, instance: Instance, instances: frozenset[int]) -> None:
        self.instance = instance
        self.O = instances
        self.next_epoch = instance.epoch
        self.next_O = instances
        self.next_mapping: Mapping = instance.mapping
        self.gamma: float = math.inf
        self.held: Delivered | None = None
        self.w_bar: float = -math.inf
        self.phase = "run"  # run | barrier | stopped


class VSNRun:
    """One VSN execution (module docstring)."""

    def __init__(self, op: OPlus, sources: Sequence[Sequence[SourceItem]], parallelism: int,
                 mapping_factory: MappingFactory, requests: Sequence[Request] = (),
                 rng: random.Random | None = None, audit: bool = False,
                 expire_before_barrier: bool = True) -> None:
        self.op = op
        self.expire_before_barrier = expire_before_barrier
        self.sources = sources
        self.factory = mapping_factory
        self.requests = list(requests)
        self.rng = rng or random.Random(0)
        self.result = RunResult(tuples=len(all_tuples(sources)))
        self.store = WindowStore(audit=audit)
        first = frozenset(range(parallelism))
        self.tb_in = TupleBuffer(range(len(sources)), readers=first)
        self.use_tb_out = lemma2_applies(op)
        self.tb_out = TupleBuffer(sorted(first), readers=[COLLECTOR])
        self.out_seq: dict[int, int] = {}
        mapping = mapping_factory(0, parallelism)
        self.nodes = {j: _Node(Instance(j, op, self.store, mapping, self._emit), first)
                      for j in first}
        self.cursors = [0] * len(sources)
        self.bounds: list[float] = [-math.inf] * len(sources)
        self.ended = [False] * len(sources)
        self.control_queues: list[list[Control]] = [[] for _ in sources]
        self.issued = 0
        self.arrived: dict[int, set[int]] = {}
        self.recorded: set[int] = set()

    # --- outputs ---------------------------------------------------------------------------

    def _emit(self, ident: int, output: OutputTuple) -> None:
        self.result.record(ident, output)
        if not self.use_tb_out:
            self.result.outputs.append(output)
            return
        seq = self.out_seq.get(ident, 0)
        self.out_seq[ident] = seq + 1
        self.tb_out.add(StreamTuple(output.ts, ident, seq, output.payload), ident)

    # --- sources (Alg. 3, Alg. 5) and the controller ---------------------------------------

    def _source_step(self, index: int) -> None:
        source = self.sources[index]
        if self.cursors[index] == len(source):
            self._flush_controls(index, len(source), None)
            self.tb_in.add_watermark(math.inf, index)
            self.ended[index] = True
            return
        item = source[self.cursors[index]]
        self.cursors[index] += 1
        if isinstance(item, Mark):
            self.tb_in.add_watermark(item.value, index)
            self.bounds[index] = max(self.bounds[index], item.value)
        else:
            self._flush_controls(index, item.seq, item.ts)  # Alg. 5 L3-5
            self.tb_in.add(item, index)  # Alg. 5 L6
            self.bounds[index] = item.ts
            self.result.copies += 1
        self._controller(self.tb_in.watermark)

    def _flush_controls(self, index: int, seq: int, next_ts: int | None) -> None:
        """addSTRETCH's control tuples, stamped with the source's current bound (its last
        timestamp or watermark; the next tuple's timestamp if it has none) so that the next
        tuple itself can raise W above gamma. At the end of a source they are flushed before
        its final watermark."""
        bound = self.bounds[index]
        stamp = next_ts if math.isinf(bound) else int(bound)
        while self.control_queues[index]:
            control = self.control_queues[index].pop(0)
            if stamp is not None:
                self.tb_in.add(StreamTuple(stamp, index, seq, control), index)

    def _controller(self, bound: float) -> None:
        """reconfigure (§7): once TB_in's merged watermark passes a request's watermark, put
        the control message in every source's control queue (so its control tuples, stamped
        with each source's next tuple, are later than the requested watermark)."""
        while self.issued < len(self.requests) and bound > self.requests[self.issued].watermark:
            request = self.requests[self.issued]
            self.issued += 1
            control = Control(self.issued, frozenset(range(request.parallelism)),
                              self.factory(self.issued, request.parallelism))
            for queue in self.control_queues:
                queue.append(control)

    # --- instances (Alg. 4) ----------------------------------------------------------------

    def _process(self, node: _Node, item: Delivered) -> None:
        t = item.tuple
        if t is not None and isinstance(t.payload, Control):  # Alg. 4 L7, Alg. 6
            if t.payload.epoch > node.next_epoch:
                node.next_epoch = t.payload.epoch
                node.next_O = t.payload.instances
                node.next_mapping = t.payload.mapping
                node.gamma = t.ts
            return
        instance = node.instance
        w_bar = instance.W
        instance.update_watermark(item)
        if t is not None and instance.W > w_bar and instance.W > node.gamma:  # Alg. 4 L10
            if self.expire_before_barrier:
                instance.expire()  # the deviation: expire up to W with the old mapping
            node.held, node.w_bar, node.phase = item, w_bar, "barrier"
            self.arrived.setdefault(instance.epoch, set()).add(instance.ident)
            return
        self._finish(node, item)

    def _finish(self, node: _Node, item: Delivered) -> None:
        instance = node.instance
        instance.expire()
        if item.tuple is not None:
            instance.handle_input_tuple(item.tuple)
        elif self.use_tb_out:
            self.tb_out.add_watermark(instance.W, instance.ident)

    def _can_leave(self, node: _Node) -> bool:
        return node.O <= self.arrived.get(node.instance.epoch, set())

    def _leave_barrier(self, node: _Node) -> None:
        """Alg. 4 L11-14 after waitForInstances(O)."""
        instance, item = node.instance, node.held
        assert item is not None and item.tuple is not None
        old, new = node.O, node.next_O
        joining, leaving = new - old, old - new
        if len(new) > len(old) and self.tb_out.add_sources(sorted(joining), item.tuple.ts):
            self.tb_in.add_readers(joining, instance.ident)
            self._provision(joining, node)
        elif len(new) < len(old) and self.tb_in.remove_readers(leaving):
            self.tb_out.remove_sources(sorted(leaving))
        if node.next_epoch not in self.recorded:
            self.recorded.add(node.next_epoch)
            self.result.reconfigurations.append(ReconfigEvent(
                item.tuple.ts, node.w_bar, node.next_epoch, old, new, self.result.steps))
        node.O = new
        node.gamma = math.inf
        instance.set_mapping(node.next_mapping, node.next_epoch)
        node.held = None
        if instance.ident in new:
            node.phase = "run"
            self._finish(node, item)
        else:
            node.phase = "stopped"

    def _provision(self, joining: frozenset[int], invoker: _Node) -> None:
        for j in joining:
            fresh = Instance(j, self.op, self.store, invoker.next_mapping, self._emit,
                             epoch=invoker.next_epoch)
            fresh.W = invoker.w_bar
            self.nodes[j] = _Node(fresh, invoker.next_O)

    # --- the scheduler ---------------------------------------------------------------------

    def run(self) -> RunResult:
        """Run to completion and return the result."""
        while True:
            choices: list[tuple[str, int]] = [("source", i) for i in range(len(self.sources))
                                              if not self.ended[i]]
            for j, node in self.nodes.items():
                if node.phase == "run" and self.tb_in.is_reader(j) and self.tb_in.backlog(j):
                    choices.append(("instance", j))
                elif node.phase == "barrier" and self._can_leave(node):
                    choices.append(("barrier", j))
            if not choices:
                break
            kind, which = self.rng.choice(choices)
            self.result.steps += 1
            started = time.process_time()
            if kind == "source":
                self._source_step(which)
            elif kind == "barrier":
                self._leave_barrier(self.nodes[which])
            else:
                item = self.tb_in.get(which)
                assert item is not None
                self._process(self.nodes[which], item)
            self.result.charge(f"{'source' if kind == 'source' else 'instance'} {which}",
                               started)
        stuck = [j for j, n in self.nodes.items() if n.phase == "barrier"]
        if stuck:
            raise AssertionError(f"instances {stuck} are stuck in the barrier")
        for epoch, request in enumerate(self.requests, 1):
            if epoch > self.issued:
                reason = ENDED_FIRST
            elif epoch not in self.recorded:
                reason = ("no tuple raised the watermark past its control tuple before the "
                          "input ended")
            else:
                continue
            self.result.rejected.append(Rejected(request.watermark, request.parallelism, reason))
        if self.use_tb_out:
            while (got := self.tb_out.get(COLLECTOR)) is not None:
                if got.tuple is not None:
                    self.result.outputs.append(OutputTuple(got.tuple.ts, got.tuple.payload))
        self.result.writes = self.store.writes
        return self.result


def run_vsn(op: OPlus, sources: Sequence[Sequence[SourceItem]], parallelism: int,
            mapping_factory: MappingFactory, requests: Sequence[Request] = (),
            rng: random.Random | None = None, audit: bool = False,
            expire_before_barrier: bool = True) -> RunResult:
    """Run O+ under VSN (Alg. 3-6); ``requests`` are elastic reconfigurations.
    ``expire_before_barrier=False`` is Alg. 4 as printed (see the module docstring)."""
    return VSNRun(op, sources, parallelism, mapping_factory, requests, rng, audit,
                  expire_before_barrier).run()


def key_mapping(key_string: Callable[[Key], str],
                instance_of: Callable[[str, int], int]) -> MappingFactory:
    """The mapping factory of scenarios: ``instance_of(key_string(k), parallelism)``."""
    def factory(epoch: int, parallelism: int) -> Mapping:
        return lambda key: instance_of(key_string(key), parallelism)
    return factory
