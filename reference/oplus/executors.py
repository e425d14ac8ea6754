"""Sequential and shared-nothing (SN) execution of O+ (STRETCH Alg. 1-2, Corollary 1).

* :func:`run_sequential` - one instance owning every key, fed by one TB merging the sources.
* :func:`run_sn` - ``parallelism`` instances, each with a private sigma_j and its own merge
  of dedicated queues (a private TB per instance, as in §8: "input tuples are merge-sorted by
  o_j instances"). Upstream instances run forwardSN (Alg. 1): tuple t goes to every instance
  responsible for some key of f_MK(t); instances that do not receive t get the source's
  progress as an explicit watermark (as SN engines broadcast watermarks), so they are not
  held back. Every copy beyond the first is a *duplicated tuple* (Theorem 1). As in §8 ("in
  SN setups input tuples are merge-sorted by both o_j and d_j instances"), the downstream D
  merge-sorts the instances' outputs (a TB whose sources are the instances) when Lemma 2
  applies; otherwise outputs are collected as emitted.

Interleaving: sources and instances take steps in an order drawn from ``rng``; outputs do
not depend on it (tests vary it). Both runners return a :class:`RunResult`.
"""

from __future__ import annotations

import math
import random
import time
from dataclasses import dataclass, field
from typing import Callable, Sequence

from spec.oplus.model import Key, OPlus, OutputTuple, StreamTuple, lemma2_applies
from spec.oplus.watermarks import Mark, SourceItem
from reference.oplus.instance import Instance
from reference.oplus.state import WindowStore, Write
from reference.oplus.tuple_buffer import TupleBuffer


@dataclass
class ReconfigEvent:
    """One applied reconfiguration (VSN): the triggering tuple's timestamp, the watermark
    before it (W-bar), epochs, instance sets and the step at which it was applied."""

    trigger_ts: int
    w_bar: float
    epoch: int
    before: frozenset[int]
    after: frozenset[int]
    step: int


@dataclass
class RunResult:
    """What an execution produced: ``outputs`` (as collected), ``per_instance`` (each
    instance's outputs in emission order, with the step they were emitted at), tuple
    ``copies`` delivered to instances and how many were ``duplicated``, applied
    ``reconfigurations`` and the audited ``writes`` of the window store(s)."""

    outputs: list[OutputTuple] = field(default_factory=list)
    per_instance: dict[int, list[tuple[int, OutputTuple]]] = field(default_factory=dict)
    tuples: int = 0
    copies: int = 0
    duplicated: int = 0
    reconfigurations: list[ReconfigEvent] = field(default_factory=list)
    writes: list[Write] = field(default_factory=list)
    steps: int = 0
    busy: dict[str, float] = field(default_factory=dict)

    def charge(self, actor: str, since: float) -> None:
        """Add the CPU time since ``since`` (``time.process_time()``) to ``actor``'s busy
        time: each source and instance is a thread in STRETCH, so the largest busy time
        bounds a parallel run's duration (benchmarks/oplus_sn_vs_vsn.py)."""
        self.busy[actor] = self.busy.get(actor, 0.0) + time.process_time() - since

    def record(self, ident: int, output: OutputTuple) -> None:
        """Record an emission by instance ``ident`` at the current step."""
        self.per_instance.setdefault(ident, []).append((self.steps, output))


def all_tuples(sources: Sequence[Sequence[SourceItem]]) -> list[StreamTuple]:
    """Every tuple of the sources."""
    return [item for source in sources for item in source if isinstance(item, StreamTuple)]


def run_sequential(op: OPlus, sources: Sequence[Sequence[SourceItem]],
                   audit: bool = False) -> RunResult:
    """Sequential O+: one instance, one TB over all sources, each ending with mark +inf."""
    result = RunResult(tuples=len(all_tuples(sources)))
    tb = TupleBuffer(range(len(sources)), readers=[0])
    store = WindowStore(audit=audit)

    def emit(ident: int, output: OutputTuple) -> None:
        result.outputs.append(output)
        result.record(ident, output)

    instance = Instance(0, op, store, lambda key: 0, emit)
    for index, source in enumerate(sources):
        for item in source:
            _add(tb, item, index)
        tb.add_watermark(math.inf, index)
    while (delivered := tb.get(0)) is not None:
        result.steps += 1
        if delivered.tuple is not None:
            result.copies += 1
        instance.process(delivered)
    result.writes = store.writes
    return result


def _add(tb: TupleBuffer, item: SourceItem, source: int) -> None:
    if isinstance(item, Mark):
        tb.add_watermark(item.value, source)
    else:
        tb.add(item, source)


def run_sn(op: OPlus, sources: Sequence[Sequence[SourceItem]], parallelism: int,
           mapping: Callable[[Key], int], rng: random.Random | None = None,
           audit: bool = False) -> RunResult:
    """SN execution (Alg. 1 forwardSN + Alg. 2 processSN) with a fixed mapping f_mu."""
    rng = rng or random.Random(0)
    result = RunResult(tuples=len(all_tuples(sources)))
    instances_ids = list(range(parallelism))
    tbs = {p: TupleBuffer(range(len(sources)), readers=[p]) for p in instances_ids}
    merge_outputs = lemma2_applies(op)
    downstream = TupleBuffer(instances_ids, readers=["D"])
    out_seq = {p: 0 for p in instances_ids}

    def emit(ident: int, output: OutputTuple) -> None:
        result.record(ident, output)
        if not merge_outputs:
            result.outputs.append(output)
            return
        downstream.add(StreamTuple(output.ts, ident, out_seq[ident], output.payload), ident)
        out_seq[ident] += 1

    stores = {p: WindowStore(audit=audit) for p in instances_ids}
    instances = {p: Instance(p, op, stores[p], mapping, emit) for p in instances_ids}
    cursors = [0] * len(sources)
    ended = [False] * len(sources)

    def source_step(index: int) -> None:
        source = sources[index]
        if cursors[index] == len(source):
            for p in instances_ids:
                tbs[p].add_watermark(math.inf, index)
            ended[index] = True
            return
        item = source[cursors[index]]
        cursors[index] += 1
        if isinstance(item, Mark):
            for p in instances_ids:
                tbs[p].add_watermark(item.value, index)
            return
        receivers = {mapping(key) for key in op.keys(item)}  # Alg. 1 L5
        for p in instances_ids:
            if p in receivers:
                tbs[p].add(item, index)  # Alg. 1 L6
            else:
                tbs[p].add_watermark(item.ts, index)
        result.copies += len(receivers)
        result.duplicated += max(len(receivers) - 1, 0)

    while True:
        choices: list[tuple[str, int]] = [("source", i) for i in range(len(sources))
                                          if not ended[i]]
        choices += [("instance", p) for p in instances_ids if tbs[p].backlog(p) > 0]
        if not choices:
            break
        kind, which = rng.choice(choices)
        result.steps += 1
        started = time.process_time()
        if kind == "source":
            source_step(which)
        else:
            item = tbs[which].get(which)
            assert item is not None
            instances[which].process(item)
            if item.tuple is None and merge_outputs:
                downstream.add_watermark(instances[which].W, which)
        result.charge(f"{kind} {which}", started)
    while (out := downstream.get("D")) is not None:
        if out.tuple is not None:
            result.outputs.append(OutputTuple(out.tuple.ts, out.tuple.payload))
    result.writes = [w for p in instances_ids for w in stores[p].writes]
    return result
