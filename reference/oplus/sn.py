"""Shared-nothing (SN) execution of O+, static or elastic (STRETCH Alg. 1-2, §3, §8).

``parallelism`` instances, each with a private sigma_j and its own merge of dedicated queues
(a private TB per instance, as in §8: "input tuples are merge-sorted by o_j instances").
Upstream instances run forwardSN (Alg. 1): tuple t goes to every instance responsible for some
key of f_MK(t); instances that do not receive t get the source's progress as an explicit
watermark (as SN engines broadcast watermarks), so they are not held back. Every copy beyond
the first is a *duplicated tuple* (Theorem 1). As in §8 ("in SN setups input tuples are
merge-sorted by both o_j and d_j instances"), the downstream D merge-sorts the instances'
outputs (a TB whose sources are the instances) when Lemma 2 applies; otherwise outputs are
collected as emitted.

**Elastic SN: state transfer at the reconfiguration point.** STRETCH contrasts VSN with what
an SN engine must do to change its parallelism: stop at a consistent point, move the state of
every key whose owner changes to its new owner, and resume with the new f_mu. We model that:

1. the controller issues a request once the sources' merged watermark passes its watermark
   (the same condition as VSN's controller, :mod:`reference.oplus.vsn`);
2. the sources stop; every instance processes everything its TB has made ready, so each one
   has processed the same merged watermark W and expired every window ending at or before W
   with the old mapping;
3. state transfer: every key whose owner changes leaves its old store with its window sets
   and last-update timestamp and is installed in its new owner's store; the tuples still
   buffered (added to a TB but not yet ready) are re-forwarded with the new mapping, source
   by source in sequence order, into fresh TBs with the same source bounds, so nothing ready
   before is replayed and nothing pending is lost;
4. new instances start with watermark W (their outputs are later than W: every window they
   own ends after W), join D's merge with bound W (Lemma 3's argument, with W for t.ts), and
   decommissioned instances leave it once drained.

A request the merged watermark passes only because every source ended is *rejected*
(reported in :attr:`RunResult.rejected`): no input is left to process under a new
parallelism. Outputs equal the sequential execution's (Corollary 1), with or without
reconfigurations; the tests check it against VSN and the sequential run on random elastic
scenarios. The cost a reconfiguration adds is reported as ``transferred_keys``,
``transferred_sets`` and ``rerouted`` (buffered tuples re-forwarded), which VSN avoids.

Interleaving: sources and instances take steps in an order drawn from ``rng``; outputs do not
depend on it (tests vary it).
"""

from __future__ import annotations

import math
import random
import time
from typing import Callable, Sequence

from spec.oplus.model import Key, OPlus, OutputTuple, StreamTuple, lemma2_applies
from spec.oplus.watermarks import Mark, SourceItem
from reference.oplus.executors import ReconfigEvent, Rejected, RunResult, all_tuples
from reference.oplus.instance import Instance, Mapping
from reference.oplus.state import WindowStore
from reference.oplus.tuple_buffer import TupleBuffer
from reference.oplus.vsn import ENDED_FIRST, MappingFactory, Request


class SNRun:
    """One SN execution with elastic requests (module docstring)."""

    def __init__(self, op: OPlus, sources: Sequence[Sequence[SourceItem]], parallelism: int,
                 mapping_factory: MappingFactory, requests: Sequence[Request] = (),
                 rng: random.Random | None = None, audit: bool = False) -> None:
        self.op = op
        self.sources = sources
        self.factory = mapping_factory
        self.requests = list(requests)
        self.rng = rng or random.Random(0)
        self.audit = audit
        self.result = RunResult(tuples=len(all_tuples(sources)))
        self.epoch = 0
        self.mapping: Mapping = mapping_factory(0, parallelism)
        self.ids = list(range(parallelism))
        self.merge_outputs = lemma2_applies(op)
        self.downstream = TupleBuffer(self.ids, readers=["D"])
        self.out_seq: dict[int, int] = {p: 0 for p in self.ids}
        self.tbs = {p: TupleBuffer(range(len(sources)), readers=[p]) for p in self.ids}
        self.stores = {p: self._store() for p in self.ids}
        self.instances = {p: Instance(p, op, self.stores[p], self.mapping, self._emit)
                          for p in self.ids}
        self.cursors = [0] * len(sources)
        self.ended = [False] * len(sources)
        self.issued = 0

    def _store(self) -> WindowStore:
        """A private sigma_j whose audited writes go to the run's one chronological log (a
        key's writes move between stores with its state)."""
        store = WindowStore(audit=self.audit)
        store.writes = self.result.writes
        return store

    # --- outputs ---------------------------------------------------------------------------

    def _emit(self, ident: int, output: OutputTuple) -> None:
        self.result.record(ident, output)
        if not self.merge_outputs:
            self.result.outputs.append(output)
            return
        self.downstream.add(StreamTuple(output.ts, ident, self.out_seq[ident], output.payload),
                            ident)
        self.out_seq[ident] += 1

    # --- sources (Alg. 1 forwardSN) ---------------------------------------------------------

    def _forward(self, item: StreamTuple, index: int, mapping: Mapping,
                 tbs: dict[int, TupleBuffer]) -> int:
        """forwardSN of one tuple to ``tbs``; the number of copies delivered."""
        receivers = {mapping(key) for key in self.op.keys(item)}  # Alg. 1 L5
        for p, tb in tbs.items():
            if p in receivers:
                tb.add(item, index)  # Alg. 1 L6
            else:
                tb.add_watermark(item.ts, index)
        return len(receivers)

    def _source_step(self, index: int) -> None:
        source = self.sources[index]
        if self.cursors[index] == len(source):
            for tb in self.tbs.values():
                tb.add_watermark(math.inf, index)
            self.ended[index] = True
            return
        item = source[self.cursors[index]]
        self.cursors[index] += 1
        if isinstance(item, Mark):
            for tb in self.tbs.values():
                tb.add_watermark(item.value, index)
            return
        copies = self._forward(item, index, self.mapping, self.tbs)
        self.result.copies += copies
        self.result.duplicated += max(copies - 1, 0)

    def _controller(self) -> None:
        """Issue (and apply) every request whose watermark the merged watermark passed."""
        merged = self.tbs[self.ids[0]].watermark
        while self.issued < len(self.requests) and merged > self.requests[self.issued].watermark:
            request = self.requests[self.issued]
            self.issued += 1
            if all(self.ended):
                self.result.rejected.append(Rejected(
                    request.watermark, request.parallelism,
                    ENDED_FIRST))
                continue
            self._reconfigure(request)

    # --- instances (Alg. 2) ----------------------------------------------------------------

    def _instance_step(self, p: int) -> None:
        item = self.tbs[p].get(p)
        assert item is not None
        self.instances[p].process(item)
        if item.tuple is None and self.merge_outputs:
            self.downstream.add_watermark(self.instances[p].W, p)

    # --- the reconfiguration (module docstring, steps 2-4) ----------------------------------

    def _reconfigure(self, request: Request) -> None:
        for p in self.ids:  # step 2: drain what is ready
            while self.tbs[p].backlog(p):
                self._instance_step(p)
        watermarks = {self.instances[p].W for p in self.ids}
        assert len(watermarks) == 1, f"instances drained to different watermarks {watermarks}"
        (W,) = watermarks
        self.epoch += 1
        new_ids = list(range(request.parallelism))
        mapping = self.factory(self.epoch, request.parallelism)
        joining = [p for p in new_ids if p not in self.instances]
        leaving = [p for p in self.ids if p not in new_ids]
        for p in joining:
            self.stores[p] = self._store()
        for p in self.ids:  # step 3: state transfer
            store = self.stores[p]
            for key in store.keys():
                owner = mapping(key)
                if owner != p:
                    sets, last_ts = store.take(key)
                    self.stores[owner].put(key, sets, last_ts)
                    self.result.transferred_keys += 1
                    self.result.transferred_sets += len(sets)
        pending: dict[tuple[int, int], tuple[int, StreamTuple]] = {}
        for p in self.ids:
            for source, t in self.tbs[p].pending():
                pending[(source, t.seq)] = (source, t)
        bounds = self.tbs[self.ids[0]].bounds()
        tbs = {p: TupleBuffer(range(len(self.sources)), readers=[p]) for p in new_ids}
        for (source, _), (_, t) in sorted(pending.items()):
            self._forward(t, source, mapping, tbs)
            self.result.rerouted += 1
        for source, bound in bounds.items():
            for tb in tbs.values():
                tb.add_watermark(bound, source)
        for p in leaving:  # step 4
            del self.stores[p]
            del self.instances[p]
            self.out_seq.pop(p)
        for p in new_ids:
            if p in self.instances:
                self.instances[p].set_mapping(mapping, self.epoch)
            else:
                fresh = Instance(p, self.op, self.stores[p], mapping, self._emit,
                                 epoch=self.epoch)
                fresh.W = W
                self.instances[p] = fresh
                self.out_seq[p] = 0
        if joining:
            self.downstream.add_sources(joining, W)
        if leaving:
            self.downstream.remove_sources(leaving)
        self.result.reconfigurations.append(ReconfigEvent(
            int(W), W, self.epoch, frozenset(self.ids), frozenset(new_ids), self.result.steps))
        self.ids, self.tbs, self.mapping = new_ids, tbs, mapping

    # --- the scheduler ---------------------------------------------------------------------

    def run(self) -> RunResult:
        """Run to completion and return the result."""
        while True:
            choices: list[tuple[str, int]] = [("source", i) for i in range(len(self.sources))
                                              if not self.ended[i]]
            choices += [("instance", p) for p in self.ids if self.tbs[p].backlog(p) > 0]
            if not choices:
                break
            kind, which = self.rng.choice(choices)
            self.result.steps += 1
            started = time.process_time()
            if kind == "source":
                self._source_step(which)
                self._controller()
            else:
                self._instance_step(which)
            self.result.charge(f"{kind} {which}", started)
        assert self.issued == len(self.requests), "the end of input passes every watermark"
        while (out := self.downstream.get("D")) is not None:
            if out.tuple is not None:
                self.result.outputs.append(OutputTuple(out.tuple.ts, out.tuple.payload))
        return self.result


def run_sn(op: OPlus, sources: Sequence[Sequence[SourceItem]], parallelism: int,
           mapping: Callable[[Key], int], rng: random.Random | None = None,
           audit: bool = False) -> RunResult:
    """SN execution (Alg. 1 forwardSN + Alg. 2 processSN) with a fixed mapping f_mu."""
    return SNRun(op, sources, parallelism, lambda epoch, p: mapping, (), rng, audit).run()


def run_sn_elastic(op: OPlus, sources: Sequence[Sequence[SourceItem]], parallelism: int,
                   mapping_factory: MappingFactory, requests: Sequence[Request] = (),
                   rng: random.Random | None = None, audit: bool = False) -> RunResult:
    """SN execution that applies ``requests`` by state transfer (module docstring)."""
    return SNRun(op, sources, parallelism, mapping_factory, requests, rng, audit).run()
